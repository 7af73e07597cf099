//! TensorRT shape profiles, proven on the CPU: the inputs segrt reads from a model's bytes (what the
//! profiles are derived from) equal what ONNX Runtime reports for every committed model (outputs
//! too, where ONNX Runtime did not refine a dynamic axis), and with
//! `SEGRT_CHECK_TRT_PROFILES=1` every run is checked against the profile derived for its model, as
//! under TensorRT: UNet whole images and tiles, SAM2 clicks, boxes, many prompts and
//! segment-everything in both decoder layouts. A shape outside its profile fails the run.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use segrt::engine::declared_io::declared_io;
use segrt::engine::io::{inputs_of, outputs_of};
use segrt::options::{TileMode, TrtProfiles};
use segrt::sam2::{BoxPrompt, EverythingOptions, Point, Prompt, Sam2Segmenter, PROFILE_MAX_BATCH, PROFILE_MAX_POINTS};
use segrt::{ImageView, MaskMut, Options, PixelFormat, UnetSegmenter};

/// Checked everywhere for this test binary (its own process), before the first run reads it.
fn check_profiles() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: set before any thread of this process reads the environment (the first call of
    // every test, under the Once).
    ONCE.call_once(|| unsafe { std::env::set_var("SEGRT_CHECK_TRT_PROFILES", "1") });
    assert!(segrt::engine::trt_profile::checked_everywhere());
}

fn onnx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            onnx_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "onnx") {
            out.push(path);
        }
    }
}

#[test]
fn declared_inputs_and_outputs_match_what_onnx_runtime_reports() {
    let mut files = Vec::new();
    onnx_files(&repo().join("models"), &mut files);
    assert!(files.len() >= 20, "{files:?}");
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let session = segrt::engine::build_session(&bytes, &Options::default());
        let Ok((session, _)) = session else { continue }; // fault fixtures ONNX Runtime refuses
        let (inputs, outputs) = declared_io(&bytes).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert_eq!(inputs, inputs_of(&session), "{}", file.display());
        // ONNX Runtime reports an output's shape as its shape inference refined it; the declared
        // one may leave those axes dynamic.
        let reported = outputs_of(&session);
        assert_eq!(outputs.len(), reported.len(), "{}", file.display());
        for (declared, reported) in outputs.iter().zip(&reported) {
            let (d, r) = (&declared.shape, &reported.shape);
            let fits = d.len() == r.len() && d.iter().zip(r).all(|(d, r)| d == r || *d < 0);
            assert!(
                fits && declared.name == reported.name && declared.dtype == reported.dtype,
                "{}: {declared:?} {reported:?}",
                file.display()
            );
        }
    }
    assert!(declared_io(b"not a model").is_err());
}

fn rgb(name: &str) -> Rgb {
    load_rgb(&sample(name))
}

fn profile_of(report: &segrt::engine::ProviderReport) -> String {
    serde_json::to_string(report).unwrap()
}

#[test]
fn unet_runs_stay_within_their_profiles() {
    check_profiles();
    let img = rgb("lesion_03.png");
    let view = ImageView::new(&img.data, img.w, img.h, 0, PixelFormat::Rgb24).unwrap();
    // A model with dynamic batch, height and width: whole images at a fixed input size, tiles in
    // batches (the last one smaller), and both under AUTO.
    let cases = [
        (TileMode::Off, Some((96, 64)), None, 4),
        (TileMode::On, None, Some((64, 64)), 3),
        (TileMode::Auto, Some((128, 128)), Some((48, 48)), 4),
    ];
    for (tile_mode, input_size, tile_size, tile_batch) in cases {
        let options = Options { tile_mode, input_size, tile_size, tile_batch, tile_overlap: 8, ..Options::default() };
        let seg = UnetSegmenter::from_file(&model("test/unet_dynamic.onnx"), options).unwrap();
        let profile = seg.trt_profile().unwrap_or_else(|| panic!("{tile_mode:?}: no profile"));
        let run = seg.segment(&view, false).unwrap_or_else(|e| panic!("{tile_mode:?} ({}): {e}", profile.describe()));
        if tile_mode == TileMode::On {
            assert!(run.run.stats.tiles > tile_batch, "several batches: {}", run.run.stats.tiles);
            assert_eq!(profile.describe(), "image 1..3x3x64x64");
        }
    }
    // AUTO without an input size: whole images at their own (rounded) size up to twice the tile,
    // tiles beyond. Crops of the sample around those bounds all run within the profile.
    let options = Options { tile_mode: TileMode::Auto, tile_size: Some((64, 48)), tile_batch: 2, tile_overlap: 8, ..Options::default() };
    let seg = UnetSegmenter::from_file(&model("test/unet_dynamic.onnx"), options).unwrap();
    assert_eq!(seg.trt_profile().expect("a profile").describe(), "image 1..2x3x32..96x32..128");
    for (w, h) in [(1, 1), (17, 30), (128, 96), (143, 111), (129, 20), (20, 97), (200, 150)] {
        let crop = ImageView::new(&img.data, w.min(img.w), h.min(img.h), (3 * img.w) as isize, PixelFormat::Rgb24).unwrap();
        seg.segment(&crop, false).unwrap_or_else(|e| panic!("{w}x{h}: {e}"));
    }
    // Tiles off and whole images at their own size: no profile.
    let seg = UnetSegmenter::from_file(&model("test/unet_dynamic.onnx"), Options::default()).unwrap();
    assert!(seg.trt_profile().is_none());
    seg.segment(&view, false).unwrap();
    // A fixed model needs none.
    let seg = UnetSegmenter::from_file(&model("demo_unet.onnx"), Options::default()).unwrap();
    seg.segment(&view, false).unwrap();
    assert!(!profile_of(seg.provider()).contains("tensorrt_profile"), "reported only under TensorRT");
}

