//! `segrt sam2`: the object at clicks or inside a box, one object per box (several `--box` or
//! `--boxes FILE`: one mask file per box, from one many-prompts call), or with `--everything` every
//! object (a 16-bit label image, an overlay and the records).

use std::path::PathBuf;
use std::time::Instant;

use image::{GrayImage, RgbImage};

use segrt::image::intensity::Intensity;
use segrt::sam2::{BoxPrompt, Point, Prompt, Sam2Segmenter};
use segrt::Options;

use segrt::contours::MaskView;

use crate::annotate::objects;
use crate::args::{count, parse_numbers, warn_fallbacks, ArenaArgs, CacheArgs, SessionArgs};
use crate::batch::Batch;
use crate::files::{create_parent_folders, decode, display_rgb, make_overlay, same_file_name, Pixels};
use crate::folder_run::ImageRunArgs;
use crate::medical::{self, Volume};
use crate::CliResult;

mod batch;

#[derive(clap::Args)]
pub struct Sam2Args {
    /// The SAM2 image encoder (.onnx): run once per image
    #[arg(long)]
    encoder: PathBuf,
    /// The SAM2 prompt decoder (.onnx) exported with that encoder: run once per prompt
    #[arg(long)]
    decoder: PathBuf,
    /// The image to segment (PNG, JPEG, BMP, TIFF or PNM), a DICOM file, a DICOM series (a folder of
    /// .dcm files) or a NIfTI volume (.nii, .nii.gz). Several images or folders of images (or
    /// --shard, --resume, --log): a batch, the same prompts on each, --out and --overlay are folders
    /// receiving <stem>_mask.png (--everything: 16-bit <stem>_labels.png; boxes: <stem>_box_0001.png, ...)
    #[arg(required = true)]
    images: Vec<PathBuf>,
    /// The slice of a DICOM series or NIfTI volume, 0 = the first in the series' order [default: the middle one]
    #[arg(long, value_name = "K", value_parser = count)]
    slice: Option<usize>,
    /// A click X,Y[,LABEL] in image pixels; LABEL 1 = include (default), 0 = exclude. Repeatable
    #[arg(long = "point", value_name = "X,Y[,LABEL]", allow_hyphen_values = true)]
    points: Vec<String>,
    /// A box X1,Y1,X2,Y2 in image pixels. Repeatable: with several boxes (or --boxes), each box is
    /// one object, segmented in one call, and --out is a folder receiving box_0001.png, box_0002.png, ...
    #[arg(long = "box", value_name = "X1,Y1,X2,Y2", allow_hyphen_values = true)]
    bbox: Vec<String>,
    /// A file of boxes, one X1,Y1,X2,Y2 per line (blank lines and lines starting with # skipped):
    /// one object per box, after any --box, segmented in one call; --out is a folder (see --box)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["points", "refine"])]
    boxes: Option<PathBuf>,
    /// Run the prompt a second time with the first result as mask input (refinement)
    #[arg(long)]
    refine: bool,
    /// Where to write the mask (single channel, 0/255, the image's size)
    #[arg(long)]
    out: PathBuf,
    /// Also write an overlay PNG here
    #[arg(long)]
    overlay: Option<PathBuf>,
    /// ONNX Runtime intra-op threads (0 = one per physical core)
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = count)]
    threads: usize,
    #[command(flatten)]
    cache: CacheArgs,
    #[command(flatten)]
    arena: ArenaArgs,
    #[command(flatten)]
    session: SessionArgs,
    /// Segment everything (a grid of prompts, as SAM2's automatic mask generator, or SAM's on a
    /// SAM1-family pair): --out gets a 16-bit label image (0 = background, object k = k), --overlay colours each object
    #[arg(long, conflicts_with_all = ["points", "bbox", "boxes", "refine"])]
    everything: bool,
    /// --everything: also write the objects' records here (JSON)
    #[arg(long, value_name = "FILE", requires = "everything")]
    json: Option<PathBuf>,
    /// --everything: prompts along each side of the image
    #[arg(long, default_value_t = 32, value_name = "N", requires = "everything", allow_negative_numbers = true, value_parser = count)]
    points_per_side: usize,
    /// --everything: prompts per decoder run (decoders with a prompt batch axis)
    #[arg(long, default_value_t = 64, value_name = "N", requires = "everything", allow_negative_numbers = true, value_parser = count)]
    points_per_batch: usize,
    /// --everything: keep masks whose predicted IoU is above this
    #[arg(long, default_value_t = 0.8, value_name = "T", requires = "everything", allow_negative_numbers = true)]
    pred_iou_thresh: f32,
    /// --everything: keep masks whose stability score is at least this
    #[arg(long, default_value_t = 0.95, value_name = "T", requires = "everything", allow_negative_numbers = true)]
    stability_score_thresh: f32,
    /// --everything: the stability score's logit offset
    #[arg(long, default_value_t = 1.0, value_name = "V", requires = "everything", allow_negative_numbers = true)]
    stability_score_offset: f32,
    /// --everything: logit threshold of a mask pixel
    #[arg(long, default_value_t = 0.0, value_name = "V", requires = "everything", allow_negative_numbers = true)]
    mask_threshold: f32,
    /// --everything: box IoU above which the lower-scored mask is dropped
    #[arg(long, default_value_t = 0.7, value_name = "T", requires = "everything", allow_negative_numbers = true)]
    box_nms_thresh: f32,
    /// --everything: remove holes and specks of at most N pixels of the decoder's mask resolution (0 = off; SAM2 pairs only)
    #[arg(long, default_value_t = 0, value_name = "N", requires = "everything", allow_negative_numbers = true, value_parser = count)]
    min_mask_region_area: usize,
    #[command(flatten)]
    run_args: ImageRunArgs,
}

