//! SAM2 video tracking per frame, split by module, and the memory it holds (figures, not
//! assertions):
//!
//!   cargo run --release --example bench_track -- [--models DIR] [--frames 100] [--width 1280 --height 720]
//!       [--dir FOLDER] [--objects 1|2] [--keep-frames K|all] [--warmup 3] [--threads N] [--json OUT]
//!
//! Defaults to the real-size hiera-tiny video modules with random weights that
//! `models/sam2/export_sam2_video.py --real-size models/sam2/real-size/video` writes (git-ignored).
//! Frames are synthesised (a textured gradient, a moving and deforming ellipse, a growing square;
//! deterministic, the same formulas as `models/sam2/bench_video_ort.py`) or, with `--dir`, read from a
//! folder (image files sorted by name). Object 1 (the ellipse) is clicked on frame 0, and with
//! `--objects 2` object 2 (the square); then each frame is streamed: `add_frame` + `track_frame`.
//! With `--dir` the clicks fall where the synthetic objects' centres would be (a timing click, not a
//! chosen object).
//! `--keep-frames` defaults to the model's `num_maskmem` (memory bounded); `all` keeps every frame,
//! as the official predictor does, for contrast.
//!
//! Prints the median and mean per frame of each module (`Tracker::timings`) after the warm-up frames,
//! the whole frame (add_frame + clicks + track_frame), and at frames 10, 25, 50, 100 (and the last)
//! the process RSS, the frames whose encoder outputs are held and the per-frame outputs in the bank.
//! `--json OUT` writes the same figures (and the RSS after every frame) for `scripts/bench_track.sh`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use segrt::sam2::video::{ModuleTimes, Tracker, TrackerOptions, VideoModel};
use segrt::{ImageView, Options, PixelFormat};

struct Args {
    models: PathBuf,
    frames: usize,
    width: usize,
    height: usize,
    dir: Option<PathBuf>,
    objects: usize,
    keep_frames: Option<Option<usize>>,
    warmup: usize,
    threads: usize,
    json: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        models: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/sam2/real-size/video"),
        frames: 100,
        width: 1280,
        height: 720,
        dir: None,
        objects: 1,
        keep_frames: None,
        warmup: 3,
        threads: 0,
        json: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let num = |v: String| v.parse::<usize>().map_err(|_| format!("{flag}: '{v}' is not a whole number"));
        match flag.as_str() {
            "--models" => a.models = PathBuf::from(value()?),
            "--frames" => a.frames = num(value()?)?,
            "--width" => a.width = num(value()?)?,
            "--height" => a.height = num(value()?)?,
            "--dir" => a.dir = Some(PathBuf::from(value()?)),
            "--objects" => a.objects = num(value()?)?,
            "--keep-frames" => {
                let v = value()?;
                a.keep_frames = Some(if v == "all" { None } else { Some(num(v)?) });
            }
            "--warmup" => a.warmup = num(value()?)?,
            "--threads" => a.threads = num(value()?)?,
            "--json" => a.json = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument '{flag}' (see the top of examples/bench_track.rs)")),
        }
    }
    if !(1..=2).contains(&a.objects) {
        return Err("--objects is 1 or 2".into());
    }
    if a.frames == 0 || a.width < 16 || a.height < 16 {
        return Err("--frames must be at least 1, --width and --height at least 16".into());
    }
    Ok(a)
}

/// Object 1: an ellipse moving right and changing shape. (centre x, centre y, radius x, radius y).
fn ellipse(t: usize, n: usize, w: f64, h: f64) -> (f64, f64, f64, f64) {
    let (t, n) = (t as f64, n.max(2) as f64);
    let cx = w * (0.2 + 0.4 * t / (n - 1.0));
    let cy = h * (0.5 + 0.1 * (0.15 * t).sin());
    (cx, cy, w * 0.09 * (1.0 + 0.25 * (0.2 * t).sin()), h * 0.14 * (1.0 + 0.25 * (0.17 * t).cos()))
}

/// Object 2: a square moving down-left and growing. (centre x, centre y, half side).
fn square(t: usize, n: usize, w: f64, h: f64) -> (f64, f64, f64) {
    let (t, n) = (t as f64, n.max(2) as f64);
    let f = t / (n - 1.0);
    (w * (0.8 - 0.2 * f), h * (0.25 + 0.3 * f), h * (0.08 + 0.04 * f))
}

