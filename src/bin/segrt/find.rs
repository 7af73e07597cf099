//! `segrt find`: teach an object once (an image and its mask, or a saved reference file), then find
//! it in every image of a folder: a mask (or, with `--all`, a 16-bit label image of every instance),
//! an optional overlay, and the per-image records (JSON).

use std::path::PathBuf;
use std::time::Instant;

use image::{GrayImage, ImageBuffer, Luma};

use segrt::sam2::reference::{FindMode, FindOptions, FindResult, Reference, DEFAULT_THRESHOLD};
use segrt::sam2::Sam2Segmenter;
use segrt::Options;

use crate::args::{count, warn_fallbacks, SessionArgs};
use crate::files::{decode, display_rgb, list_images, make_overlay, output_names, Pixels};
use crate::CliResult;

#[derive(clap::Args)]
pub struct FindArgs {
    /// The SAM2 image encoder (.onnx)
    #[arg(long)]
    encoder: PathBuf,
    /// The SAM2 prompt decoder (.onnx) exported with that encoder
    #[arg(long)]
    decoder: PathBuf,
    /// Teach from this image (with --mask)
    #[arg(long, value_name = "IMAGE", requires = "mask", conflicts_with = "reference")]
    teach: Option<PathBuf>,
    /// The object's mask on the --teach image (any non-zero pixel is the object; the image's size)
    #[arg(long, value_name = "MASK", requires = "teach")]
    mask: Option<PathBuf>,
    /// A reference saved before (--save), taught with the same encoder and decoder
    #[arg(long, value_name = "FILE", required_unless_present = "teach")]
    reference: Option<PathBuf>,
    /// Save the taught reference here (load it later with --reference)
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Find every instance (a label image per input: 0 = background, instance k = k, best first)
    /// instead of the single best match
    #[arg(long)]
    all: bool,
    /// A match is present when its score (0..1) reaches this
    #[arg(long, default_value_t = DEFAULT_THRESHOLD, value_name = "T", allow_negative_numbers = true)]
    threshold: f32,
    /// --all: most instances per image
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = count)]
    max_instances: usize,
    /// Do not refine each match with its own box and logits
    #[arg(long)]
    no_refine: bool,
    /// Locate and judge by the embedding alone, not the object's colour (copies whose colour varies)
    #[arg(long)]
    no_colour: bool,
    /// Output folder for <name>_mask.png (--all: <name>_labels.png), <name>_overlay.png and found.json
    #[arg(long, required_unless_present = "save")]
    out: Option<PathBuf>,
    /// Also write <name>_overlay.png
    #[arg(long)]
    overlay: bool,
    /// ONNX Runtime intra-op threads (0 = one per physical core)
    #[arg(long, default_value_t = 0, value_parser = count)]
    threads: usize,
    #[command(flatten)]
    session: SessionArgs,
    /// Images or folders of images to search
    images: Vec<PathBuf>,
}