fn sam2_pair(dir: &str, encoder: &str, decoder: &str) -> Sam2Segmenter {
    let base = repo().join("models/sam2").join(dir);
    Sam2Segmenter::from_files(&base.join(encoder), &base.join(decoder), Options::default()).unwrap()
}

fn click(x: f32, y: f32) -> Point {
    Point { x, y, label: 1 }
}

/// Clicks, a box, a box with clicks, many prompts of different sizes, and segment-everything.
fn exercise(seg: &Sam2Segmenter, what: &str) {
    let img = rgb("lesion_03.png");
    let view = ImageView::new(&img.data, img.w, img.h, 0, PixelFormat::Rgb24).unwrap();
    let (w, h) = (img.w as f32, img.h as f32);
    let bbox = Some(BoxPrompt { x1: w * 0.2, y1: h * 0.2, x2: w * 0.8, y2: h * 0.8 });
    let most: Vec<Point> = (0..PROFILE_MAX_POINTS).map(|i| click(1.0 + i as f32, h / 2.0)).collect();
    let prompts = [
        Prompt { points: vec![click(w / 2.0, h / 2.0)], ..Prompt::default() },
        Prompt { points: vec![], bbox, ..Prompt::default() },
        Prompt { points: vec![click(w / 2.0, h / 2.0), Point { x: 2.0, y: 2.0, label: 0 }], bbox, ..Prompt::default() },
        Prompt { points: most.clone(), ..Prompt::default() },
        Prompt { points: most.clone(), bbox, ..Prompt::default() },
    ];
    for (i, p) in prompts.iter().enumerate() {
        seg.predict(Some(&view), p, false).unwrap_or_else(|e| panic!("{what}: prompt {i}: {e}"));
    }
    // Many prompts: more than a profile's batch, mixed sizes.
    let many: Vec<Prompt> = (0..PROFILE_MAX_BATCH + 5).map(|i| prompts[i % prompts.len()].clone()).collect();
    let mut buffers = vec![vec![0u8; img.w * img.h]; many.len()];
    let mut masks: Vec<MaskMut<'_>> = buffers.iter_mut().map(|b| MaskMut::new(b, img.w, img.h, img.w).unwrap()).collect();
    let run = seg.predict_many(None, &many, &mut masks).unwrap_or_else(|e| panic!("{what}: many: {e}"));
    assert!(run.stats.batch <= PROFILE_MAX_BATCH, "{what}: batch {}", run.stats.batch);
    let options = EverythingOptions { points_per_side: 12, points_per_batch: 128, ..EverythingOptions::default() };
    seg.everything(Some(&view), &options).unwrap_or_else(|e| panic!("{what}: everything: {e}"));
    // One point more than the profile takes: refused before anything runs, naming the way out.
    let over = Prompt { points: (0..=PROFILE_MAX_POINTS).map(|i| click(1.0 + i as f32, 1.0)).collect(), ..Prompt::default() };
    let e = seg.predict(Some(&view), &over, false).unwrap_err();
    assert!(e.message.contains("TensorRT shape profile") && e.message.contains("decoder_provider"), "{what}: {e}");
    let e = seg.predict_many(None, std::slice::from_ref(&over), &mut masks[..1]).unwrap_err();
    assert!(e.message.contains("prompt 0"), "{what}: {e}");
}

#[test]
fn sam2_runs_stay_within_their_profiles() {
    check_profiles();
    for (dir, encoder, decoder) in [
        ("", "sam2_tiny_sam2onnx_encoder.onnx", "sam2_tiny_sam2onnx_batched_decoder.onnx"),
        ("", "sam2_tiny_samexporter_encoder.onnx", "sam2_tiny_samexporter_decoder.onnx"),
        ("", "sam2_tiny_osam_encoder.onnx", "sam2_tiny_osam_decoder.onnx"),
        ("transformers", "vision_encoder.onnx", "prompt_encoder_mask_decoder.onnx"),
        ("transformers_edgetam", "vision_encoder.onnx", "prompt_encoder_mask_decoder.onnx"),
    ] {
        let seg = sam2_pair(dir, encoder, decoder);
        let what = format!("{dir}/{decoder}");
        let profile = seg.decoder_trt_profile().unwrap_or_else(|| panic!("{what}: the decoder has no profile"));
        eprintln!("{what}: {}", profile.describe());
        exercise(&seg, &what);
    }
}

#[test]
fn profiles_can_be_turned_off() {
    check_profiles();
    let options = Options { tile_mode: TileMode::On, ..Options::default() };
    let mut off = options.clone();
    off.gpu.trt_profiles = TrtProfiles::Off;
    let on = UnetSegmenter::from_file(&model("test/unet_dynamic.onnx"), options).unwrap();
    let off = UnetSegmenter::from_file(&model("test/unet_dynamic.onnx"), off).unwrap();
    assert!(on.trt_profile().is_some());
    assert!(off.trt_profile().is_none());
}
