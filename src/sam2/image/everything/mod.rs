//! SAM2 "segment everything": every object in the picture from one call, as SAM2's
//! `SAM2AutomaticMaskGenerator` (sam2 1.1.0, `automatic_mask_generator.py`, `utils/amg.py`) finds them.
//!
//! The reference's order of operations, reproduced here for one crop (the whole image):
//! 1. a grid of `points_per_side`² points, `(i + 0.5) / n` of the image along each axis
//!    (`build_point_grid`: numpy `linspace` in f64, times (W, H), then f32); each point maps to model
//!    space as `(x / W) * S`, `(y / H) * S` in f32 (`transform_coords(normalize=True)`);
//! 2. the decoder on each point alone (label 1, no mask input), all its multimask outputs kept
//!    (point-major, mask-minor order);
//! 3. with `min_mask_region_area > 0`: the predictor's hole/sprinkle clean-up on the decoder's masks
//!    at the decoder's resolution (8-connected background regions of at most that many low-res
//!    pixels become foreground, foreground specks become background; the predictor's threshold 0);
//! 4. predicted IoU `> pred_iou_thresh` (when that is > 0);
//! 5. the stability score on the masks upsampled to the image size (bilinear, half-pixel centres):
//!    `count(logit > t + offset) / count(logit > t - offset)` in f32; kept when `>= stability_score_thresh`
//!    (when that is > 0);
//! 6. binary mask `logit > mask_threshold`, its box (inclusive pixel indices, XYXY; an empty mask
//!    gets 0,0,0,0);
//! 7. box non-maximum suppression over all candidates (torchvision `nms`: scores = predicted IoU,
//!    stable descending order, box areas `(x1 - x0) * (y1 - y0)` in f32, suppressed when
//!    IoU `> box_nms_thresh`); the survivors in that order are the objects, ids 1, 2, ...
//!
//! Masks are kept as row runs, so thousands of candidates cost little memory. Crop layers
//! (`crop_n_layers > 0`) are not supported: they need an encoder run per crop.
//!
//! SAM1-family pairs (segment_anything's `SamAutomaticMaskGenerator`, the same steps without the
//! low-res clean-up) differ in the grid's mapping, the prompt's padding point and the masks the
//! decoder returns: `sam1.rs`.

mod grid;
mod options;
mod postprocess;
mod sam1;

use std::cmp::Ordering;
use std::sync::Arc;
use std::time::Instant;

use ort::session::Session;

use crate::alloc;
use crate::control::{self, Stage};
use crate::engine::{Batch, Budget};
use crate::error::{Error, Result};
use crate::image::ImageView;

use super::embedding::setting_key;
use super::spec::Family;
use super::{ms, Embedding, Sam2Segmenter};

pub use grid::{grid_1d, prompt_points};
pub use options::{EverythingOptions, MAX_POINTS_PER_BATCH, MAX_POINTS_PER_SIDE};
pub use postprocess::{nms, Run};

use postprocess::{bbox_of, remove_small_regions, scan};

/// The label image is 16-bit: at most this many objects are kept (the best by predicted IoU; the
/// rest are counted in `EverythingResult::dropped`).
pub const MAX_OBJECTS: usize = u16::MAX as usize;

/// One object found.
#[derive(Debug, Clone, PartialEq)]
pub struct EverythingObject {
    /// Its value in the label image: 1 for the first object, 2 for the second, ...
    pub id: u32,
    /// Box around the full mask, inclusive pixel indices (x0, y0, x1, y1); 0,0,0,0 for an empty mask.
    pub bbox: [u32; 4],
    /// Pixels of the full mask (also those painted over by smaller objects in the label image).
    pub area: u64,
    pub predicted_iou: f32,
    pub stability_score: f32,
    /// The prompt point, in image pixels.
    pub point: [f32; 2],
    /// Which of the decoder's multimask outputs the mask is (0..3).
    pub mask_index: u32,
    pub runs: Vec<Run>,
}

