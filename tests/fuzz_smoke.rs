//! The fuzz harnesses (fuzz/harness/, the same code cargo fuzz runs) driven by a seeded random
//! generator through `arbitrary` for a bounded time: the short form of fuzzing that CI runs. It is
//! not coverage-guided (that is `scripts/fuzz.sh`, libFuzzer + AddressSanitizer), but it puts the
//! same kinds of hostile input through the C ABI on every change, and replays every saved crash
//! input in fuzz/regressions/<target>/.
//!
//! `SEGRT_FUZZ_SMOKE_SECS` sets the time per target (default 8).

#[path = "../fuzz/harness/image_descriptor.rs"]
mod image_descriptor;
#[path = "../fuzz/harness/model_bytes.rs"]
mod model_bytes;
#[path = "../fuzz/harness/options_struct.rs"]
mod options_struct;
#[path = "../fuzz/harness/paths.rs"]
mod paths;
#[path = "../fuzz/harness/sam2_everything.rs"]
mod sam2_everything;
#[path = "../fuzz/harness/sam2_many.rs"]
mod sam2_many;
#[path = "../fuzz/harness/sam2_prompts.rs"]
mod sam2_prompts;
#[path = "../fuzz/harness/sam2_track.rs"]
mod sam2_track;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Unstructured};
#[cfg(feature = "fault-injection")]
use segrt::ffi::SegPixelFormat;

fn budget() -> Duration {
    Duration::from_secs_f64(std::env::var("SEGRT_FUZZ_SMOKE_SECS").ok().and_then(|v| v.parse().ok()).unwrap_or(8.0))
}

/// xorshift64*: reproducible inputs without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bytes(&mut self, max_len: usize) -> Vec<u8> {
        let len = (self.next() as usize) % (max_len + 1);
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn regressions(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect()).unwrap_or_default();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// Replays the saved inputs, then feeds random ones until the time is up; returns (replayed, random).
fn drive<T: for<'a> Arbitrary<'a>>(target: &str, seed: u64, run: fn(T)) -> (usize, usize) {
    let saved = regressions(target);
    for data in &saved {
        // cargo fuzz builds a target's input with arbitrary_take_rest.
        if let Ok(input) = T::arbitrary_take_rest(Unstructured::new(data)) {
            run(input);
        }
    }
    let (mut rng, start, mut n) = (Rng(seed), Instant::now(), 0);
    while start.elapsed() < budget() {
        let data = rng.bytes(256);
        if let Ok(input) = T::arbitrary_take_rest(Unstructured::new(&data)) {
            run(input);
            n += 1;
        }
    }
    (saved.len(), n)
}

#[test]
fn image_descriptors() {
    let (saved, n) = drive("image_descriptor", 0x5E6A_0001, image_descriptor::run);
    let wide = image_descriptor::WIDE_OK.load(std::sync::atomic::Ordering::Relaxed);
    println!("image_descriptor: {saved} saved inputs replayed, {n} random inputs, {wide} masks from 16-bit or float images");
}

#[test]
fn sam2_prompts() {
    let (saved, n) = drive("sam2_prompts", 0x5E6A_0002, sam2_prompts::run);
    println!("sam2_prompts: {saved} saved inputs replayed, {n} random inputs");
}

#[test]
fn sam2_many_prompts() {
    let (saved, n) = drive("sam2_many", 0x5E6A_0007, sam2_many::run);
    let ok = sam2_many::SUCCEEDED.load(std::sync::atomic::Ordering::Relaxed);
    println!("sam2_many: {saved} saved inputs replayed, {n} random inputs, {ok} calls succeeded");
}

#[test]
fn sam2_everything() {
    let (saved, n) = drive("sam2_everything", 0x5E6A_0005, sam2_everything::run);
    let ok = sam2_everything::SUCCEEDED.load(std::sync::atomic::Ordering::Relaxed);
    println!("sam2_everything: {saved} saved inputs replayed, {n} random inputs, {ok} calls succeeded");
}

#[test]
fn sam2_track_calls() {
    let (saved, n) = drive("sam2_track", 0x5E6A_0006, sam2_track::run);
    let ok = sam2_track::SUCCEEDED.load(std::sync::atomic::Ordering::Relaxed);
    println!("sam2_track: {saved} saved inputs replayed, {n} random inputs, {ok} prompt/track calls succeeded");
}

#[test]
fn options_structs() {
    let (saved, n) = drive("options_struct", 0x5E6A_0003, options_struct::run);
    println!("options_struct: {saved} saved inputs replayed, {n} random inputs");
}

#[test]
fn model_bytes() {
    let saved = regressions("model_bytes");
    for data in &saved {
        model_bytes::run(data);
    }
    // Random bytes are refused at once; mutated real models reach further into the parser.
    let seeds: Vec<Vec<u8>> = ["test/not_segmentation.onnx", "test/unet_dynamic.onnx", "sam2/sam2_oracle_decoder.onnx"]
        .iter()
        .map(|m| std::fs::read(paths::model_path(m)).unwrap())
        .collect();
    let (mut rng, start, mut n) = (Rng(0x5E6A_0004), Instant::now(), 0);
    while start.elapsed() < budget() {
        let mut data = seeds[(rng.next() as usize) % seeds.len()].clone();
        match rng.next() % 3 {
            0 => data.truncate((rng.next() as usize) % (data.len() + 1)),
            1 => {
                for _ in 0..1 + rng.next() % 8 {
                    let i = (rng.next() as usize) % data.len();
                    data[i] ^= 1 << (rng.next() % 8);
                }
            }
            _ => data = rng.bytes(512),
        }
        model_bytes::run(&data);
        n += 1;
    }
    println!("model_bytes: {} saved inputs replayed, {n} mutated inputs", saved.len());
}

/// The harnesses must be able to fail: a panic inside segrt is caught at the boundary and returned
/// as `SEG_PANIC` (the host survives), and every harness turns that status into a failure. Here the
/// fault-injection build panics inside a UNet run; the image-descriptor harness must notice.
#[cfg(feature = "fault-injection")]
#[test]
fn a_panic_inside_segrt_fails_the_harness() {
    let input = image_descriptor::Input {
        width: 40,
        height: 30,
        stride: 0,
        format: SegPixelFormat::SEG_FORMAT_BGR24 as i32,
        planar: false,
        mask_width_delta: 0,
        mask_stride: 0,
        want_probability: false,
        fill: 100,
        cancel_at: None,
        intensity: None,
        shape: None,
        pattern: Vec::new(),
    };
    std::env::set_var("SEGRT_INJECT_PANIC", "1");
    let caught = std::panic::catch_unwind(|| image_descriptor::run(input));
    std::env::remove_var("SEGRT_INJECT_PANIC");
    let message = caught.expect_err("the harness let SEG_PANIC pass");
    let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("SEG_PANIC") && text.contains("injected panic"), "{text}");
}
