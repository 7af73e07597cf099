//! Segment-everything throughput, measured in one process (figures, not assertions):
//!
//!   cargo run --example bench_everything -- ENCODER DECODER [BATCHED_DECODER] [--sides 16,32] [--save FRAME.png]
//!
//! On a 1920x1080 frame: the encoder once, then `everything` at each points-per-side with the
//! one-prompt decoder and (when given) the decoder with a prompt batch axis
//! (`models/sam2/export_sam2.py --batched-decoder`), with the generator's default thresholds.
//! Prints the stages (decoder, post-processing: upsampling, filters, NMS) and prompts per second.
//! `--save` writes the frame for `benches/everything_python.py`, which runs the same work through the
//! official Python generator.

use std::path::PathBuf;
use std::time::Instant;

use segrt::sam2::{EverythingOptions, Sam2Segmenter};
use segrt::{ImageView, Options, PixelFormat};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let sides: Vec<usize> = value("--sides").unwrap_or("16,32".into()).split(',').map(|v| v.parse().unwrap()).collect();
    let models: Vec<PathBuf> = args.iter().filter(|a| a.ends_with(".onnx")).map(PathBuf::from).collect();
    if models.len() < 2 {
        eprintln!("usage: bench_everything ENCODER DECODER [BATCHED_DECODER] [--sides 16,32] [--save FRAME.png]");
        std::process::exit(2);
    }
    // A 1920x1080 RGB frame with some structure.
    let (w, h) = (1920usize, 1080usize);
    let rgb: Vec<u8> = (0..w * h)
        .flat_map(|i| {
            let (x, y) = (i % w, i / w);
            let disc = |cx: i64, cy: i64, r: i64| (x as i64 - cx).pow(2) + (y as i64 - cy).pow(2) < r * r;
            if disc(900, 500, 200) {
                [220, 60, 40]
            } else if disc(300, 300, 120) || disc(1500, 800, 150) {
                [40, 200, 90]
            } else {
                [(x / 8) as u8, (y / 5) as u8, 90]
            }
        })
        .collect();
    if let Some(path) = value("--save") {
        image::RgbImage::from_raw(w as u32, h as u32, rgb.clone()).unwrap().save(&path)?;
    }
    let view = ImageView::new(&rgb, w, h, 0, PixelFormat::Rgb24)?;
    for decoder in &models[1..] {
        let sam = Sam2Segmenter::from_files(&models[0], decoder, Options::default())?;
        let t = Instant::now();
        sam.set_image(&view)?;
        println!(
            "{} (prompt batch: {}): encoder {:.0} ms (pre-processing included)",
            decoder.file_name().unwrap().to_string_lossy(),
            sam.batched_prompts(),
            t.elapsed().as_secs_f64() * 1e3
        );
        for &side in &sides {
            let options = EverythingOptions { points_per_side: side, ..EverythingOptions::default() };
            let t = Instant::now();
            let (r, _) = sam.everything(None, &options)?;
            let total = t.elapsed().as_secs_f64() * 1e3;
            let s = &r.stats;
            println!(
                "  {side}x{side}: {} prompts in {} decoder runs: decoder {:.0} ms ({:.1} prompts/s), post-processing {:.0} ms, \
                 total {total:.0} ms ({:.1} prompts/s); masks {} -> IoU {} -> stability {} -> NMS {} objects",
                s.prompts,
                s.decoder_runs,
                s.decoder_ms,
                s.prompts as f64 / s.decoder_ms * 1e3,
                s.postprocess_ms,
                s.prompts as f64 / total * 1e3,
                s.masks_decoded,
                s.after_iou,
                s.after_stability,
                s.after_nms
            );
        }
    }
    Ok(())
}