impl EverythingObject {
    /// The mask, 0/1, `width x height`.
    pub fn mask(&self, width: usize, height: usize) -> Vec<u8> {
        let mut m = vec![0u8; width * height];
        for r in &self.runs {
            let row = r.y as usize * width;
            m[row + r.x0 as usize..row + r.x1 as usize].fill(1);
        }
        m
    }
}

/// What a segment-everything call counted and measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EverythingStats {
    pub prompts: usize,
    pub decoder_runs: usize,
    /// Prompts per decoder run (1 for decoders without a prompt batch axis).
    pub batch: usize,
    pub masks_decoded: usize,
    pub after_iou: usize,
    pub after_stability: usize,
    /// Objects kept by NMS (before the 16-bit limit).
    pub after_nms: usize,
    pub encoder_reused: bool,
    pub encoder_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
}

/// Every object of one image, in the reference's order (predicted IoU, descending).
#[derive(Debug, Clone, PartialEq)]
pub struct EverythingResult {
    pub width: usize,
    pub height: usize,
    pub objects: Vec<EverythingObject>,
    /// Objects beyond `MAX_OBJECTS` that were not kept (the lowest predicted IoU).
    pub dropped: usize,
    pub stats: EverythingStats,
}

impl EverythingResult {
    /// Paints the label image: 0 = background, object k = k. Objects are painted largest first, so
    /// a smaller object lying on a larger one stays visible (equal areas: the higher id on top).
    /// `labels` holds `height` rows of `stride` values; only the first `width` of each are written.
    pub fn paint(&self, labels: &mut [u16], stride: usize) {
        for y in 0..self.height {
            labels[y * stride..y * stride + self.width].fill(0);
        }
        let mut order: Vec<&EverythingObject> = self.objects.iter().collect();
        order.sort_by(|a, b| b.area.cmp(&a.area).then(a.id.cmp(&b.id)));
        for o in order {
            for r in &o.runs {
                let row = r.y as usize * stride;
                labels[row + r.x0 as usize..row + r.x1 as usize].fill(o.id as u16);
            }
        }
    }
}

/// A candidate mask before NMS.
struct Candidate {
    point: [f32; 2],
    mask_index: u32,
    iou: f32,
    stability: f32,
    bbox: [u32; 4],
    area: u64,
    runs: Vec<Run>,
}

impl Sam2Segmenter {
    /// Whether the decoder takes a batch of prompts per run (a dynamic first axis of its point inputs).
    pub fn batched_prompts(&self) -> bool {
        self.spec.prompt_batch
    }

    /// Every object in `image` (or, when `None`, the image set last). The encoder runs only when the
    /// image is not the cached one; the last result is kept per session, keyed by the image and the
    /// options, so asking again (e.g. with a bigger buffer) costs nothing. Returns the result and
    /// whether it came from that cache.
    pub fn everything(&self, image: Option<&ImageView<'_>>, options: &EverythingOptions) -> Result<(Arc<EverythingResult>, bool)> {
        options.validate()?;
        if self.spec.family == Family::Sam1 {
            sam1::check_options(options)?;
        }
        let call = self.call_image(image)?;
        let key = call.key;
        let cached = {
            let state = self.state();
            // While the image set last is being encoded, the cached one is not "the image set last".
            let embedding =
                state.embedding.clone().filter(|e| key.is_none_or(|k| k == e.key)).filter(|_| key.is_some() || state.encoding.is_none());
            // The image set last serves only under the intensity setting it was encoded with.
            let embedding = embedding.filter(|e| key.is_some() || e.setting == setting_key(call.setting.as_ref()));
            let result = match (&embedding, &state.everything) {
                (Some(e), Some((k, o, r))) if *k == e.key && o == options => Some(r.clone()),
                _ => None,
            };
            (embedding, result)
        };
        if let (_, Some(result)) = &cached {
            return Ok((result.clone(), true));
        }
        let (embedding, encoder_stats) = self.embedding_for(&call, false)?;
        let mut result = self.run_everything(&embedding, options)?;
        result.stats.encoder_reused = encoder_stats.encoder_reused;
        result.stats.encoder_ms = encoder_stats.encoder_preprocess_ms + encoder_stats.encoder_ms;
        let result = Arc::new(result);
        self.state().everything = Some((embedding.key, *options, result.clone()));
        Ok((result, false))
    }

