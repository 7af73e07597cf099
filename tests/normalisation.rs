//! A UNet model's pixel normalisation: the caller's, else the one its ONNX metadata states, else
//! segrt's default; what `segrt info` reports about it, and that the run really uses it.

mod common;

use std::process::Command;

use common::*;
use segrt::unet::normalisation::Source;
use segrt::{ImageView, Options, PixelFormat, UnetSegmenter};

/// Protobuf varint.
fn varint(mut v: usize, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The bundled demo model with `metadata_props` entries appended (ModelProto field 14, a
/// StringStringEntryProto each): protobuf readers take fields in any order.
fn demo_with_metadata(pairs: &[(&str, &str)]) -> Vec<u8> {
    let mut bytes = std::fs::read(model("demo_unet.onnx")).unwrap();
    for (key, value) in pairs {
        let mut entry = Vec::new();
        for (field, text) in [(0x0a, key), (0x12, value)] {
            entry.push(field);
            varint(text.len(), &mut entry);
            entry.extend_from_slice(text.as_bytes());
        }
        bytes.push(0x72); // field 14, length-delimited
        varint(entry.len(), &mut bytes);
        bytes.extend(entry);
    }
    bytes
}

const IMAGENET: &[(&str, &str)] = &[("segrt.mean", "0.485,0.456,0.406"), ("segrt.std", "0.229,0.224,0.225")];

fn foreground(seg: &UnetSegmenter) -> u64 {
    let img = load_rgb(&sample("lesion_03.png"));
    let view = ImageView::new(&img.data, img.w, img.h, 0, PixelFormat::Rgb24).unwrap();
    seg.segment(&view, false).unwrap().run.foreground_pixels
}

#[test]
fn the_models_metadata_sets_the_normalisation_unless_the_caller_does() {
    let plain = UnetSegmenter::from_memory(std::fs::read(model("demo_unet.onnx")).unwrap(), Options::default()).unwrap();
    assert_eq!(plain.info().normalisation.source, Source::Default);

    let tagged = UnetSegmenter::from_memory(demo_with_metadata(IMAGENET), Options::default()).unwrap();
    let n = tagged.info().normalisation;
    assert_eq!((n.source, n.mean, n.std), (Source::ModelMetadata, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]));
    assert_eq!((tagged.options().mean, tagged.options().std), (n.mean, n.std), "the run uses what info reports");

    // The caller's own values win, and so do the defaults when the caller says they are its choice.
    let mine = Options { mean: [0.5; 3], ..Options::default() };
    let caller = UnetSegmenter::from_memory(demo_with_metadata(IMAGENET), mine).unwrap();
    assert_eq!((caller.info().normalisation.source, caller.options().mean), (Source::Caller, [0.5; 3]));
    let explicit = Options { explicit_normalisation: true, ..Options::default() };
    let caller = UnetSegmenter::from_memory(demo_with_metadata(IMAGENET), explicit).unwrap();
    assert_eq!((caller.info().normalisation.source, caller.options().std), (Source::Caller, [1.0; 3]));

    // ONNX's standard image metadata: values in -1..1.
    let ranged =
        UnetSegmenter::from_memory(demo_with_metadata(&[("Image.NominalPixelRange", "Normalized_1_1")]), Options::default()).unwrap();
    let n = ranged.info().normalisation;
    assert_eq!((n.source, n.mean, n.std), (Source::ModelMetadata, [0.5; 3], [0.5; 3]));
}

#[test]
fn the_run_uses_the_metadatas_normalisation() {
    // The demo model was trained on v / 255: fed raw 0..255 values its mask changes. A model whose
    // metadata says `segrt.scale = 1` must give exactly what the caller's --scale 1 gives.
    let raw = Options { scale: 1.0, ..Options::default() };
    let by_caller = foreground(&UnetSegmenter::from_memory(std::fs::read(model("demo_unet.onnx")).unwrap(), raw).unwrap());
    let by_model = foreground(&UnetSegmenter::from_memory(demo_with_metadata(&[("segrt.scale", "1")]), Options::default()).unwrap());
    let default = foreground(&UnetSegmenter::from_memory(std::fs::read(model("demo_unet.onnx")).unwrap(), Options::default()).unwrap());
    assert_eq!(by_model, by_caller);
    assert_ne!(by_model, default, "scale 1 and scale 1/255 give the same mask: the test shows nothing");
}

#[test]
fn unreadable_normalisation_metadata_refuses_the_model_and_says_why() {
    let e = UnetSegmenter::from_memory(demo_with_metadata(&[("segrt.std", "0.2,0,0.2")]), Options::default()).err().unwrap();
    assert!(e.message.contains("segrt.std = '0.2,0,0.2'") && e.message.contains("divide by zero"), "{}", e.message);
    // ... unless the caller sets the normalisation itself.
    let mine = Options { explicit_normalisation: true, ..Options::default() };
    UnetSegmenter::from_memory(demo_with_metadata(&[("segrt.std", "0.2,0,0.2")]), mine).unwrap();
}

fn info_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_segrt")).arg("info").args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn segrt_info_shows_the_normalisation_its_source_and_the_output_chosen() {
    let dir = std::env::temp_dir().join(format!("segrt-normalisation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tagged = dir.join("tagged.onnx");
    std::fs::write(&tagged, demo_with_metadata(IMAGENET)).unwrap();
    let tagged = tagged.to_str().unwrap();

    let v = info_json(&[tagged]);
    assert_eq!(v["normalisation"]["source"], "model_metadata");
    assert!(v["normalisation"]["why"].as_str().unwrap().contains("segrt.mean, segrt.std"), "{v}");
    assert!((v["normalisation"]["mean"][0].as_f64().unwrap() - 0.485).abs() < 1e-6, "{v}");
    assert!(v["interpretation"]["output_choice"].as_str().unwrap().contains("the model's only output"), "{v}");

    let v = info_json(&["--scale", "1/255", tagged]);
    assert_eq!((v["normalisation"]["source"].as_str(), v["normalisation"]["mean"][0].as_f64()), (Some("caller"), Some(0.0)));

    let v = info_json(&[model("demo_unet.onnx").to_str().unwrap()]);
    assert_eq!(v["normalisation"]["source"], "default");

    let out = Command::new(env!("CARGO_BIN_EXE_segrt")).args(["info", "--output", "nope", tagged]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no output named 'nope'"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