/// The image to segment, read before any model loads: its pixels, the picture for overlays, the
/// intensity stage (a DICOM file's own window when no flag is given) and a line for the report.
struct Input {
    pixels: Pixels,
    display: RgbImage,
    intensity: Option<Intensity>,
    note: String,
}

fn load_input(args: &Sam2Args) -> CliResult<Input> {
    let flags = args.run_args.intensity.intensity()?;
    let path = &args.images[0];
    if medical::is_medical(path) {
        if args.run_args.intensity.rescale.is_some() {
            return Err("--rescale: DICOM and NIfTI inputs carry their own rescale (RescaleSlope/Intercept, scl_slope/scl_inter), which segrt applies".into());
        }
        let volume = Volume::open(path)?;
        let n = volume.slice_count();
        let k = args.slice.unwrap_or(n / 2);
        if k >= n {
            return Err(format!("--slice {k}: {} has {n} slice(s), numbered from 0", path.display()).into());
        }
        let (intensity, from_file) = volume.intensity(flags);
        let slice = volume.slice(k)?;
        let display = slice.display_rgb(Volume::display_range(intensity.as_ref()));
        let note = format!(
            "{}{}{}",
            volume.describe(),
            if n > 1 { format!("; slice {k} of {n}") } else { String::new() },
            from_file.map(|f| format!("; {f}")).unwrap_or_default()
        );
        return Ok(Input { pixels: slice.pixels(), display, intensity, note });
    }
    if args.slice.is_some() {
        return Err("--slice: only for DICOM series and NIfTI volumes".into());
    }
    let img = decode(path)?;
    Ok(Input { pixels: Pixels::of(&img), display: display_rgb(&img), intensity: flags, note: String::new() })
}