    fn run_everything(&self, embedding: &Embedding, options: &EverythingOptions) -> Result<EverythingResult> {
        let (w, h) = (embedding.width, embedding.height);
        let s = self.spec.image_size as f32;
        let points = prompt_points(options.points_per_side, (w, h));
        let model: Vec<[f32; 2]> = match self.spec.family {
            // The reference's transform_coords(normalize=True): x / W * S in f32.
            Family::Sam2 => points.iter().map(|p| [p[0] / w as f32 * s, p[1] / h as f32 * s]).collect(),
            Family::Sam1 => sam1::model_points(options.points_per_side, (w, h), self.spec.image_size),
        };
        let batch = if self.spec.prompt_batch { options.points_per_batch.min(self.max_prompt_batch()) } else { 1 };
        let mut stats = EverythingStats { prompts: points.len(), batch, ..EverythingStats::default() };
        let (t_mask, t_off) = (options.mask_threshold, options.stability_score_offset);
        // The reference adds and subtracts in f64 (Python floats), then compares in f32.
        let (t_hi, t_lo) = ((t_mask as f64 + t_off as f64) as f32, (t_mask as f64 - t_off as f64) as f32);
        let mut candidates: Vec<Candidate> = Vec::new();
        // Prompts per run: as many as the memory budget holds once a run measured ONNX Runtime's cost
        // of one (its outputs: 3 or 4 low-res masks per prompt, and the decoder's activations).
        let (mh, mw) = self.spec.mask_input_size;
        let own_per_prompt = match self.spec.family {
            Family::Sam2 => (4 * mh * mw * 4 + mh * mw * 4) as u64,
            // one mask at the image's size, and the low-res one
            Family::Sam1 => (w * h * 4 + mh * mw * 4) as u64,
        };
        let budget = Budget {
            max_memory_bytes: self.options().max_memory_bytes,
            fixed_bytes: 0,
            own_bytes_per_item: own_per_prompt,
            item: "prompt",
        };
        let costs = self.decoder.costs();
        const ONE_PROMPT: (usize, usize) = (0, 0);
        let mut done = 0;
        while done < model.len() {
            control::progress(Stage::Prompts, done as f32 / model.len() as f32)?;
            let sized = costs.batch(ONE_PROMPT, batch, &budget)?;
            let chunk = &model[done..model.len().min(done + if let Batch::Sized(n) = sized { n } else { 1 })];
            let chunk_start = done;
            done += chunk.len();
            let t0 = Instant::now();
            let decode = || self.decoder.with(|session, _| self.decode_points(session, embedding, chunk));
            let (shape, logits, iou) = match sized {
                Batch::Measure => costs.measure(ONE_PROMPT, chunk.len(), decode)?,
                Batch::Sized(_) => decode()?,
            };
            stats.decoder_ms += ms(t0, Instant::now());
            stats.decoder_runs += 1;
            let t1 = Instant::now();
            let [b, k, mh, mw] = shape;
            if b != chunk.len() || k == 0 || iou.len() < b * k || logits.len() != b * k * mh * mw {
                return Err(Error::unsupported_model(format!(
                    "decoder returned masks {shape:?} and {} IoU values for {} prompts",
                    iou.len(),
                    chunk.len()
                )));
            }
            // With 4 masks the first is the single-mask token: the generator uses the multimask outputs.
            let first = if k == 4 { 1 } else { 0 };
            for p in 0..b {
                let point = points[chunk_start + p];
                for m in first..k {
                    stats.masks_decoded += 1;
                    let score = iou[p * k + m];
                    let plane = &logits[(p * k + m) * mh * mw..(p * k + m + 1) * mh * mw];
                    let cleaned;
                    let plane = if options.min_mask_region_area > 0 {
                        let mut c = alloc::copy_of(plane, "a mask")?;
                        remove_small_regions(&mut c, (mw, mh), options.min_mask_region_area);
                        cleaned = c;
                        &cleaned[..]
                    } else {
                        plane
                    };
                    // NaN scores fail the filters, as torch's comparisons do
                    if options.pred_iou_thresh > 0.0 && score.partial_cmp(&options.pred_iou_thresh) != Some(Ordering::Greater) {
                        continue;
                    }
                    stats.after_iou += 1;
                    let counts = scan(plane, (mw, mh), (w, h), &[t_hi, t_lo], None);
                    let stability = counts[0] as f32 / counts[1] as f32;
                    if options.stability_score_thresh > 0.0
                        && !matches!(stability.partial_cmp(&options.stability_score_thresh), Some(Ordering::Greater | Ordering::Equal))
                    {
                        continue;
                    }
                    stats.after_stability += 1;
                    let mut runs = Vec::new();
                    let area = scan(plane, (mw, mh), (w, h), &[t_mask], Some(&mut runs))[0];
                    let bbox = bbox_of(&runs);
                    candidates.push(Candidate { point, mask_index: (m - first) as u32, iou: score, stability, bbox, area, runs });
                }
            }
            stats.postprocess_ms += ms(t1, Instant::now());
        }
        control::progress(Stage::Prompts, 1.0)?;
        let t2 = Instant::now();
        let boxes: Vec<[u32; 4]> = candidates.iter().map(|c| c.bbox).collect();
        let scores: Vec<f32> = candidates.iter().map(|c| c.iou).collect();
        let keep = nms(&boxes, &scores, options.box_nms_thresh);
        stats.after_nms = keep.len();
        let dropped = keep.len().saturating_sub(MAX_OBJECTS);
        let mut slots: Vec<Option<Candidate>> = candidates.into_iter().map(Some).collect();
        let objects = keep
            .iter()
            .take(MAX_OBJECTS)
            .enumerate()
            .map(|(n, &i)| {
                let c = slots[i].take().expect("nms keeps each index once");
                EverythingObject {
                    id: n as u32 + 1,
                    bbox: c.bbox,
                    area: c.area,
                    predicted_iou: c.iou,
                    stability_score: c.stability,
                    point: c.point,
                    mask_index: c.mask_index,
                    runs: c.runs,
                }
            })
            .collect();
        stats.postprocess_ms += ms(t2, Instant::now());
        Ok(EverythingResult { width: w, height: h, objects, dropped, stats })
    }

