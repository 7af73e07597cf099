//! UNet overhead, measured in one process on one 1920x1080 BGR frame (figures, not assertions):
//!
//!   cargo run --release --example bench_unet -- [MODEL.onnx ...] [--iters N] [--python PATH] [--no-tiling]
//!
//! Defaults to the demo model plus the real-size base-32 (fp32, fp16) and base-64 UNets at 512x512 that
//! `models/make_bench_models.py` writes into models/generated/ (git-ignored; needs PyTorch).
//! For each model: the stages of `UnetSegmenter::segment` (pre-processing, ONNX Runtime run,
//! post-processing), the whole call through the C ABI, and a bare `session.run` of the same model on
//! the already-prepared tensor; ratios from medians. With a Python that has OpenCV
//! (`benches/prepost_cv2.py`), the usual cv2 + numpy pre/post-processing is timed on the same image.
//! Last, tiled inference on a 5000x4000 frame in megapixels per second.

use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

use ort::session::Session;
use segrt::ffi::*;
use segrt::image::tensor::{prepare, Fit, Normalisation, Preprocessor};
use segrt::options::{ResizeFilter, TileMode};
use segrt::{ImageView, Options, PixelFormat, UnetSegmenter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let iters: usize = value("--iters").and_then(|v| v.parse().ok()).unwrap_or(20);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = value("--python").map(PathBuf::from).unwrap_or_else(|| repo.join(".venv/bin/python"));
    let mut models: Vec<PathBuf> = args.iter().filter(|a| a.ends_with(".onnx")).map(PathBuf::from).collect();
    if models.is_empty() {
        models.push(repo.join("models/demo_unet.onnx"));
        for name in ["unet_base32_512.onnx", "unet_base32_512_fp16.onnx", "unet_base64_512.onnx"] {
            let p = repo.join("models/generated").join(name);
            if p.exists() {
                models.push(p);
            } else {
                eprintln!("({} not found: `python models/make_bench_models.py` makes it; needs PyTorch)", p.display());
            }
        }
    }

    // A 1920x1080 BGR frame: a bundled sample scaled up, so the model sees real structure.
    let (w, h) = (1920u32, 1080u32);
    let sample =
        image::open(repo.join("models/samples/lesion_05.png"))?.resize_exact(w, h, image::imageops::FilterType::Triangle).to_rgb8();
    let frame_png = std::env::temp_dir().join("segrt-bench-frame.png");
    sample.save(&frame_png)?;
    let bgr: Vec<u8> = sample.pixels().flat_map(|p| [p[2], p[1], p[0]]).collect();
    let (w, h) = (w as usize, h as usize);
    let view = ImageView::new(&bgr, w, h, 0, PixelFormat::Bgr24)?;
    println!("frame {w}x{h} BGR24, {iters} iterations per figure, medians; ONNX Runtime threads: its default (one per physical core)");

    for model in &models {
        let seg = UnetSegmenter::from_file(model, Options::default())?;
        let size = seg.spec().model_size((w, h), seg.options());
        for _ in 0..3 {
            seg.segment(&view, false)?;
        }
        let (mut wall, mut pre, mut run, mut post) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..iters {
            let t = Instant::now();
            let stats = seg.segment(&view, false)?.run.stats;
            wall.push(ms(t));
            pre.push(stats.preprocess_ms);
            run.push(stats.inference_ms);
            post.push(stats.postprocess_ms);
        }

        // The whole call through the C ABI, as a host makes it, and a bare `session.run` of the same
        // model on the already-prepared tensor, measured in alternating blocks so both see the same
        // machine (these cores are shared: a slow spell hits both alike).
        let path = std::ffi::CString::new(model.to_str().unwrap())?;
        let mut handle = ptr::null_mut();
        assert_eq!(unsafe { seg_create(path.as_ptr(), ptr::null(), &mut handle) }, SegStatus::SEG_OK);
        let image = SegImage {
            data: bgr.as_ptr(),
            width: w as i32,
            height: h as i32,
            stride: 0,
            format: SegPixelFormat::SEG_FORMAT_BGR24 as i32,
            plane1: ptr::null(),
            plane2: ptr::null(),
        };
        let mut mask = vec![0u8; w * h];
        let out = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
        let env = segrt::runtime::environment(None)?;
        let mut session = Session::builder(env)?.commit_from_file(model)?;
        let tensor = prepare(&view, &seg.spec().tensor_format(), size, &Normalisation::from(seg.options()), Fit::Resize)?;
        let shape = seg.spec().input_shape(size.0, size.1).to_vec();
        let bare_run = |session: &mut Session| -> Result<f64, Box<dyn std::error::Error>> {
            let input = tensor.input(shape.clone())?;
            let t = Instant::now();
            let outputs = session.run(ort::inputs![seg.spec().input_name.as_str() => input])?;
            let elapsed = ms(t);
            drop(outputs);
            Ok(elapsed)
        };
        for _ in 0..3 {
            unsafe { seg_run_unet(handle, &image, &out, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) };
            bare_run(&mut session)?;
        }
        let (mut ffi, mut bare) = (Vec::new(), Vec::new());
        const BLOCK: usize = 5;
        for _ in 0..iters.div_ceil(BLOCK) {
            for _ in 0..BLOCK {
                let t = Instant::now();
                assert_eq!(
                    unsafe { seg_run_unet(handle, &image, &out, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) },
                    SegStatus::SEG_OK
                );
                ffi.push(ms(t));
            }
            for _ in 0..BLOCK {
                bare.push(bare_run(&mut session)?);
            }
        }
        unsafe { seg_free(handle) };

        // Pre-processing with OpenCV's kind of bilinear (no antialiasing), for the like-for-like figure.
        let no_aa = Options { resize_filter: ResizeFilter::BilinearNoAntialias, ..Options::default() };
        let mut pre_no_aa = Vec::new();
        let mut preprocessor = Preprocessor::default();
        for _ in 0..iters {
            let t = Instant::now();
            preprocessor.prepare(&view, &seg.spec().tensor_format(), size, &no_aa, None)?;
            pre_no_aa.push(ms(t));
        }

        let (wall, pre, run, post, ffi, bare, pre_no_aa) = (
            median(&mut wall),
            median(&mut pre),
            median(&mut run),
            median(&mut post),
            median(&mut ffi),
            median(&mut bare),
            median(&mut pre_no_aa),
        );
        let name = model.file_name().unwrap().to_string_lossy();
        println!("\n{name} at {}x{}:", size.0, size.1);
        println!("  segrt stages: pre-processing {pre:.2} ms | ONNX Runtime run {run:.2} ms | post-processing {post:.2} ms");
        println!("  UnetSegmenter::segment {wall:.2} ms; through the C ABI (seg_run_unet, mask only) {ffi:.2} ms; bare session.run {bare:.2} ms (alternating blocks of {BLOCK})");
        println!(
            "  ratio end-to-end (C ABI) / bare run: {:.3}   (goal: <= 1.02 on a base-32 UNet at 512, <= 1.15 on the demo model)",
            ffi / bare
        );
        println!("  pre-processing with SEG_RESIZE_BILINEAR_NO_ANTIALIAS (OpenCV INTER_LINEAR's kind): {pre_no_aa:.2} ms");
        match cv2_prepost(&python, &frame_png, size, iters) {
            Some((cv_pre, cv_pre_area, cv_post)) => {
                println!("  Python cv2 + numpy: pre {cv_pre:.2} ms (INTER_LINEAR), {cv_pre_area:.2} ms (INTER_AREA); post {cv_post:.2} ms");
                println!(
                    "  ratio segrt (pre+post) / cv2 (pre+post), like for like: {:.3} (no-antialias vs INTER_LINEAR), {:.3} (antialiased: BILINEAR vs INTER_AREA)   (goal <= 0.5)",
                    (pre_no_aa + post) / (cv_pre + cv_post),
                    (pre + post) / (cv_pre_area + cv_post)
                );
                println!("  ratio segrt default (BILINEAR, antialiased) / cv2 INTER_LINEAR: {:.3}", (pre + post) / (cv_pre + cv_post));
            }
            None => println!(
                "  (no Python with OpenCV at {}: `{} -m pip install opencv-python-headless numpy` for the cv2 comparison)",
                python.display(),
                python.display()
            ),
        }
    }

    if !args.iter().any(|a| a == "--no-tiling") {
        tiling_throughput(&repo)?;
    }
    Ok(())
}

