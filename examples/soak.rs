//! Soak: many UNet runs on one handle through the C ABI, with the process's resident memory sampled
//! (figures, not assertions; CI runs a short form and fails only on an error, not on memory).
//!
//!   cargo run --release --example soak -- [--runs 10000] [--image models/samples/lesion_06.png]
//!
//! Prints RSS after warm-up and at 20 points, the drift from the warm-up sample to the end, and the
//! largest sample, so a leak per run shows as a slope.

use std::ffi::CString;
use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

use clap::Parser;
use segrt::engine::memory::resident_bytes;
use segrt::ffi::*;
use segrt::ffi::{SegPixelFormat, SegStatus};

#[derive(Parser)]
struct Args {
    /// Runs after the warm-up.
    #[arg(long, default_value_t = 10_000)]
    runs: usize,
    /// Runs before the first RSS sample (allocator arenas, ONNX Runtime caches).
    #[arg(long, default_value_t = 200)]
    warmup: usize,
    #[arg(long)]
    image: Option<PathBuf>,
    #[arg(long)]
    model: Option<PathBuf>,
    /// Each run creates a session from the model bytes, runs it once and frees it (a host that
    /// opens and closes models all day), instead of reusing one session.
    #[arg(long)]
    create_free: bool,
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let args = Args::parse();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let model = args.model.unwrap_or_else(|| repo.join("models/demo_unet.onnx"));
    let image = args.image.unwrap_or_else(|| repo.join("models/samples/lesion_06.png"));
    let img = image::open(&image).expect("image").to_rgb8();
    let (w, h) = (img.width() as usize, img.height() as usize);
    let desc = SegImage {
        data: img.as_raw().as_ptr(),
        width: w as i32,
        height: h as i32,
        stride: 0,
        format: SegPixelFormat::SEG_FORMAT_RGB24 as i32,
        plane1: ptr::null(),
        plane2: ptr::null(),
    };
    let mut mask = vec![0u8; w * h];
    let out = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };

    let path = CString::new(model.to_str().unwrap()).unwrap();
    let model_bytes = std::fs::read(&model).expect("model");
    let mut session = ptr::null_mut();
    let st = unsafe { seg_create(path.as_ptr(), ptr::null(), &mut session) };
    assert_eq!(st, SegStatus::SEG_OK, "seg_create failed");
    let create_free = args.create_free;
    let run = |n: usize| {
        for _ in 0..n {
            let mut s = session;
            if create_free {
                let st = unsafe { seg_create_from_memory(model_bytes.as_ptr(), model_bytes.len(), ptr::null(), &mut s) };
                assert_eq!(st, SegStatus::SEG_OK, "seg_create_from_memory failed");
            }
            let st = unsafe { seg_run_unet(s, &desc, &out, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) };
            assert_eq!(st, SegStatus::SEG_OK, "seg_run_unet failed");
            if create_free {
                assert_eq!(unsafe { seg_free(s) }, SegStatus::SEG_OK);
            }
        }
    };

    run(args.warmup);
    let start_rss = resident_bytes().unwrap_or(0);
    println!(
        "soak: {} runs of {} on a {w}x{h} image after {} warm-up runs{}",
        args.runs,
        model.display(),
        args.warmup,
        if create_free { ", each with its own seg_create_from_memory + seg_free" } else { " on one session" }
    );
    println!("{:>8} {:>10} {:>10}", "runs", "RSS MiB", "ms/run");
    println!("{:>8} {:>10.2} {:>10}", 0, mb(start_rss), "-");
    let steps = 20.min(args.runs.max(1));
    let (mut done, mut peak) = (0usize, start_rss);
    let started = Instant::now();
    let mut samples = Vec::new();
    for i in 1..=steps {
        let n = args.runs * i / steps - done;
        let t = Instant::now();
        run(n);
        done += n;
        let rss = resident_bytes().unwrap_or(0);
        peak = peak.max(rss);
        samples.push(rss);
        println!("{done:>8} {:>10.2} {:>10.2}", mb(rss), t.elapsed().as_secs_f64() * 1e3 / n.max(1) as f64);
    }
    let end_rss = *samples.last().unwrap_or(&start_rss);
    let middle = samples[samples.len() / 2];
    println!(
        "RSS after warm-up {:.2} MiB, middle {:.2} MiB, end {:.2} MiB, peak {:.2} MiB; drift start->end {:+.3} MiB over {} runs ({:.1} s)",
        mb(start_rss),
        mb(middle),
        mb(end_rss),
        mb(peak),
        (end_rss as f64 - start_rss as f64) / (1024.0 * 1024.0),
        done,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(unsafe { seg_free(session) }, SegStatus::SEG_OK);
}