    /// The decoder on `points` (model space), one label-1 point each, no mask input: all at once when
    /// the decoder has a prompt batch axis (else `points` holds one). Returns the mask output's shape
    /// [B, K, h, w], its logits and the IoU predictions [B, K].
    fn decode_points(&self, session: &mut Session, embedding: &Embedding, points: &[[f32; 2]]) -> Result<([usize; 4], Vec<f32>, Vec<f32>)> {
        let spec = &self.spec;
        let b = points.len();
        if spec.family == Family::Sam1 {
            let (coords, labels) = sam1::prompts(points);
            return self.decode_batch(session, embedding, &coords, &labels, b);
        }
        if !spec.layout.is_transformers() {
            let coords: Vec<f32> = points.iter().flat_map(|p| [p[0], p[1]]).collect();
            return self.decode_batch(session, embedding, &coords, &vec![1f32; b], b);
        }
        // transformers' layout: one object per point, each the point and the (0, 0) / -1 padding
        // point (no box), as `transformers_prompt` does for a click.
        let coords: Vec<f32> = points.iter().flat_map(|p| [p[0], p[1], 0.0, 0.0]).collect();
        let labels: Vec<f32> = points.iter().flat_map(|_| [1.0, -1.0]).collect();
        self.decode_object_batch(session, embedding, (&coords, &labels, &[]), b)
    }
}
