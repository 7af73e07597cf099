//! SAM2 tracking through a volume both ways from its middle slice, against a forward-only pass over
//! the same slices: time per slice and peak resident memory of each (figures, not assertions).
//!
//!   cargo run --release --example bench_volume -- [--models DIR] [--slices 200] [--size 512]
//!       [--keep-frames 8] [--threads N] [--pass forward|both|all]
//!
//! Defaults to the real-size hiera-tiny video modules with random weights that
//! `models/sam2/export_sam2_video.py --real-size models/sam2/real-size/video` writes (git-ignored).
//! The volume is synthesised: `--slices` signed 16-bit CT-like slices of `--size`² (air, a body
//! ellipse, an "organ" whose radius follows the slice), windowed 40 ± 200 HU by the intensity stage.
//! The track is a volume (`TrackerOptions::volume`: pixels kept, at most `--keep-frames` encodings).
//!
//! 1. forward: the organ clicked on slice 0, propagated forward over every slice;
//! 2. both ways: a fresh track, the organ clicked on the middle slice, propagated forward then in
//!    reverse from it (every slice once, the middle one twice).
//!
//! `--pass` runs one of them (default all: the ratio needs both, in one run).
//!
//! Each pass reports its seconds per slice and its peak RSS (VmHWM, reset between the passes through
//! /proc/self/clear_refs), then the time ratio both ways / forward, in one run.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use segrt::image::intensity::{window, Intensity};
use segrt::sam2::video::{Propagation, PropagationDirection, Tracker, TrackerOptions, VideoModel};
use segrt::{ImageView, Options, PixelFormat};

struct Args {
    models: PathBuf,
    slices: usize,
    size: usize,
    keep_frames: usize,
    threads: usize,
    pass: String,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        models: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/sam2/real-size/video"),
        slices: 200,
        size: 512,
        keep_frames: 8,
        threads: 0,
        pass: "all".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let num = |v: String| v.parse::<usize>().map_err(|_| format!("{flag}: '{v}' is not a whole number"));
        match flag.as_str() {
            "--models" => a.models = PathBuf::from(value()?),
            "--slices" => a.slices = num(value()?)?,
            "--size" => a.size = num(value()?)?,
            "--keep-frames" => a.keep_frames = num(value()?)?,
            "--threads" => a.threads = num(value()?)?,
            "--pass" => a.pass = value()?,
            _ => return Err(format!("unknown argument '{flag}' (see the top of examples/bench_volume.rs)")),
        }
    }
    if !matches!(a.pass.as_str(), "forward" | "both" | "all") {
        return Err(format!("--pass {}: forward, both or all", a.pass));
    }
    if a.slices < 3 || a.size < 32 || a.keep_frames == 0 {
        return Err("--slices at least 3, --size at least 32, --keep-frames at least 1".into());
    }
    Ok(a)
}

/// The organ's radius on slice `k` of `n` (0 beyond its ends), in pixels of a `size`² slice.
fn organ_radius(k: usize, n: usize, size: usize) -> f64 {
    let z = (k as f64 / (n - 1) as f64 - 0.5) * 2.0; // -1 .. 1
    (size as f64 * 0.12 * (1.0 - z * z * 0.8).max(0.0).sqrt()).max(4.0)
}

/// Slice `k`: Hounsfield units as i16 (air -1000, soft tissue 40 with texture, the organ 90).
fn slice(k: usize, n: usize, size: usize) -> Vec<i16> {
    let c = size as f64 / 2.0;
    let r = organ_radius(k, n, size);
    let mut hu = vec![-1000i16; size * size];
    for (i, v) in hu.iter_mut().enumerate() {
        let (x, y) = ((i % size) as f64, (i / size) as f64);
        let body = ((x - c) / (c * 0.85)).powi(2) + ((y - c) / (c * 0.65)).powi(2) <= 1.0;
        if body {
            let texture = (((i % size) * 7 + (i / size) * 13 + k * 3) % 17) as i16 - 8;
            let organ = (x - c * 1.1).powi(2) + (y - c * 0.95).powi(2) <= r * r;
            *v = if organ { 90 } else { 40 } + texture;
        }
    }
    hu
}