/// Frame `t` of `n`: RGB24, `w` x `h`.
fn synth_frame(t: usize, n: usize, w: usize, h: usize) -> Vec<u8> {
    let (ex, ey, ea, eb) = ellipse(t, n, w as f64, h as f64);
    let (sx, sy, sh) = square(t, n, w as f64, h as f64);
    let mut rgb = vec![0u8; w * h * 3];
    for (i, px) in rgb.chunks_exact_mut(3).enumerate() {
        let (x, y) = (i % w, i / w);
        let (xf, yf) = (x as f64, y as f64);
        let c = if ((xf - ex) / ea).powi(2) + ((yf - ey) / eb).powi(2) <= 1.0 {
            [220, 60, 40]
        } else if (xf - sx).abs() <= sh && (yf - sy).abs() <= sh {
            [40, 200, 80]
        } else {
            // gradient + 32 px checker + fine integer noise
            let noise = ((x * 7 + y * 13) ^ (x * y)) & 15;
            let checker = if (x / 32 + y / 32) % 2 == 0 { 25 } else { 0 };
            [60 + x * 120 / w + checker + noise, 80 + y * 100 / h + checker + noise, 110 + checker + noise]
        };
        for (p, v) in px.iter_mut().zip(c) {
            *p = v.min(255) as u8;
        }
    }
    rgb
}

/// (x, y) clicks on frame 0 for objects 1 and 2 (their centres).
fn clicks(n: usize, w: usize, h: usize) -> [[f32; 2]; 2] {
    let (ex, ey, _, _) = ellipse(0, n, w as f64, h as f64);
    let (sx, sy, _) = square(0, n, w as f64, h as f64);
    [[ex as f32, ey as f32], [sx as f32, sy as f32]]
}

fn read_folder(dir: &Path) -> Result<Vec<PathBuf>, String> {
    const EXT: [&str; 7] = ["png", "jpg", "jpeg", "bmp", "tif", "tiff", "ppm"];
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|e| e.to_str()).is_some_and(|e| EXT.contains(&e.to_ascii_lowercase().as_str())))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{}: no image files", dir.display()));
    }
    Ok(files)
}

/// The process's resident set (VmRSS), in MiB; 0 where /proc is missing.
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok());
    kb.unwrap_or(0.0) / 1024.0
}

const MODULES: [&str; 8] =
    ["preprocess", "image_encoder", "memory_attention", "mask_decoder", "memory_encoder", "postprocess", "other", "total"];

