//! SAM2 click latency, measured in one process on one image (figures, not assertions):
//!
//!   cargo run --release --example bench_sam2 -- [ENCODER DECODER] [--iters N] [--rounds R]
//!
//! Defaults to the real-size hiera-tiny export with random weights that
//! `models/sam2/export_sam2.py --real-size models/sam2/real-size` writes (git-ignored).
//! Prints: pre-processing of a 1920x1080 BGR frame, encoder time, then in alternating blocks of
//! `--iters` (`--rounds` rounds, so that every side sees the same machine):
//! - segrt's click as a C host makes it (`image` NULL: the image set last; decoder + upsample to
//!   1920x1080 + threshold into the caller's mask, from the cached embedding), and its stages;
//! - a bare ONNX Runtime decoder `run` on prepared tensors, in a session built like segrt's (the one
//!   global thread pool, segrt's arena);
//! - the same bare run in a session with a thread pool of its own that spins while it waits for
//!   work (ONNX Runtime's default, as plain Python onnxruntime runs it).
//!
//! Then the click against re-encoding per click.

use std::path::PathBuf;
use std::time::Instant;

use ort::session::{Session, SessionInputValue};
use ort::value::{Tensor, TensorRef};
use segrt::sam2::{Point, Prompt, Sam2Segmenter};
use segrt::{ImageView, MaskMut, Options, PixelFormat};