pub fn find(args: FindArgs, ort: Option<PathBuf>) -> CliResult {
    if args.out.is_some() && args.images.is_empty() {
        return Err("no image to search: give images or folders after the options".into());
    }
    let inputs = list_images(&args.images)?;
    let names = output_names(&inputs)?;
    let mut options = Options { ort_path: ort, intra_threads: args.threads, ..Options::default() };
    args.session.apply(&mut options)?;
    let t = Instant::now();
    let sam = Sam2Segmenter::from_files(&args.encoder, &args.decoder, options).map_err(|e| e.to_string())?;
    note!("models loaded in {:.1} ms; convention {}", t.elapsed().as_secs_f64() * 1e3, sam.spec().convention);
    warn_fallbacks(&[("the encoder runs", sam.provider()), ("the decoder runs", sam.decoder_provider())]);

    let t = Instant::now();
    let reference = match (&args.teach, &args.mask, &args.reference) {
        (Some(image), Some(mask), _) => {
            let img = decode(image)?;
            let pixels = Pixels::of(&img);
            let mask_img = decode(mask)?.to_luma8();
            if (mask_img.width() as usize, mask_img.height() as usize) != (pixels.width, pixels.height) {
                return Err(format!(
                    "the mask {} is {}x{} but the image {} is {}x{}: give a mask of the image's size",
                    mask.display(),
                    mask_img.width(),
                    mask_img.height(),
                    image.display(),
                    pixels.width,
                    pixels.height
                )
                .into());
            }
            let r = Reference::new(&sam, &pixels.view()?, mask_img.as_raw(), 0)?;
            note!("taught from {} in {:.1} ms", image.display(), t.elapsed().as_secs_f64() * 1e3);
            r
        }
        (_, _, Some(file)) => {
            let r = Reference::load(&sam, file)?;
            note!("reference {} loaded ({} examples)", file.display(), r.examples());
            r
        }
        _ => return Err("give --teach IMAGE --mask MASK, or --reference FILE".into()),
    };
    if let Some(path) = &args.save {
        reference.save(path)?;
        note!("reference saved to {}", path.display());
    }
    let Some(out) = &args.out else { return Ok(()) };
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;

    let find_options = FindOptions {
        mode: if args.all { FindMode::All } else { FindMode::Best },
        threshold: args.threshold,
        max_instances: args.max_instances,
        refine: !args.no_refine,
        colour: !args.no_colour,
    };
    let mut records = Vec::with_capacity(inputs.len());
    for (path, name) in inputs.iter().zip(&names) {
        let img = decode(path)?;
        let pixels = Pixels::of(&img);
        let (w, h) = (pixels.width, pixels.height);
        let result = reference.find(&sam, &pixels.view()?, &find_options).map_err(|e| format!("{}: {e}", path.display()))?;
        let mask = GrayImage::from_raw(w as u32, h as u32, result.mask.clone()).ok_or("mask size mismatch")?;
        let written = if let Some(labels) = &result.labels {
            let p = out.join(format!("{name}_labels.png"));
            let img: ImageBuffer<Luma<u16>, Vec<u16>> =
                ImageBuffer::from_raw(w as u32, h as u32, labels.clone()).ok_or("label size mismatch")?;
            img.save(&p).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            p
        } else {
            let p = out.join(format!("{name}_mask.png"));
            mask.save(&p).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            p
        };
        if args.overlay {
            let p = out.join(format!("{name}_overlay.png"));
            make_overlay(&display_rgb(&img), &mask).save(&p).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        }
        say!("{}", line(name, &result));
        records.push(record(path, &written, &result));
    }
    let json = out.join("found.json");
    let doc = serde_json::json!({ "threshold": args.threshold, "mode": if args.all { "all" } else { "best" }, "images": records });
    std::fs::write(&json, serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?)
        .map_err(|e| format!("cannot write {}: {e}", json.display()))?;
    note!("{} images searched; records in {}", inputs.len(), json.display());
    Ok(())
}

/// One line per image: what was found, and the best match's evidence.
fn line(name: &str, r: &FindResult) -> String {
    let present = r.instances.iter().filter(|f| f.present).count();
    match r.instances.first() {
        Some(best) => format!(
            "{name}: {} (score {:.3}, similarity {:.3}, colour {:.3}, area {})",
            if present == 0 {
                "absent".to_string()
            } else if r.labels.is_some() {
                format!("{present} found")
            } else {
                "present".to_string()
            },
            best.score,
            best.similarity,
            best.colour,
            best.area
        ),
        None => format!("{name}: none found"),
    }
}

fn record(image: &std::path::Path, written: &std::path::Path, r: &FindResult) -> serde_json::Value {
    let found: Vec<serde_json::Value> = r
        .instances
        .iter()
        .enumerate()
        .map(|(i, f)| {
            serde_json::json!({
                "id": i + 1, "present": f.present, "score": f.score, "bbox_xyxy": f.bbox, "area": f.area,
                "predicted_iou": f.predicted_iou, "point": [f.point.0, f.point.1], "similarity": f.similarity, "colour": f.colour,
            })
        })
        .collect();
    let s = &r.stats;
    serde_json::json!({
        "image": image, "output": written, "width": r.width, "height": r.height, "found": found,
        "stats": { "encoder_ms": s.encoder_ms, "maps_ms": s.maps_ms, "decoder_ms": s.decoder_ms, "decoder_runs": s.decoder_runs,
                   "postprocess_ms": s.postprocess_ms },
    })
}