/// Per-frame figures in the order of `MODULES`.
fn row(d: &ModuleTimes, total: f64) -> [f64; 8] {
    let m = [d.preprocess_ms, d.image_encoder_ms, d.memory_attention_ms, d.mask_decoder_ms, d.memory_encoder_ms, d.postprocess_ms];
    let other = total - m.iter().sum::<f64>();
    [m[0], m[1], m[2], m[3], m[4], m[5], other, total]
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_track: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    if !args.models.join("video_metadata.json").exists() {
        return Err(format!(
            "{} has no video_metadata.json: generate it with `python models/sam2/export_sam2_video.py --real-size models/sam2/real-size/video` (needs PyTorch)",
            args.models.display()
        )
        .into());
    }
    let files = match &args.dir {
        Some(d) => Some(read_folder(d)?),
        None => None,
    };
    let n = files.as_ref().map_or(args.frames, |f| f.len().min(args.frames));

    let t = Instant::now();
    let options = Options { intra_threads: args.threads, ..Options::default() };
    let model = Arc::new(VideoModel::from_dir(&args.models, options)?);
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let meta = model.metadata().clone();
    let keep = args.keep_frames.unwrap_or(Some(meta.num_maskmem));
    let mut tracker = Tracker::new(model, TrackerOptions { num_frames: None, keep_frames: keep, ..Default::default() })?;
    let rss_loaded = rss_mib();

    let source = match &args.dir {
        Some(d) => format!("from {}", d.display()),
        None => format!("synthetic {}x{}", args.width, args.height),
    };
    println!(
        "bench_track: {} (image {}, num_maskmem {}), {n} frames {source}, {} object(s), keep_frames {}, intra threads {}",
        args.models.display(),
        meta.image_size,
        meta.num_maskmem,
        args.objects,
        keep.map_or("all".to_string(), |k| k.to_string()),
        if args.threads == 0 { "segrt default (ONNX Runtime's global pool)".to_string() } else { args.threads.to_string() }
    );
    println!("modules loaded in {load_ms:.0} ms, RSS {rss_loaded:.0} MiB");

    let checkpoints = [10, 25, 50, 100];
    let mut rows: Vec<[f64; 8]> = Vec::with_capacity(n);
    let mut memory: Vec<(usize, f64, usize, usize)> = Vec::new();
    let mut rss_per_frame = Vec::with_capacity(n);
    let mut present = [0usize; 2];
    for t in 0..n {
        let (rgb, w, h) = match &files {
            Some(f) => {
                let img = image::open(&f[t]).map_err(|e| format!("{}: {e}", f[t].display()))?.to_rgb8();
                let (w, h) = (img.width() as usize, img.height() as usize);
                (img.into_raw(), w, h)
            }
            None => (synth_frame(t, n, args.width, args.height), args.width, args.height),
        };
        let view = ImageView::new(&rgb, w, h, 0, PixelFormat::Rgb24)?;
        let before = tracker.timings();
        let start = Instant::now();
        let index = tracker.add_frame(&view)?;
        if index == 0 {
            for (k, p) in clicks(n, w, h).iter().take(args.objects).enumerate() {
                tracker.add_points(0, k as i32 + 1, &[*p], &[1])?;
            }
        }
        let masks = tracker.track_frame(index)?;
        let total = start.elapsed().as_secs_f64() * 1e3;
        rows.push(row(&tracker.timings().since(&before), total));
        for (k, o) in masks.objects.iter().enumerate().take(2) {
            present[k] += o.present as usize;
        }
        rss_per_frame.push(rss_mib());
        let done = t + 1;
        if checkpoints.contains(&done) || done == n {
            memory.push((done, rss_mib(), tracker.held_frames().len(), tracker.held_outputs()));
        }
    }

    let measured = &rows[args.warmup.min(n - 1)..];
    println!("per frame, frames {}..{} ({} frames after {} warm-up):", n - measured.len(), n - 1, measured.len(), n - measured.len());
    println!("  {:<18} {:>10} {:>10}", "module", "median ms", "mean ms");
    let mut summary = Vec::new();
    for (i, name) in MODULES.iter().enumerate() {
        let mut v: Vec<f64> = measured.iter().map(|r| r[i]).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let med = median(&mut v);
        println!("  {name:<18} {med:>10.1} {mean:>10.1}");
        summary.push((med, mean));
    }
    println!(
        "objects present: {} of {n} frames (object 1){}",
        present[0],
        if args.objects == 2 { format!(", {} of {n} (object 2)", present[1]) } else { String::new() }
    );
    println!("memory (RSS after loading: {rss_loaded:.0} MiB):");
    println!("  {:>6} {:>9} {:>12} {:>13}", "frame", "RSS MiB", "held frames", "held outputs");
    for (f, rss, frames, outputs) in &memory {
        println!("  {f:>6} {rss:>9.0} {frames:>12} {outputs:>13}");
    }

    if let Some(path) = &args.json {
        let per_frame: serde_json::Map<String, serde_json::Value> = MODULES
            .iter()
            .zip(&summary)
            .map(|(name, (med, mean))| (name.to_string(), serde_json::json!({"median": med, "mean": mean})))
            .collect();
        let memory: Vec<_> = memory
            .iter()
            .map(|(f, rss, fr, out)| serde_json::json!({"frame": f, "rss_mib": rss, "held_frames": fr, "held_outputs": out}))
            .collect();
        let json = serde_json::json!({
            "side": "segrt", "frames": n, "objects": args.objects, "keep_frames": keep, "warmup": n - measured.len(),
            "load_ms": load_ms, "rss_loaded_mib": rss_loaded, "per_frame_ms": per_frame, "memory": memory,
            "rss_per_frame_mib": rss_per_frame,
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
