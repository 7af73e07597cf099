//! ONNX Runtime's working buffers through the C ABI: `SegOptions.arena` (a `SegArena`) takes its
//! three values and refuses others, reaches every pool (`seg_session_info` "releases_arena"), and
//! does what it says to the process's resident memory; freeing the last handle gives the arena
//! back whatever the policy. Under AUTO back-to-back encodes keep the arena and the idle timer gives
//! it back once (`segrt::engine::arena::releases` counts the releases); `seg_release_memory` gives it
//! back at the host's word while other threads run.
//!
//! The memory cases measure the process's resident memory, so each runs alone in a child process
//! (this test binary again, with `--exact <name>` and `SEGRT_ARENA_CHILD=<name>`), as
//! `tests/reliability2_c_abi.rs` does: `cargo test` runs a binary's tests as threads of one process.
//! Their model (`models/test/ort_huge_intermediate.onnx`) makes ONNX Runtime allocate two 256 MiB
//! tensors at a 128x128 input (the 1x1 convolution's output in its blocked layout and in NCHW) while
//! segrt's own buffers stay under 1 MiB: the margins below (150 and 200 MiB held or given back, 64
//! MiB left) are far from both.

mod common;

use std::process::Command;

use common::*;
use segrt::ffi::*;

const CHILD_ENV: &str = "SEGRT_ARENA_CHILD";

fn with_arena(arena: SegArena) -> SegOptions {
    let mut o = default_options();
    o.arena = arena as u32;
    o
}

fn sam2(options: &SegOptions) -> Result<Session, (SegStatus, String)> {
    create_sam2_with("sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx", Some(options))
}

#[test]
fn the_default_is_auto_and_an_unknown_value_is_refused_by_name() {
    assert_eq!(default_options().arena, SegArena::SEG_ARENA_AUTO as u32);
    let mut o = default_options();
    o.arena = 3;
    let (st, msg) = create(&model("demo_unet.onnx"), Some(&o)).err().expect("arena 3 is refused");
    assert_eq!(st, SegStatus::SEG_INVALID_ARGUMENT);
    assert!(msg.contains("SegArena") && msg.contains("SEG_ARENA_RELEASE=2"), "{msg}");
    o.arena = u32::MAX;
    assert_eq!(create(&model("demo_unet.onnx"), Some(&o)).err().expect("refused").0, SegStatus::SEG_INVALID_ARGUMENT);
}

#[test]
fn every_pool_reports_whether_its_runs_release_the_arena() {
    let releases = |v: &serde_json::Value| v["releases_arena"].as_bool().expect("releases_arena is reported");
    for (arena, unet_releases) in
        [(SegArena::SEG_ARENA_AUTO, false), (SegArena::SEG_ARENA_KEEP, false), (SegArena::SEG_ARENA_RELEASE, true)]
    {
        let s = create(&model("demo_unet.onnx"), Some(&with_arena(arena))).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(releases(&session_info(s.0)["pool"]), unet_releases, "UNet, {arena:?}");
    }
    // Auto: the image encoder's runs release, the decoder's clicks keep.
    for (arena, encoder, decoder) in
        [(SegArena::SEG_ARENA_AUTO, true, false), (SegArena::SEG_ARENA_KEEP, false, false), (SegArena::SEG_ARENA_RELEASE, true, true)]
    {
        let s = sam2(&with_arena(arena)).unwrap_or_else(|e| panic!("{e:?}"));
        let i = session_info(s.0);
        assert_eq!((releases(&i["encoder_pool"]), releases(&i["decoder_pool"])), (encoder, decoder), "SAM2, {arena:?}");
    }
}

/// In the parent: runs test `name` alone in a child process and asserts it passed. In the child:
/// `true` (run the body).
fn in_child(name: &str) -> bool {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        return true;
    }
    let out = Command::new(std::env::current_exe().expect("current_exe"))
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .output()
        .expect("start the child test process");
    print!("{}", String::from_utf8_lossy(&out.stdout));
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the child running {name} failed: {}", out.status);
    false
}

fn resident_mib() -> f64 {
    segrt::engine::memory::resident_bytes().expect("resident memory is measured on this system") as f64 / (1024.0 * 1024.0)
}

/// A UNet handle of the model with a 256 MiB intermediate at a 128x128 input, and a 128x128 image.
fn huge_intermediate(arena: SegArena) -> (Session, Vec<u8>) {
    let mut o = with_arena(arena);
    (o.input_width, o.input_height) = (128, 128);
    let s = create(&model("test/ort_huge_intermediate.onnx"), Some(&o)).unwrap_or_else(|e| panic!("{e:?}"));
    (s, vec![100u8; 128 * 128 * 3])
}