/// Tiled inference on a 5000x4000 frame: megapixels per second, one tile per run (fixed 256x256
/// demo model) and four per run (the same weights with a dynamic batch axis).
fn tiling_throughput(repo: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let (w, h) = (5000u32, 4000u32);
    let frame = image::open(repo.join("models/samples/lesion_02.png"))?.resize_exact(w, h, image::imageops::FilterType::Triangle).to_rgb8();
    let view = ImageView::new(frame.as_raw(), w as usize, h as usize, 0, PixelFormat::Rgb24)?;
    println!("\ntiled inference, {w}x{h} RGB ({:.0} MP), 256x256 tiles, 64-pixel overlap:", (w * h) as f64 / 1e6);
    for (model, batch) in [("models/demo_unet.onnx", 1usize), ("models/test/unet_dynamic.onnx", 4)] {
        let options = Options { tile_mode: TileMode::On, tile_size: Some((256, 256)), tile_batch: batch, ..Options::default() };
        let seg = UnetSegmenter::from_file(&repo.join(model), options)?;
        seg.segment(&view, false)?; // warm-up
        let t = Instant::now();
        let stats = seg.segment(&view, false)?.run.stats;
        let secs = t.elapsed().as_secs_f64();
        println!(
            "  {model}, {batch} tile(s) per run: {} tiles in {:.2} s = {:.2} MP/s (pre {:.0} ms, ONNX Runtime {:.0} ms, blending + post {:.0} ms)",
            stats.tiles,
            secs,
            (w * h) as f64 / 1e6 / secs,
            stats.preprocess_ms,
            stats.inference_ms,
            stats.postprocess_ms
        );
    }
    Ok(())
}

/// Runs benches/prepost_cv2.py; None when that Python has no OpenCV.
fn cv2_prepost(python: &std::path::Path, image: &std::path::Path, (mw, mh): (usize, usize), iters: usize) -> Option<(f64, f64, f64)> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/prepost_cv2.py");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(image)
        .args([mw.to_string(), mh.to_string(), iters.to_string()])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((v["pre_ms"].as_f64()?, v["pre_area_ms"].as_f64()?, v["post_ms"].as_f64()?))
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