type Inputs<'a> = Vec<(std::borrow::Cow<'a, str>, SessionInputValue<'a>)>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str, default: usize| -> usize {
        args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let (iters, rounds, intra) = (flag("--iters", 10), flag("--rounds", 4), flag("--intra-threads", 0));
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

    // --intra-threads N: sessions with a thread pool of their own (ONNX Runtime's default: it spins).
    let options = Options { intra_threads: intra, ..Options::default() };
    let sam = Sam2Segmenter::from_files(&enc, &dec, options.clone())?;
    // One session per model, built from the model itself (no shared graph), for comparison.
    let single = Sam2Segmenter::from_files(&enc, &dec, Options { max_sessions: 1, ..options })?;
    println!("SAM2 {} ({}), {rounds} rounds of {iters} iterations per side, image {w}x{h} BGR24", sam.spec().convention, enc.display());

    // pre-processing alone
    let mut pre = Vec::new();
    for _ in 0..iters {
        let t = Instant::now();
        let _ = sam.encoder_tensor(&view)?;
        pre.push(ms(t));
    }
    let (pre_ms, enc_ms) = sam.set_image(&view)?;
    single.set_image(&view)?;
    let prompt = Prompt { points: vec![Point { x: 900.0, y: 500.0, label: 1 }], ..Prompt::default() };

    // The bare decoders: the same model in plain ort sessions, inputs prepared once.
    let env = segrt::runtime::environment(None)?;
    let mut shared_pool = Session::builder(env)?.with_env_allocators()?.commit_from_file(&dec)?;
    let mut own_pool = Session::builder(env)?
        .with_independent_thread_pool()?
        .with_intra_threads(num_cpus::get_physical())?
        .with_config_entry("session.intra_op.allow_spinning", "1")?
        .commit_from_file(&dec)?;
    let spec = sam.spec().clone();
    let features = {
        let mut encoder = Session::builder(env)?.commit_from_file(&enc)?;
        let tensor = sam.encoder_tensor(&view)?;
        let side = spec.image_size as i64;
        let enc_out = encoder.run(ort::inputs![spec.encoder_input_name.as_str() => tensor.input(vec![1, 3, side, side])?])?;
        let mut features = Vec::new();
        for (role, dec_name) in &spec.decoder_features {
            let enc_name = &spec.encoder_outputs.iter().find(|(r, _)| r == role).unwrap().1;
            let (shape, data) = enc_out[enc_name.as_str()].try_extract_tensor::<f32>()?;
            features.push((dec_name.clone(), shape.to_vec(), data.to_vec()));
        }
        features
    };
    let s = spec.image_size as f32;
    let (mh, mw) = spec.mask_input_size;
    let mask_input = vec![0f32; mh * mw];
    let inputs = || -> Result<Inputs<'_>, ort::Error> {
        let mut inputs: Inputs<'_> = Vec::new();
        for (name, shape, data) in &features {
            inputs.push((name.as_str().into(), TensorRef::from_array_view((shape.clone(), data.as_slice()))?.into()));
        }
        inputs.push((
            spec.point_coords.as_str().into(),
            Tensor::from_array(([1usize, 1, 2], vec![900.0 * s / w as f32, 500.0 * s / h as f32]))?.into(),
        ));
        inputs.push((spec.point_labels.as_str().into(), Tensor::from_array(([1usize, 1], vec![1f32]))?.into()));
        inputs.push((spec.mask_input.as_str().into(), TensorRef::from_array_view(([1usize, 1, mh, mw], mask_input.as_slice()))?.into()));
        inputs.push((spec.has_mask_input.as_str().into(), Tensor::from_array((spec.has_mask_input_shape.clone(), vec![0f32]))?.into()));
        Ok(inputs)
    };
    let bare = |session: &mut Session| -> Result<f64, Box<dyn std::error::Error>> {
        let inputs = inputs()?;
        let t = Instant::now();
        let out = session.run(inputs)?;
        let elapsed = ms(t);
        drop(out);
        Ok(elapsed)
    };

    let mut mask = vec![0u8; w * h];
    let (mut click, mut dec_part, mut post_part, mut bare_shared, mut bare_own) = (vec![], vec![], vec![], vec![], vec![]);
    let mut click_single = vec![];
    // Warm-up of every side.
    sam.predict_into(None, &prompt, &mut MaskMut::new(&mut mask, w, h, 0)?, None)?;
    bare(&mut shared_pool)?;
    bare(&mut own_pool)?;
    single.predict_into(None, &prompt, &mut MaskMut::new(&mut mask, w, h, 0)?, None)?;
    for round in 0..rounds {
        let mut sides: [u8; 4] = [0, 1, 2, 3];
        if round % 2 == 1 {
            sides.reverse();
        }
        for side in sides {
            for _ in 0..iters {
                match side {
                    0 => {
                        let t = Instant::now();
                        let run = sam.predict_into(None, &prompt, &mut MaskMut::new(&mut mask, w, h, 0)?, None)?;
                        click.push(ms(t));
                        dec_part.push(run.stats.decoder_ms);
                        post_part.push(run.stats.postprocess_ms);
                        assert!(run.stats.encoder_reused);
                    }
                    3 => {
                        let t = Instant::now();
                        single.predict_into(None, &prompt, &mut MaskMut::new(&mut mask, w, h, 0)?, None)?;
                        click_single.push(ms(t));
                    }
                    1 => bare_shared.push(bare(&mut shared_pool)?),
                    _ => bare_own.push(bare(&mut own_pool)?),
                }
            }
        }
    }

    let pre_m = median(&mut pre);
    let (click_m, dec_m, post_m) = (median(&mut click), median(&mut dec_part), median(&mut post_part));
    let (shared_m, own_m) = (median(&mut bare_shared), median(&mut bare_own));
    println!("pre-processing 1920x1080 BGR -> {0}x{0} tensor: {pre_m:.2} ms (median)", spec.image_size);
    println!("encoder (first set_image): {enc_ms:.1} ms + {pre_ms:.1} ms pre-processing");
    println!("click, segrt (decoder + upsample to {w}x{h} + threshold): {click_m:.2} ms (median; decoder part {dec_m:.2} ms, mask {post_m:.2} ms)");
    println!(
        "click, segrt with max_sessions 1 (decoder built from the model, no shared graph): {:.2} ms (median)",
        median(&mut click_single)
    );
    println!("bare decoder run, segrt's thread pool and arena: {shared_m:.2} ms (median)");
    println!("bare decoder run, a thread pool of its own, spinning: {own_m:.2} ms (median)");
    println!("ratio click / bare decoder run (same pool): {:.3}", click_m / shared_m);
    println!("ratio click / bare decoder run (own spinning pool): {:.3}", click_m / own_m);
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
