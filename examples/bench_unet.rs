//! UNet overhead, measured in one process on one 1920x1080 BGR frame (figures, not assertions):
//!
//!   cargo run --release --example bench_unet -- [MODEL.onnx ...] [--iters N] [--python PATH]
//!
//! Defaults to the demo model plus the real-size base-32/64 UNets at 512x512 that
//! `models/make_bench_models.py` writes into models/generated/ (git-ignored; needs PyTorch).
//! For each model: the stages of `UnetSegmenter::segment` (pre-processing, ONNX Runtime run,
//! post-processing), the whole call through the C ABI, and a bare `session.run` of the same model on
//! the already-prepared tensor; ratios from medians. With a Python that has OpenCV
//! (`benches/prepost_cv2.py`), the usual cv2 + numpy pre/post-processing is timed on the same image.

use std::path::PathBuf;
use std::ptr;
use std::time::Instant;

use ort::session::Session;
use ort::value::TensorRef;
use segrt::ffi::*;
use segrt::preprocess::{model_size, prepare, TensorData};
use segrt::{ImageView, Options, SegPixelFormat, SegStatus, UnetSegmenter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let iters: usize = value("--iters").and_then(|v| v.parse().ok()).unwrap_or(20);
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = value("--python").map(PathBuf::from).unwrap_or_else(|| repo.join(".venv/bin/python"));
    let mut models: Vec<PathBuf> = args.iter().filter(|a| a.ends_with(".onnx")).map(PathBuf::from).collect();
    if models.is_empty() {
        models.push(repo.join("models/demo_unet.onnx"));
        for name in ["unet_base32_512.onnx", "unet_base64_512.onnx"] {
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
    let sample = image::open(repo.join("models/samples/lesion_05.png"))?.resize_exact(w, h, image::imageops::FilterType::Triangle).to_rgb8();
    let frame_png = std::env::temp_dir().join("segrt-bench-frame.png");
    sample.save(&frame_png)?;
    let bgr: Vec<u8> = sample.pixels().flat_map(|p| [p[2], p[1], p[0]]).collect();
    let (w, h) = (w as usize, h as usize);
    let view = ImageView::new(&bgr, w, h, 0, SegPixelFormat::SEG_FORMAT_BGR24)?;
    println!("frame {w}x{h} BGR24, {iters} iterations per figure, medians; ONNX Runtime threads: its default (one per physical core)");

    for model in &models {
        let seg = UnetSegmenter::from_file(model, Options::default())?;
        let size = model_size(seg.spec(), (w, h), seg.options());
        for _ in 0..3 {
            seg.segment(&view, false)?;
        }
        let (mut wall, mut pre, mut run, mut post) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..iters {
            let t = Instant::now();
            let (_, stats) = seg.segment(&view, false)?;
            wall.push(ms(t));
            pre.push(stats.preprocess_ms);
            run.push(stats.inference_ms);
            post.push(stats.postprocess_ms);
        }

        // The same call through the C ABI, as a host makes it.
        let path = std::ffi::CString::new(model.to_str().unwrap())?;
        let mut handle = ptr::null_mut();
        assert_eq!(unsafe { seg_create(path.as_ptr(), ptr::null(), &mut handle) }, SegStatus::SEG_OK);
        let image = SegImage { data: bgr.as_ptr(), width: w as i32, height: h as i32, stride: 0, format: SegPixelFormat::SEG_FORMAT_BGR24 as i32, plane1: ptr::null(), plane2: ptr::null() };
        let mut mask = vec![0u8; w * h];
        let out = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
        let mut ffi = Vec::new();
        for i in 0..iters + 3 {
            let t = Instant::now();
            assert_eq!(unsafe { seg_run_unet(handle, &image, &out, ptr::null_mut(), 0, ptr::null_mut()) }, SegStatus::SEG_OK);
            if i >= 3 {
                ffi.push(ms(t));
            }
        }
        unsafe { seg_free(handle) };

        // Bare ONNX Runtime: the same model, the tensor prepared once, only `run` timed.
        let env = segrt::runtime::environment(None)?;
        let mut session = Session::builder(env)?.commit_from_file(model)?;
        let tensor = prepare(&view, seg.spec(), size, seg.options())?;
        let shape = seg.spec().input_shape(size.0, size.1).to_vec();
        let mut bare = Vec::new();
        for i in 0..iters + 3 {
            let input = match &tensor {
                TensorData::F32(v) => TensorRef::from_array_view((shape.clone(), v.as_slice()))?.into_dyn(),
                TensorData::F16(v) => TensorRef::from_array_view((shape.clone(), v.as_slice()))?.into_dyn(),
            };
            let t = Instant::now();
            let outputs = session.run(ort::inputs![seg.spec().input_name.as_str() => input])?;
            let elapsed = ms(t);
            drop(outputs);
            if i >= 3 {
                bare.push(elapsed);
            }
        }

        let (wall, pre, run, post, ffi, bare) = (median(&mut wall), median(&mut pre), median(&mut run), median(&mut post), median(&mut ffi), median(&mut bare));
        let name = model.file_name().unwrap().to_string_lossy();
        println!("\n{name} at {}x{}:", size.0, size.1);
        println!("  segrt stages: pre-processing {pre:.2} ms | ONNX Runtime run {run:.2} ms | post-processing {post:.2} ms");
        println!("  UnetSegmenter::segment {wall:.2} ms; through the C ABI (seg_run_unet) {ffi:.2} ms; bare session.run {bare:.2} ms");
        println!("  ratio end-to-end (C ABI) / bare run: {:.3}   (goal: <= 1.02 on a base-32 UNet at 512, <= 1.15 on the demo model)", ffi / bare);
        println!("  ratio C ABI / Rust call: {:.3}", ffi / wall);
        match cv2_prepost(&python, &frame_png, size, iters) {
            Some((cv_pre, cv_post)) => println!(
                "  Python cv2 + numpy: pre {cv_pre:.2} ms, post {cv_post:.2} ms; ratio segrt (pre+post) / cv2 (pre+post): {:.3}   (goal <= 0.5)",
                (pre + post) / (cv_pre + cv_post)
            ),
            None => println!("  (no Python with OpenCV at {}: `{} -m pip install opencv-python-headless numpy` for the cv2 comparison)", python.display(), python.display()),
        }
    }
    Ok(())
}

/// Runs benches/prepost_cv2.py; None when that Python has no OpenCV.
fn cv2_prepost(python: &std::path::Path, image: &std::path::Path, (mw, mh): (usize, usize), iters: usize) -> Option<(f64, f64)> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/prepost_cv2.py");
    let out = std::process::Command::new(python).arg(script).arg(image).args([mw.to_string(), mh.to_string(), iters.to_string()]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((v["pre_ms"].as_f64()?, v["post_ms"].as_f64()?))
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