fn run_once(s: &Session, pixels: &[u8]) {
    run(s, &image_desc(pixels, 128, 128, 0, SegPixelFormat::SEG_FORMAT_RGB24)).unwrap_or_else(|e| panic!("{e:?}"));
}

#[test]
fn keep_holds_the_buffers_until_the_last_handle_goes_and_release_gives_them_back_at_once() {
    if !in_child("keep_holds_the_buffers_until_the_last_handle_goes_and_release_gives_them_back_at_once") {
        return;
    }
    // ONNX Runtime loaded and set up before the baseline.
    drop(huge_intermediate(SegArena::SEG_ARENA_KEEP));
    let base = resident_mib();

    let (kept, pixels) = huge_intermediate(SegArena::SEG_ARENA_KEEP);
    run_once(&kept, &pixels);
    let after_keep = resident_mib() - base;
    println!("KEEP: +{after_keep:.0} MiB after a run");
    assert!(after_keep > 150.0, "KEEP keeps the run's 256 MiB intermediate in the arena: +{after_keep:.0} MiB");

    drop(kept);
    let after_free = resident_mib() - base;
    println!("KEEP, then the last handle freed: +{after_free:.0} MiB");
    assert!(after_free < 64.0, "freeing the last handle gives the arena back: +{after_free:.0} MiB");

    let (released, pixels) = huge_intermediate(SegArena::SEG_ARENA_RELEASE);
    run_once(&released, &pixels);
    let after_release = resident_mib() - base;
    println!("RELEASE: +{after_release:.0} MiB after a run");
    // ONNX Runtime's ReduceMean keeps a buffer of its own the size of its input for the life of the
    // session (Python onnxruntime too: +265 MiB after this run with the arena shrunk), so RELEASE is
    // measured against KEEP: the arena's block of the other 256 MiB intermediate went back.
    assert!(
        after_keep - after_release > 200.0,
        "RELEASE gives the arena's blocks back: +{after_release:.0} MiB, KEEP +{after_keep:.0} MiB"
    );
    // And the handle still works after giving its buffers back.
    run_once(&released, &pixels);
}

#[test]
fn a_handle_kept_open_keeps_the_arena_for_the_others() {
    if !in_child("a_handle_kept_open_keeps_the_arena_for_the_others") {
        return;
    }
    drop(huge_intermediate(SegArena::SEG_ARENA_KEEP));
    let base = resident_mib();
    let (first, pixels) = huge_intermediate(SegArena::SEG_ARENA_KEEP);
    let (second, _) = huge_intermediate(SegArena::SEG_ARENA_KEEP);
    run_once(&first, &pixels);
    drop(first);
    // Another handle lives: the arena stays registered, and its kept block serves the next run.
    let after_first_freed = resident_mib() - base;
    run_once(&second, &pixels);
    let after_second_run = resident_mib() - base;
    println!("one of two handles freed: +{after_first_freed:.0} MiB; after the other's run: +{after_second_run:.0} MiB");
    assert!(after_first_freed > 150.0, "the arena is kept while a handle lives: +{after_first_freed:.0} MiB");
    assert!(after_second_run - after_first_freed < 64.0, "the kept block is reused, not doubled");
    drop(second);
    let after_all = resident_mib() - base;
    assert!(after_all < 64.0, "the last handle gives it back: +{after_all:.0} MiB");
}

/// One SAM2 encode of a 160x120 image (a new one: the handle's embedding is dropped first).
fn encode(s: &Session, pixels: &[u8]) {
    let desc = image_desc(pixels, 160, 120, 0, SegPixelFormat::SEG_FORMAT_RGB24);
    let mut ms = -1.0;
    assert_eq!(unsafe { seg_sam2_reset(s.0) }, SegStatus::SEG_OK);
    assert_eq!(unsafe { seg_sam2_set_image(s.0, &desc, &mut ms, std::ptr::null_mut()) }, SegStatus::SEG_OK, "{}", last_error());
    assert!(ms > 0.0, "the encoder ran");
}

