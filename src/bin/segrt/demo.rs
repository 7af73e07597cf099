//! `segrt demo`: the bundled UNet on the bundled samples, with timings and IoU against ground truth.

use std::path::{Path, PathBuf};
use std::time::Instant;

use image::GrayImage;

use segrt::Options;

use crate::files::{decode, file_name, list_images, output_names, stem};
use crate::unet::{load_segmenter, segment_image, write_outputs};
use crate::{absolute, CliResult};

/// The demo's model folder when none is given: `models/` beside the executable first, so an unzipped
/// package (segrt.exe next to models/) works from any folder; then the source tree's, compiled in.
pub fn demo_models() -> PathBuf {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("models")));
    match beside {
        Some(dir) if dir.join("demo_unet.onnx").is_file() => dir,
        _ => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/models")),
    }
}

pub fn demo(models: &Path, out: &Path, ort: Option<PathBuf>) -> CliResult {
    let model = models.join("demo_unet.onnx");
    let samples = models.join("samples");
    let inputs: Vec<PathBuf> = list_images(std::slice::from_ref(&samples))?.into_iter().filter(|p| !stem(p).ends_with("_gt")).collect();
    if inputs.is_empty() {
        return Err(format!("no sample images in {}", samples.display()).into());
    }
    let names = output_names(&inputs)?;
    let options = Options { ort_path: ort, ..Options::default() };
    let (seg, load_ms) = load_segmenter(&model, options)?;
    let rt = segrt::runtime::loaded().expect("loaded by the segmenter");
    say!("segrt demo: {} on {} images", model.display(), inputs.len());
    say!("ONNX Runtime {} ({} build, C API level {}) from {}", rt.version, rt.build.describe(), rt.release.api_level(), rt.path.display());
    say!("model loaded in {load_ms:.1} ms; provider {}", seg.provider().in_use);
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut totals = [0f64; 4];
    for (path, name) in inputs.iter().zip(&names) {
        let t = Instant::now();
        let img = decode(path)?;
        let decode_ms = t.elapsed().as_secs_f64() * 1e3;
        let (mask, stats) = segment_image(&seg, &img)?;
        let t = Instant::now();
        write_outputs(out, name, &img, &mask, true)?;
        let write_ms = t.elapsed().as_secs_f64() * 1e3;
        let gt = path.with_file_name(format!("{}_gt.png", stem(path)));
        let iou = if gt.exists() { Some(iou(&mask, &decode(&gt)?.to_luma8())) } else { None };
        say!(
            "  {:<16} {:>4}x{:<4} decode {:>6.1} ms | pre {:>6.1} ms | infer {:>7.1} ms | post {:>6.1} ms | write {:>6.1} ms{}",
            file_name(path),
            img.width(),
            img.height(),
            decode_ms,
            stats.preprocess_ms,
            stats.inference_ms,
            stats.postprocess_ms,
            write_ms,
            iou.map(|v| format!(" | IoU vs ground truth {v:.3}")).unwrap_or_default()
        );
        for (i, v) in [stats.preprocess_ms, stats.inference_ms, stats.postprocess_ms, decode_ms + write_ms].iter().enumerate() {
            totals[i] += v;
        }
    }
    let n = inputs.len() as f64;
    say!(
        "mean per image: pre {:.1} ms, inference {:.1} ms, post {:.1} ms (file decode+write {:.1} ms)",
        totals[0] / n,
        totals[1] / n,
        totals[2] / n,
        totals[3] / n
    );
    say!("masks and overlays written to {}", absolute(out)?.display());
    Ok(())
}

fn iou(mask: &GrayImage, gt: &GrayImage) -> f64 {
    let (mut inter, mut union) = (0u64, 0u64);
    for (a, b) in mask.pixels().zip(gt.pixels()) {
        let (a, b) = (a.0[0] > 127, b.0[0] > 127);
        inter += (a && b) as u64;
        union += (a || b) as u64;
    }
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}
