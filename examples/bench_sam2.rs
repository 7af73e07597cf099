//! SAM2 click latency, measured in one process on one image (figures, not assertions):
//!
//!   cargo run --release --example bench_sam2 -- [ENCODER DECODER] [--iters N]
//!
//! Defaults to the real-size hiera-tiny export with random weights that
//! `models/sam2/export_sam2.py --real-size models/sam2/real-size` writes (git-ignored).
//! Prints: pre-processing of a 1920x1080 BGR frame, encoder time, segrt's click (decoder +
//! upsample to 1920x1080 + threshold, from a cached embedding) against a bare ONNX Runtime decoder
//! `run` on prepared tensors, and the click against re-encoding per click.

use std::path::PathBuf;
use std::time::Instant;

use ort::session::Session;
use ort::value::Tensor;
use segrt::sam2::{Point, Prompt, Sam2Segmenter};
use segrt::{ImageView, Options, PixelFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let iters: usize = args.iter().position(|a| a == "--iters").and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(20);
    let paths: Vec<&String> = args.iter().filter(|a| a.ends_with(".onnx")).collect();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/sam2/real-size");
    let (enc, dec) = match paths.as_slice() {
        [e, d] => (PathBuf::from(e), PathBuf::from(d)),
        _ => (dir.join("sam2_tiny_random_1024_samexporter_encoder.onnx"), dir.join("sam2_tiny_random_1024_samexporter_decoder.onnx")),
    };
    if !enc.exists() || !dec.exists() {
        eprintln!(
            "{} not found: generate it with `python models/sam2/export_sam2.py --real-size models/sam2/real-size` (needs PyTorch)",
            enc.display()
        );
        std::process::exit(2);
    }

    // A 1920x1080 BGR frame with some structure.
    let (w, h) = (1920usize, 1080usize);
    let bgr: Vec<u8> = (0..w * h)
        .flat_map(|i| {
            let (x, y) = (i % w, i / w);
            let inside = (x as i64 - 900).pow(2) + (y as i64 - 500).pow(2) < 200 * 200;
            if inside {
                [40, 60, 220]
            } else {
                [(x / 8) as u8, (y / 5) as u8, 90]
            }
        })
        .collect();
    let view = ImageView::new(&bgr, w, h, 0, PixelFormat::Bgr24)?;

    let options = Options::default();
    let sam = Sam2Segmenter::from_files(&enc, &dec, options)?;
    println!("SAM2 {} ({}), {iters} iterations, image {w}x{h} BGR24", sam.spec().convention, enc.display());

    // pre-processing alone
    let mut pre = Vec::new();
    for _ in 0..iters {
        let t = Instant::now();
        let _ = sam.encoder_tensor(&view)?;
        pre.push(ms(t));
    }
    let (pre_ms, enc_ms) = sam.set_image(&view)?;
    let prompt = Prompt { points: vec![Point { x: 900.0, y: 500.0, label: 1 }], ..Prompt::default() };

    // segrt click from the cached embedding, wall time of the whole call
    let mut click = Vec::new();
    let mut dec_only = Vec::new();
    for _ in 0..iters {
        let t = Instant::now();
        let out = sam.predict(Some(&view), &prompt, false)?;
        click.push(ms(t));
        dec_only.push(out.run.stats.decoder_ms);
        assert!(out.run.stats.encoder_reused);
    }

    // bare decoder: the same model in a plain ort session, inputs prepared once
    let env = segrt::runtime::environment(None)?;
    let mut encoder = Session::builder(env)?.commit_from_file(&enc)?;
    let mut decoder = Session::builder(env)?.commit_from_file(&dec)?;
    let spec = sam.spec().clone();
    let tensor = sam.encoder_tensor(&view)?;
    let side = spec.image_size as i64;
    let enc_out = encoder.run(ort::inputs![spec.encoder_input_name.as_str() => tensor.input(vec![1, 3, side, side])?])?;
    let mut features = Vec::new();
    for (role, dec_name) in &spec.decoder_features {
        let enc_name = &spec.encoder_outputs.iter().find(|(r, _)| r == role).unwrap().1;
        let (shape, data) = enc_out[enc_name.as_str()].try_extract_tensor::<f32>()?;
        features.push((dec_name.clone(), shape.to_vec(), data.to_vec()));
    }
    drop(enc_out);
    let s = spec.image_size as f32;
    let (mh, mw) = spec.mask_input_size;
    let mut bare = Vec::new();
    for _ in 0..iters {
        let mut inputs: Vec<(std::borrow::Cow<'_, str>, ort::session::SessionInputValue<'_>)> = Vec::new();
        for (name, shape, data) in &features {
            inputs.push((name.as_str().into(), Tensor::from_array((shape.clone(), data.clone()))?.into()));
        }
        inputs.push((
            spec.point_coords.as_str().into(),
            Tensor::from_array(([1usize, 1, 2], vec![900.0 * s / w as f32, 500.0 * s / h as f32]))?.into(),
        ));
        inputs.push((spec.point_labels.as_str().into(), Tensor::from_array(([1usize, 1], vec![1f32]))?.into()));
        inputs.push((spec.mask_input.as_str().into(), Tensor::from_array(([1usize, 1, mh, mw], vec![0f32; mh * mw]))?.into()));
        inputs.push((spec.has_mask_input.as_str().into(), Tensor::from_array((spec.has_mask_input_shape.clone(), vec![0f32]))?.into()));
        let t = Instant::now();
        let out = decoder.run(inputs)?;
        bare.push(ms(t));
        drop(out);
    }

    let (pre_m, click_m, bare_m, dec_m) = (median(&mut pre), median(&mut click), median(&mut bare), median(&mut dec_only));
    println!("pre-processing 1920x1080 BGR -> {0}x{0} tensor: {pre_m:.2} ms (median)", spec.image_size);
    println!("encoder (first set_image): {enc_ms:.1} ms + {pre_ms:.1} ms pre-processing");
    println!("click, segrt (decoder + upsample to {w}x{h} + threshold): {click_m:.2} ms (median; decoder part {dec_m:.2} ms)");
    println!("bare decoder session.run on prepared tensors: {bare_m:.2} ms (median)");
    println!("ratio click / bare decoder run: {:.3} (goal <= 1.10)", click_m / bare_m);
    println!("ratio click / (re-encode + click): {:.4} (goal <= 0.03)", click_m / (enc_ms + pre_ms + click_m));
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