fn hwm_mib() -> f64 {
    status_kib("VmHWM:") / 1024.0
}

fn status_kib(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0.0)
}

/// Resets VmHWM to the current RSS (Linux: "5" to /proc/self/clear_refs).
fn reset_peak() {
    // What the previous pass freed goes back to the system first (glibc keeps it otherwise).
    segrt::engine::arena::trim_malloc();
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

struct Pass {
    seconds: f64,
    frames: usize,
    peak_mib: f64,
    held_frames: usize,
    present: usize,
}

fn run_pass(model: &Arc<VideoModel>, a: &Args, click_slice: usize, direction: PropagationDirection) -> Result<Pass, String> {
    reset_peak();
    let options = TrackerOptions { num_frames: Some(a.slices), keep_frames: Some(a.keep_frames), volume: true, ..Default::default() };
    let mut tracker = Tracker::new(model.clone(), options).map_err(|e| e.to_string())?;
    let start = Instant::now();
    for k in 0..a.slices {
        let hu = slice(k, a.slices, a.size);
        let bytes: Vec<u8> = hu.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = ImageView::new(&bytes, a.size, a.size, 0, PixelFormat::Gray16S).map_err(|e| e.to_string())?;
        tracker.add_frame(&view).map_err(|e| e.to_string())?;
    }
    let c = a.size as f32 / 2.0;
    tracker.add_points(click_slice, 1, &[[c * 1.1, c * 0.95]], &[1]).map_err(|e| e.to_string())?;
    let (mut frames, mut present) = (0, 0);
    let request = Propagation { direction, ..Default::default() };
    tracker
        .propagate_with(request, |_, fm| {
            frames += 1;
            present += fm.objects.iter().filter(|o| o.present).count();
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    Ok(Pass { seconds: start.elapsed().as_secs_f64(), frames, peak_mib: hwm_mib(), held_frames: tracker.held_frames().len(), present })
}

fn main() {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bench_volume: {e}");
            std::process::exit(2);
        }
    };
    let options = Options { intra_threads: a.threads, ..Options::default() };
    let model = match VideoModel::from_dir(&a.models, options) {
        Ok(m) => Arc::new(m),
        Err(e) => {
            eprintln!("bench_volume: {}: {e}", a.models.display());
            std::process::exit(1);
        }
    };
    model.core().set_intensity(Some(Intensity { range: window(40.0, 400.0), ..Intensity::default() })).expect("a valid window");
    println!(
        "bench_volume: {} slices of {}x{} int16 (window 40,400), keep_frames {}, modules {}, {} logical CPUs",
        a.slices,
        a.size,
        a.size,
        a.keep_frames,
        a.models.display(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let passes = [
        ("forward from slice 0", 0, PropagationDirection::Forward),
        ("both ways from the middle", a.slices / 2, PropagationDirection::BothWays),
    ];
    let mut results = Vec::new();
    let wanted = |d: PropagationDirection| a.pass == "all" || (a.pass == "both") == (d == PropagationDirection::BothWays);
    for (what, click, direction) in passes.into_iter().filter(|p| wanted(p.2)) {
        match run_pass(&model, &a, click, direction) {
            Ok(p) => {
                println!(
                    "  {what:<26} {:>4} frames in {:>7.1} s: {:.3} s/slice ({:.3} s/frame), peak RSS {:.0} MiB, encodings held {}, present on {} frames",
                    p.frames,
                    p.seconds,
                    p.seconds / a.slices as f64,
                    p.seconds / p.frames as f64,
                    p.peak_mib,
                    p.held_frames,
                    p.present
                );
                results.push(p);
            }
            Err(e) => {
                eprintln!("bench_volume: {what}: {e}");
                std::process::exit(1);
            }
        }
    }
    if let [forward, both] = &results[..] {
        println!(
            "  both ways / forward: time {:.2}x (goal <= 1.3x), peak RSS {:.0} MiB (goal < 2048 MiB)",
            both.seconds / forward.seconds,
            both.peak_mib
        );
    }
}