fn photo() -> Vec<u8> {
    (0..160 * 120 * 3).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn back_to_back_encodes_under_auto_do_not_release_the_arena_between_them() {
    if !in_child("back_to_back_encodes_under_auto_do_not_release_the_arena_between_them") {
        return;
    }
    use segrt::engine::{arena, idle_release};
    // The idle timer cannot fire within this test: any release counted comes from the runs.
    idle_release::set_idle_delay(std::time::Duration::from_secs(600));
    let pixels = photo();
    let auto = sam2(&with_arena(SegArena::SEG_ARENA_AUTO)).unwrap_or_else(|e| panic!("{e:?}"));
    encode(&auto, &pixels);
    let before = arena::releases();
    for _ in 0..4 {
        encode(&auto, &pixels);
    }
    let after_auto = arena::releases();
    println!("AUTO: {} releases during 4 back-to-back encodes", after_auto - before);
    assert_eq!(after_auto, before, "AUTO keeps the arena between back-to-back encodes");
    // The counter sees releases: RELEASE gives the arena back after each encode.
    let release = sam2(&with_arena(SegArena::SEG_ARENA_RELEASE)).unwrap_or_else(|e| panic!("{e:?}"));
    for _ in 0..2 {
        encode(&release, &pixels);
    }
    println!("RELEASE: {} releases during 2 encodes", arena::releases() - after_auto);
    assert!(arena::releases() - after_auto >= 2, "RELEASE gives the arena back after each encode");
}

#[test]
fn the_idle_timer_releases_the_arena_once_after_the_last_encode() {
    if !in_child("the_idle_timer_releases_the_arena_once_after_the_last_encode") {
        return;
    }
    use segrt::engine::{arena, idle_release};
    use std::time::{Duration, Instant};
    let delay = Duration::from_secs(1);
    idle_release::set_idle_delay(delay);
    let pixels = photo();
    let auto = sam2(&with_arena(SegArena::SEG_ARENA_AUTO)).unwrap_or_else(|e| panic!("{e:?}"));
    let before = arena::releases();
    for _ in 0..3 {
        encode(&auto, &pixels);
    }
    // Waits for the release, however slow the machine: no figure of time is asserted.
    let waited = Instant::now();
    while arena::releases() == before {
        assert!(waited.elapsed() < Duration::from_secs(120), "no release 120 s after the last encode (idle delay {delay:?})");
        std::thread::sleep(Duration::from_millis(20));
    }
    let fired = arena::releases();
    println!("released {} time(s) after {:?} idle", fired - before, waited.elapsed());
    // Once: an idle process is not released again and again.
    std::thread::sleep(3 * delay);
    assert_eq!(arena::releases(), fired, "the timer fires once per idle period");
    // The handle works after it, and its next encode arms the timer again.
    encode(&auto, &pixels);
    let waited = Instant::now();
    while arena::releases() == fired {
        assert!(waited.elapsed() < Duration::from_secs(120), "no release after the next encode");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn seg_release_memory_gives_the_arena_back_while_other_threads_run() {
    if !in_child("seg_release_memory_gives_the_arena_back_while_other_threads_run") {
        return;
    }
    use segrt::engine::arena;
    use std::sync::atomic::{AtomicBool, Ordering};
    // Nothing held yet (ONNX Runtime not even loaded): still SEG_OK.
    assert_eq!(unsafe { seg_release_memory() }, SegStatus::SEG_OK);

    let pixels = photo();
    let unet = create(&model("demo_unet.onnx"), Some(&with_arena(SegArena::SEG_ARENA_KEEP))).unwrap_or_else(|e| panic!("{e:?}"));
    let sam = sam2(&with_arena(SegArena::SEG_ARENA_KEEP)).unwrap_or_else(|e| panic!("{e:?}"));
    let image = load_rgb(&samples()[0]);
    let reference = run_rgb(&unet, &image).mask;
    let stop = AtomicBool::new(false);
    let before = arena::releases();
    let (unet_runs, encodes) = std::thread::scope(|sc| {
        let unet_thread = sc.spawn(|| {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                assert_eq!(run_rgb(&unet, &image).mask, reference, "a UNet run beside seg_release_memory");
                n += 1;
            }
            n
        });
        let sam_thread = sc.spawn(|| {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                encode(&sam, &pixels);
                n += 1;
            }
            n
        });
        for _ in 0..20 {
            assert_eq!(unsafe { seg_release_memory() }, SegStatus::SEG_OK, "{}", last_error());
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        stop.store(true, Ordering::SeqCst);
        (unet_thread.join().unwrap(), sam_thread.join().unwrap())
    });
    println!("{} releases by 20 calls beside {unet_runs} UNet runs and {encodes} encodes on other threads", arena::releases() - before);
    assert!(arena::releases() - before >= 20, "each seg_release_memory released the arena");
    drop((unet, sam));

    // What it gives back: a KEEP handle's 256 MiB block.
    drop(huge_intermediate(SegArena::SEG_ARENA_KEEP));
    let base = resident_mib();
    let (kept, big) = huge_intermediate(SegArena::SEG_ARENA_KEEP);
    run_once(&kept, &big);
    let after_run = resident_mib() - base;
    assert_eq!(unsafe { seg_release_memory() }, SegStatus::SEG_OK);
    let after_release = resident_mib() - base;
    println!("KEEP: +{after_run:.0} MiB after a run, +{after_release:.0} MiB after seg_release_memory");
    // As for RELEASE above: ONNX Runtime's ReduceMean keeps its own buffer, the arena's block goes.
    assert!(after_run - after_release > 200.0, "seg_release_memory gives the arena's block back");
    run_once(&kept, &big);
}