pub fn sam2(args: Sam2Args, ort: Option<PathBuf>) -> CliResult {
    let one = &args.images[0];
    if args.images.len() > 1 || (one.is_dir() && !medical::is_medical(one)) || Batch::wanted(&args.run_args.batch) {
        return batch::sam2_batch(args, ort);
    }
    batch::check_one(&args)?;
    if args.overlay.as_ref().is_some_and(|o| same_file_name(o, &args.out)) {
        return Err(format!("--overlay and --out both name {}: give two different files", args.out.display()).into());
    }
    let input = load_input(&args)?;
    // `--out out\mask.png` in a fresh folder: make `out` first, and before the models load.
    create_parent_folders([Some(&args.out), args.overlay.as_ref(), args.json.as_ref()].into_iter().flatten())?;
    if args.everything {
        return sam2_everything(args, ort, input);
    }
    if args.boxes.is_some() || args.bbox.len() > 1 {
        return sam2_boxes(args, ort);
    }
    let mut prompt = click_prompt(&args)?;
    let sam = load_pair(&args, ort, input.intensity, |sam| {
        let info = sam.info();
        format!("model cache: encoder {}, decoder {}", info.encoder_cache.status.as_str(), info.decoder_cache.status.as_str())
    })?;
    let info = sam.info();
    let pixels = &input.pixels;
    let (w, h) = (pixels.width, pixels.height);
    let view = pixels.view()?;
    if !input.note.is_empty() {
        note!("{}", input.note);
    }
    note!("image {w}x{h} {}; intensity: {}", pixels.describe(), info.session.intensity);
    let mut out = sam.predict(Some(&view), &prompt, false).map_err(|e| e.to_string())?;
    report_click(&out, "click");
    if args.refine {
        prompt.refine = true;
        out = sam.predict(Some(&view), &prompt, false).map_err(|e| e.to_string())?;
        report_click(&out, "refined");
    }
    let mask = GrayImage::from_raw(w as u32, h as u32, out.mask).ok_or("mask size mismatch")?;
    mask.save(&args.out).map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    if let Some(path) = &args.overlay {
        make_overlay(&input.display, &mask).save(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    note!("mask written to {} ({} pixels)", args.out.display(), mask.as_raw().iter().filter(|v| **v != 0).count());
    let score = out.run.scores[out.run.chosen] as f64;
    batch::annotate_one(&args, (w, h), |shapes| {
        Ok(objects::whole(&MaskView::new(mask.as_raw(), w, h, 0)?, shapes, 1, Some(score), None)?.into_iter().collect())
    })
}

/// The clicks and box of a click prompt (`--point`, one `--box`).
fn click_prompt(args: &Sam2Args) -> CliResult<Prompt> {
    let mut prompt = Prompt { refine: false, ..Prompt::default() };
    for p in &args.points {
        let v = parse_numbers(p, "--point", &[2, 3])?;
        prompt.points.push(Point { x: v[0], y: v[1], label: v.get(2).map_or(1, |l| *l as i32) });
    }
    if let Some(b) = args.bbox.first() {
        let v = parse_numbers(b, "--box", &[4])?;
        prompt.bbox = Some(BoxPrompt { x1: v[0], y1: v[1], x2: v[2], y2: v[3] });
    }
    Ok(prompt)
}

/// The boxes of `--box` (each) and `--boxes FILE` (one X1,Y1,X2,Y2 per line), in that order.
fn read_boxes(args: &Sam2Args) -> CliResult<Vec<BoxPrompt>> {
    let to_box = |v: Vec<f32>| BoxPrompt { x1: v[0], y1: v[1], x2: v[2], y2: v[3] };
    let mut boxes = Vec::new();
    for b in &args.bbox {
        boxes.push(to_box(parse_numbers(b, "--box", &[4])?));
    }
    if let Some(path) = &args.boxes {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read --boxes {}: {e}", path.display()))?;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            boxes.push(to_box(parse_numbers(line, &format!("--boxes {} line {}", path.display(), i + 1), &[4])?));
        }
    }
    if boxes.is_empty() {
        return Err("no boxes: the --boxes file holds none (one X1,Y1,X2,Y2 per line)".into());
    }
    if boxes.len() > segrt::sam2::MAX_PROMPTS {
        return Err(format!("{} boxes: at most {} are segmented in one call", boxes.len(), segrt::sam2::MAX_PROMPTS).into());
    }
    Ok(boxes)
}

/// `segrt sam2` with several boxes: one object per box from one many-prompts call; `--out` is a
/// folder receiving `box_0001.png`, ... (0/255, the image's size, in the boxes' order), `--overlay`
/// shows them all.
fn sam2_boxes(args: Sam2Args, ort: Option<PathBuf>) -> CliResult {
    let boxes = read_boxes(&args)?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("cannot create the --out folder {}: {e}", args.out.display()))?;
    let sam = load_pair(&args, ort, args.run_args.intensity.intensity()?, prompt_batch)?;
    let img = decode(&args.images[0])?;
    let pixels = Pixels::of(&img);
    let (w, h) = (pixels.width, pixels.height);
    let view = pixels.view()?;
    note!("image {w}x{h} {}; intensity: {}", pixels.describe(), sam.info().session.intensity);
    let prompts: Vec<Prompt> = boxes.iter().map(|b| Prompt { bbox: Some(*b), ..Prompt::default() }).collect();
    let mut buffers: Vec<Vec<u8>> = boxes.iter().map(|_| vec![0u8; w * h]).collect();
    let mut masks =
        buffers.iter_mut().map(|b| segrt::MaskMut::new(b, w, h, 0)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
    let run = sam.predict_many(Some(&view), &prompts, &mut masks).map_err(|e| e.to_string())?;
    drop(masks);
    let s = &run.stats;
    note!(
        "{} boxes: encoder {:.1} ms | {} decoder runs (up to {} boxes each), {:.1} ms | upsample+threshold {:.1} ms",
        s.prompts,
        s.encoder_ms,
        s.decoder_runs,
        s.batch,
        s.decoder_ms,
        s.postprocess_ms
    );
    batch::annotate_one(&args, (w, h), |shapes| {
        let mut all = Vec::new();
        for (mask, score) in buffers.iter().zip(&run.scores) {
            all.extend(objects::whole(&MaskView::new(mask, w, h, 0)?, shapes, 1, Some(*score as f64), None)?);
        }
        Ok(all)
    })?;
    let mut union = vec![0u8; w * h];
    for (i, (mask, score)) in buffers.into_iter().zip(&run.scores).enumerate() {
        for (u, m) in union.iter_mut().zip(&mask) {
            *u |= *m;
        }
        let path = args.out.join(format!("box_{:04}.png", i + 1));
        GrayImage::from_raw(w as u32, h as u32, mask)
            .ok_or("mask size mismatch")?
            .save(&path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let b = boxes[i];
        note!("box {} ({},{},{},{}): predicted IoU {score:.3} -> {}", i + 1, b.x1, b.y1, b.x2, b.y2, path.display());
    }
    if let Some(path) = &args.overlay {
        let union = GrayImage::from_raw(w as u32, h as u32, union).ok_or("mask size mismatch")?;
        make_overlay(&display_rgb(&img), &union).save(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// `segrt sam2 --everything`: the label image, an overlay and the records.
fn sam2_everything(args: Sam2Args, ort: Option<PathBuf>, input: Input) -> CliResult {
    if args.overlay.as_ref().is_some_and(|o| same_file_name(o, &args.out)) {
        return Err(format!("--overlay and --out both name {}: give two different files", args.out.display()).into());
    }
    let opts = everything_options(&args)?;
    let sam = load_pair(&args, ort, input.intensity, prompt_batch)?;
    let rgb = input.display;
    let pixels = input.pixels;
    if !input.note.is_empty() {
        note!("{}", input.note);
    }
    let (w, h) = (pixels.width, pixels.height);
    let view = pixels.view()?;
    note!("image {w}x{h} {}; intensity: {}", pixels.describe(), sam.info().session.intensity);
    let (result, _) = sam.everything(Some(&view), &opts).map_err(|e| e.to_string())?;
    let s = &result.stats;
    note!(
        "everything: encoder {:.1} ms | {} prompts in {} decoder runs, {:.1} ms ({:.1} prompts/s) | post-processing {:.1} ms | \
         masks {} -> IoU filter {} -> stability filter {} -> NMS {} objects{}",
        s.encoder_ms,
        s.prompts,
        s.decoder_runs,
        s.decoder_ms,
        s.prompts as f64 / (s.decoder_ms / 1e3).max(1e-9),
        s.postprocess_ms,
        s.masks_decoded,
        s.after_iou,
        s.after_stability,
        s.after_nms,
        if result.dropped > 0 { format!(" ({} beyond 65535 left out)", result.dropped) } else { String::new() }
    );
    let mut labels = vec![0u16; w * h];
    result.paint(&mut labels, w);
    let label_img: image::ImageBuffer<image::Luma<u16>, Vec<u16>> =
        image::ImageBuffer::from_raw(w as u32, h as u32, labels.clone()).ok_or("label size mismatch")?;
    label_img.save(&args.out).map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    if let Some(path) = &args.overlay {
        let mut out = rgb.clone();
        for (px, l) in out.pixels_mut().zip(&labels) {
            if *l != 0 {
                // a colour per object, spread over the hue circle by a golden-ratio step
                let hue = (*l as f32 * 0.618_034).fract() * 6.0;
                let x = 1.0 - (hue % 2.0 - 1.0).abs();
                let (r, g, b) = match hue as u32 {
                    0 => (1.0, x, 0.0),
                    1 => (x, 1.0, 0.0),
                    2 => (0.0, 1.0, x),
                    3 => (0.0, x, 1.0),
                    4 => (x, 0.0, 1.0),
                    _ => (1.0, 0.0, x),
                };
                for (p, c) in px.0.iter_mut().zip([r, g, b]) {
                    *p = ((*p as f32 + c * 255.0) / 2.0) as u8;
                }
            }
        }
        out.save(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.json {
        let objects: Vec<serde_json::Value> = result
            .objects
            .iter()
            .map(|o| {
                serde_json::json!({
                    "id": o.id, "bbox_xyxy": o.bbox, "area": o.area, "predicted_iou": o.predicted_iou,
                    "stability_score": o.stability_score, "point": o.point, "mask_index": o.mask_index,
                })
            })
            .collect();
        let doc = serde_json::json!({
            "image": args.images[0], "width": w, "height": h, "objects": objects, "dropped": result.dropped,
            "options": {
                "points_per_side": opts.points_per_side, "points_per_batch": opts.points_per_batch,
                "pred_iou_thresh": opts.pred_iou_thresh, "stability_score_thresh": opts.stability_score_thresh,
                "stability_score_offset": opts.stability_score_offset, "mask_threshold": opts.mask_threshold,
                "box_nms_thresh": opts.box_nms_thresh, "min_mask_region_area": opts.min_mask_region_area,
            },
            "stats": {
                "prompts": s.prompts, "decoder_runs": s.decoder_runs, "batch": s.batch, "masks_decoded": s.masks_decoded,
                "after_iou": s.after_iou, "after_stability": s.after_stability, "after_nms": s.after_nms,
                "encoder_ms": s.encoder_ms, "decoder_ms": s.decoder_ms, "postprocess_ms": s.postprocess_ms,
            },
        });
        std::fs::write(path, serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    note!("{} objects; labels written to {}", result.objects.len(), args.out.display());
    batch::annotate_one(&args, (w, h), |shapes| {
        let scores: Vec<f64> = result.objects.iter().map(|o| o.predicted_iou as f64).collect();
        objects::per_label(&MaskView::new(&labels, w, h, 0)?, shapes, |l| scores.get(l as usize - 1).map(|s| (1, Some(*s))))
    })
}

/// Segment-everything's options from the flags, checked.
fn everything_options(args: &Sam2Args) -> CliResult<segrt::sam2::EverythingOptions> {
    let opts = segrt::sam2::EverythingOptions {
        points_per_side: args.points_per_side,
        points_per_batch: args.points_per_batch,
        pred_iou_thresh: args.pred_iou_thresh,
        stability_score_thresh: args.stability_score_thresh,
        stability_score_offset: args.stability_score_offset,
        mask_threshold: args.mask_threshold,
        box_nms_thresh: args.box_nms_thresh,
        min_mask_region_area: args.min_mask_region_area,
        crop_n_layers: 0,
    };
    opts.validate().map_err(|e| format!("--everything: {}", e.message))?;
    Ok(opts)
}

/// The pair of `args` with the command's session flags and `intensity`, its load noted ("models
/// loaded in ...; convention; provider; " and what `more` says of it), its fallbacks warned about.
fn load_pair(
    args: &Sam2Args,
    ort: Option<PathBuf>,
    intensity: Option<Intensity>,
    more: impl Fn(&Sam2Segmenter) -> String,
) -> CliResult<Sam2Segmenter> {
    let mut options =
        Options { ort_path: ort, intra_threads: args.threads, cache: args.cache.mode(), arena: args.arena.policy(), ..Options::default() };
    args.session.apply(&mut options)?;
    let t = Instant::now();
    let sam = Sam2Segmenter::from_files(&args.encoder, &args.decoder, options).map_err(|e| e.to_string())?;
    sam.core().set_intensity(intensity).map_err(|e| e.to_string())?;
    note!(
        "models loaded in {:.1} ms; convention {}; provider {}; {}",
        t.elapsed().as_secs_f64() * 1e3,
        sam.spec().convention,
        sam.placement(),
        more(&sam)
    );
    warn_fallbacks(&[("the encoder runs", sam.provider()), ("the decoder runs", sam.decoder_provider())]);
    Ok(sam)
}

/// "prompt batch yes / no" of a loaded pair.
fn prompt_batch(sam: &Sam2Segmenter) -> String {
    format!("prompt batch {}", if sam.batched_prompts() { "yes" } else { "no (one prompt per decoder run)" })
}

fn report_click(out: &segrt::sam2::Sam2Output, what: &str) {
    let s = &out.run.stats;
    note!(
        "{what}: encoder {} | decoder {:.1} ms | upsample+threshold {:.1} ms | mask {} of {} (predicted IoU {:.3})",
        if s.encoder_reused {
            "cached".to_string()
        } else {
            format!("{:.1} ms (+ {:.1} ms pre-processing)", s.encoder_ms, s.encoder_preprocess_ms)
        },
        s.decoder_ms,
        s.postprocess_ms,
        out.run.chosen,
        out.run.scores.len(),
        out.run.scores[out.run.chosen]
    );
}
