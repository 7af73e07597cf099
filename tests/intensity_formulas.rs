//! segrt's intensity stage and model normalisation against the pipelines they stand in for, written
//! out in numpy by tests/intensity/formulas.py (MONAI ScaleIntensityRange and its percentile form,
//! nnU-Net's CT normalisation, MedSAM's CT window, HALCON's per-image min-max, a DICOM rescale then
//! window, raw HU): the tensor segrt builds must equal the formula to float rounding.

use std::path::Path;

use segrt::image::intensity::{Intensity, Range};
use segrt::image::tensor::{prepare, Element, Fit, Layout, Normalisation, TensorData, TensorFormat};
use segrt::options::{ChannelOrder, ResizeFilter};
use segrt::{ImageView, PixelFormat};
use serde_json::Value;

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/intensity"))
}

fn num(v: &Value, key: &str, default: f64) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(default)
}

#[test]
fn the_stage_reproduces_monai_nnunet_medsam_and_halcon() {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(dir().join("expected.json")).unwrap()).unwrap();
    let (w, h) = (expected["width"].as_u64().unwrap() as usize, expected["height"].as_u64().unwrap() as usize);
    let cases = expected["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 7);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let stored: Vec<i64> = case["stored"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
        let (bytes, format): (Vec<u8>, _) = match case["format"].as_str().unwrap() {
            "GRAY16S" => (stored.iter().flat_map(|v| (*v as i16).to_le_bytes()).collect(), PixelFormat::Gray16S),
            "GRAY16" => (stored.iter().flat_map(|v| (*v as u16).to_le_bytes()).collect(), PixelFormat::Gray16),
            f => panic!("{f}"),
        };
        let i = &case["intensity"];
        let range = match i["range"].as_str().unwrap() {
            "window" => Range::Window { low: num(i, "low", 0.0), high: num(i, "high", 0.0) },
            "percentiles" => Range::Percentiles { low: num(i, "low", 0.0), high: num(i, "high", 0.0) },
            "min_max" => Range::MinMax,
            "none" => Range::None,
            r => panic!("{r}"),
        };
        let intensity = Intensity {
            bits: 0,
            slope: num(i, "slope", 1.0),
            intercept: num(i, "intercept", 0.0),
            range,
            out_low: num(i, "out_low", 0.0),
            out_high: num(i, "out_high", 255.0),
        };
        let view = ImageView::new(&bytes, w, h, 0, format).unwrap();
        let m = &case["model"];
        let norm = Normalisation {
            scale: num(m, "scale", 1.0) as f32,
            mean: [num(m, "mean", 0.0) as f32; 3],
            std: [num(m, "std", 1.0) as f32; 3],
            channel_order: ChannelOrder::Rgb,
            filter: ResizeFilter::Bilinear,
            mapping: Some(intensity.resolve(&view).unwrap()),
        };
        let format = TensorFormat { channels: 1, layout: Layout::Nchw, element: Element::F32 };
        let TensorData::F32(got) = prepare(&view, &format, (w, h), &norm, Fit::Resize).unwrap() else { panic!() };
        let want: Vec<f64> = case["expected"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(got.len(), want.len(), "{name}");
        for (k, (g, e)) in got.iter().zip(&want).enumerate() {
            let tolerance = 1e-5 * e.abs().max(1.0);
            assert!((*g as f64 - e).abs() <= tolerance, "{name}: pixel {k} (stored {}): segrt {g}, formula {e}", stored[k]);
        }
    }
}

/// The committed expected values are what the script writes (when Python with numpy is at hand:
/// the repository's .venv, as `just setup python` makes it).
#[test]
fn the_expected_values_are_the_scripts() {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(if cfg!(windows) { ".venv/Scripts/python.exe" } else { ".venv/bin/python" });
    if !python.exists() {
        eprintln!("skipped: no {}", python.display());
        return;
    }
    let out = std::env::temp_dir().join(format!("segrt-intensity-expected-{}.json", std::process::id()));
    let status = std::process::Command::new(&python).arg(dir().join("formulas.py")).arg(&out).status().unwrap();
    assert!(status.success());
    let fresh = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(
        fresh.replace("\r\n", "\n"),
        std::fs::read_to_string(dir().join("expected.json")).unwrap().replace("\r\n", "\n"),
        "tests/intensity/expected.json is stale: run python tests/intensity/formulas.py"
    );
}
