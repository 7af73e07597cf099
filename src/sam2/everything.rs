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

use std::cmp::Ordering;
use std::sync::Arc;
use std::time::Instant;

use ort::session::{Session, SessionInputValue};
use ort::value::{Tensor, TensorRef};

use crate::alloc;
use crate::control::{self, Stage};
use crate::engine::io::f32_output;
use crate::error::{Error, ErrorKind, Result};
use crate::image::{check_size, ImageView};

use super::spec::Family;
use super::{ms, Embedding, Sam2Segmenter};
use super::{number_input, orig_im_size_input};

/// Most points per side accepted (256² = 65 536 prompts).
pub const MAX_POINTS_PER_SIDE: usize = 256;
/// Most prompts per decoder run accepted.
pub const MAX_POINTS_PER_BATCH: usize = 4096;
/// The label image is 16-bit: at most this many objects are kept (the best by predicted IoU; the
/// rest are counted in `EverythingResult::dropped`).
pub const MAX_OBJECTS: usize = u16::MAX as usize;

/// Options of `Sam2Segmenter::everything`, with `SAM2AutomaticMaskGenerator`'s defaults and meaning.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EverythingOptions {
    pub points_per_side: usize,
    /// Prompts per decoder run where the decoder takes a batch of prompts (results do not depend on it).
    pub points_per_batch: usize,
    pub pred_iou_thresh: f32,
    pub stability_score_thresh: f32,
    pub stability_score_offset: f32,
    pub mask_threshold: f32,
    pub box_nms_thresh: f32,
    /// 0 = off; else holes and specks of at most this many pixels of the decoder's mask resolution
    /// are removed before anything else (what SAM2's generator does with it).
    pub min_mask_region_area: usize,
    /// Must be 0 (crops are not supported).
    pub crop_n_layers: usize,
}

impl Default for EverythingOptions {
    fn default() -> Self {
        EverythingOptions {
            points_per_side: 32,
            points_per_batch: 64,
            pred_iou_thresh: 0.8,
            stability_score_thresh: 0.95,
            stability_score_offset: 1.0,
            mask_threshold: 0.0,
            box_nms_thresh: 0.7,
            min_mask_region_area: 0,
            crop_n_layers: 0,
        }
    }
}

impl EverythingOptions {
    /// Refuses values the reference does not accept or that make no sense, naming the field.
    pub fn validate(&self) -> Result<()> {
        if self.points_per_side == 0 || self.points_per_side > MAX_POINTS_PER_SIDE {
            return Err(Error::invalid(format!(
                "points_per_side is {}: it must be within 1..={MAX_POINTS_PER_SIDE}",
                self.points_per_side
            )));
        }
        if self.points_per_batch == 0 || self.points_per_batch > MAX_POINTS_PER_BATCH {
            return Err(Error::invalid(format!(
                "points_per_batch is {}: it must be within 1..={MAX_POINTS_PER_BATCH}",
                self.points_per_batch
            )));
        }
        let unit = |v: f32, what: &str| -> Result<()> {
            if !(0.0..=1.0).contains(&v) {
                return Err(Error::invalid(format!("{what} is {v}: it must be a number within [0, 1]")));
            }
            Ok(())
        };
        unit(self.pred_iou_thresh, "pred_iou_thresh")?;
        unit(self.stability_score_thresh, "stability_score_thresh")?;
        unit(self.box_nms_thresh, "box_nms_thresh")?;
        if !(self.stability_score_offset.is_finite() && (0.0..=1000.0).contains(&self.stability_score_offset)) {
            return Err(Error::invalid(format!(
                "stability_score_offset is {}: it must be a number within [0, 1000]",
                self.stability_score_offset
            )));
        }
        if !(self.mask_threshold.is_finite() && self.mask_threshold.abs() <= 1000.0) {
            return Err(Error::invalid(format!("mask_threshold is {}: it must be a number within [-1000, 1000]", self.mask_threshold)));
        }
        if self.min_mask_region_area > u32::MAX as usize {
            return Err(Error::invalid(format!("min_mask_region_area is {}: too large", self.min_mask_region_area)));
        }
        if self.crop_n_layers != 0 {
            return Err(Error::invalid(format!("crop_n_layers is {}: crop layers are not supported, use 0", self.crop_n_layers)));
        }
        Ok(())
    }
}

/// A horizontal run of mask pixels: row `y`, columns `x0..x1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub y: u32,
    pub x0: u32,
    pub x1: u32,
}

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

/// The reference's point grid (`build_point_grid`) for one side: numpy `linspace(1/2n, 1 - 1/2n, n)`.
pub fn grid_1d(n: usize) -> Vec<f64> {
    let offset = 1.0 / (2.0 * n as f64);
    let (start, stop) = (offset, 1.0 - offset);
    if n == 1 {
        return vec![start];
    }
    let step = (stop - start) / (n - 1) as f64;
    let mut v: Vec<f64> = (0..n).map(|i| i as f64 * step + start).collect();
    v[n - 1] = stop;
    v
}

/// The prompt points in image pixels (x varies fastest, as the reference's grid).
pub fn prompt_points(n: usize, (w, h): (usize, usize)) -> Vec<[f32; 2]> {
    let g = grid_1d(n);
    let mut points = Vec::with_capacity(n * n);
    for gy in &g {
        for gx in &g {
            points.push([(gx * w as f64) as f32, (gy * h as f64) as f32]);
        }
    }
    points
}

/// One axis of torch's bilinear `interpolate(align_corners=False)` without a scale factor: for each
/// output index, the two source indices and their weights.
fn taps(n_in: usize, n_out: usize) -> Vec<(usize, usize, f32, f32)> {
    let scale = n_in as f32 / n_out as f32;
    (0..n_out)
        .map(|o| {
            let src = (scale * (o as f32 + 0.5) - 0.5).max(0.0);
            let i0 = (src.floor() as usize).min(n_in - 1);
            let i1 = if i0 < n_in - 1 { i0 + 1 } else { i0 };
            let l1 = (src - i0 as f32).clamp(0.0, 1.0);
            (i0, i1, 1.0 - l1, l1)
        })
        .collect()
}

/// Scans the bilinear upsampling of `plane` (`sw x sh`) to `w x h` without building it: counts the
/// pixels above each of `thresholds`, and with `runs` collects the runs above `thresholds[0]`.
///
/// A bilinear value lies between the four source values around it, so a span of output pixels
/// whose corners are all above (or none above) a threshold is decided at once.
fn scan(plane: &[f32], (sw, sh): (usize, usize), (w, h): (usize, usize), thresholds: &[f32], mut runs: Option<&mut Vec<Run>>) -> Vec<u64> {
    let (xs, ys) = (taps(sw, w), taps(sh, h));
    // Output columns grouped by their left source column: spans[k] = (x_start, x_end, i0).
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for (x, t) in xs.iter().enumerate() {
        match spans.last_mut() {
            Some(s) if s.2 == t.0 => s.1 = x + 1,
            _ => spans.push((x, x + 1, t.0)),
        }
    }
    let n = thresholds.len();
    let mut counts = vec![0u64; n];
    let mut values = vec![0f32; w];
    let mut row_pair = (usize::MAX, usize::MAX);
    let (mut lo, mut hi) = (vec![0f32; spans.len()], vec![0f32; spans.len()]);
    for (y, &(j0, j1, h0, h1)) in ys.iter().enumerate() {
        let (r0, r1) = (&plane[j0 * sw..(j0 + 1) * sw], &plane[j1 * sw..(j1 + 1) * sw]);
        if row_pair != (j0, j1) {
            for (k, &(_, _, i0)) in spans.iter().enumerate() {
                let i1 = if i0 < sw - 1 { i0 + 1 } else { i0 };
                let c = [r0[i0], r0[i1], r1[i0], r1[i1]];
                lo[k] = c.iter().copied().fold(f32::INFINITY, f32::min);
                hi[k] = c.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            }
            row_pair = (j0, j1);
        }
        let mut run_start: Option<usize> = None;
        let push = |x: usize, on: bool, run_start: &mut Option<usize>, runs: &mut Option<&mut Vec<Run>>| {
            if let Some(rs) = runs.as_deref_mut() {
                match (on, *run_start) {
                    (true, None) => *run_start = Some(x),
                    (false, Some(s)) => {
                        rs.push(Run { y: y as u32, x0: s as u32, x1: x as u32 });
                        *run_start = None;
                    }
                    _ => {}
                }
            }
        };
        for (k, &(xa, xb, _)) in spans.iter().enumerate() {
            let mixed = thresholds.iter().any(|t| !(lo[k] > *t || hi[k] <= *t));
            if mixed {
                for (x, v) in values.iter_mut().enumerate().take(xb).skip(xa) {
                    let (i0, i1, w0, w1) = xs[x];
                    *v = h0 * (w0 * r0[i0] + w1 * r0[i1]) + h1 * (w0 * r1[i0] + w1 * r1[i1]);
                }
            }
            for (c, t) in counts.iter_mut().zip(thresholds) {
                if lo[k] > *t {
                    *c += (xb - xa) as u64;
                } else if hi[k] > *t {
                    *c += values[xa..xb].iter().filter(|v| **v > *t).count() as u64;
                }
            }
            if runs.is_some() {
                let t = thresholds[0];
                if lo[k] > t {
                    push(xa, true, &mut run_start, &mut runs);
                } else if hi[k] <= t {
                    push(xa, false, &mut run_start, &mut runs);
                } else {
                    for (x, v) in values.iter().enumerate().take(xb).skip(xa) {
                        push(x, *v > t, &mut run_start, &mut runs);
                    }
                }
            }
        }
        push(w, false, &mut run_start, &mut runs);
    }
    counts
}

/// The predictor's mask clean-up (`SAM2Transforms.postprocess_masks` with `max_hole_area` =
/// `max_sprinkle_area` = `area`): 8-connected regions of `logit <= 0` of at most `area` pixels
/// become 10.0, regions of `logit > 0` of at most `area` pixels become -10.0 (both found on the
/// logits as given).
fn remove_small_regions(plane: &mut [f32], (w, h): (usize, usize), area: usize) {
    let fg: Vec<bool> = plane.iter().map(|v| *v > 0.0).collect();
    let mut seen = vec![false; w * h];
    let mut stack = Vec::new();
    let mut region = Vec::new();
    for start in 0..w * h {
        if seen[start] {
            continue;
        }
        let want = fg[start];
        seen[start] = true;
        stack.push(start);
        region.clear();
        while let Some(p) = stack.pop() {
            region.push(p);
            let (x, y) = ((p % w) as isize, (p / w) as isize);
            for dy in -1..=1isize {
                for dx in -1..=1isize {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
                        continue;
                    }
                    let q = ny as usize * w + nx as usize;
                    if !seen[q] && fg[q] == want {
                        seen[q] = true;
                        stack.push(q);
                    }
                }
            }
        }
        if region.len() <= area {
            let v = if want { -10.0 } else { 10.0 };
            for p in &region {
                plane[*p] = v;
            }
        }
    }
}

/// torchvision's `nms` on boxes given as inclusive pixel indices: indices kept, best score first.
pub fn nms(boxes: &[[u32; 4]], scores: &[f32], threshold: f32) -> Vec<usize> {
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
    let b: Vec<[f32; 4]> = boxes.iter().map(|b| b.map(|v| v as f32)).collect();
    let area: Vec<f32> = b.iter().map(|b| (b[2] - b[0]) * (b[3] - b[1])).collect();
    let mut suppressed = vec![false; boxes.len()];
    let mut keep = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        if suppressed[i] {
            continue;
        }
        keep.push(i);
        for &j in &order[n + 1..] {
            if suppressed[j] {
                continue;
            }
            let (xx1, yy1) = (b[i][0].max(b[j][0]), b[i][1].max(b[j][1]));
            let (xx2, yy2) = (b[i][2].min(b[j][2]), b[i][3].min(b[j][3]));
            let inter = (xx2 - xx1).max(0.0) * (yy2 - yy1).max(0.0);
            let iou = inter / (area[i] + area[j] - inter);
            if f64::from(iou) > f64::from(threshold) {
                suppressed[j] = true;
            }
        }
    }
    keep
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
            return Err(Error::unsupported_model("segment-everything needs a SAM2 pair; this one follows SAM1's conventions"));
        }
        let key = image.map(|img| check_size(img.width() as i64, img.height() as i64, self.options.max_pixels).map(|_| img.content_hash()));
        let key = key.transpose()?;
        let cached = {
            let state = self.state();
            // While the image set last is being encoded, the cached one is not "the image set last".
            let embedding =
                state.embedding.clone().filter(|e| key.is_none_or(|k| k == e.key)).filter(|_| key.is_some() || state.encoding.is_none());
            let result = match (&embedding, &state.everything) {
                (Some(e), Some((k, o, r))) if *k == e.key && o == options => Some(r.clone()),
                _ => None,
            };
            (embedding, result)
        };
        if let (_, Some(result)) = &cached {
            return Ok((result.clone(), true));
        }
        let (embedding, encoder_stats) = self.embedding_for(image, key, false)?;
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
        // The reference's transform_coords(normalize=True): x / W * S in f32.
        let model: Vec<[f32; 2]> = points.iter().map(|p| [p[0] / w as f32 * s, p[1] / h as f32 * s]).collect();
        let batch = if self.spec.prompt_batch { options.points_per_batch } else { 1 };
        let mut stats = EverythingStats { prompts: points.len(), batch, ..EverythingStats::default() };
        let (t_mask, t_off) = (options.mask_threshold, options.stability_score_offset);
        // The reference adds and subtracts in f64 (Python floats), then compares in f32.
        let (t_hi, t_lo) = ((t_mask as f64 + t_off as f64) as f32, (t_mask as f64 - t_off as f64) as f32);
        let mut candidates: Vec<Candidate> = Vec::new();
        let chunks = model.len().div_ceil(batch.max(1));
        for (chunk_i, chunk) in model.chunks(batch).enumerate() {
            control::progress(Stage::Prompts, chunk_i as f32 / chunks as f32)?;
            let t0 = Instant::now();
            let (shape, logits, iou) = self.decoder.with(|session, _| self.decode_points(session, embedding, chunk))?;
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
                let point = points[chunk_i * batch + p];
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
        let wrap = |e: ort::Error| Error::internal(format!("cannot build a decoder input: {e}"));
        let mut inputs: Vec<(std::borrow::Cow<'_, str>, SessionInputValue<'_>)> = Vec::new();
        for (role, name) in &spec.decoder_features {
            let (_, shape, data) = embedding.features.iter().find(|(r, _, _)| r == role).expect("checked when the spec was detected");
            inputs.push((name.as_str().into(), TensorRef::from_array_view((shape.clone(), data.as_slice())).map_err(wrap)?.into()));
        }
        let coords: Vec<f32> = points.iter().flat_map(|p| [p[0], p[1]]).collect();
        inputs.push((spec.point_coords.as_str().into(), Tensor::from_array(([b, 1usize, 2], coords)).map_err(wrap)?.into()));
        let labels = number_input(spec.label_type, vec![b as i64, 1], &vec![1f32; b]).map_err(wrap)?;
        inputs.push((spec.point_labels.as_str().into(), labels));
        let (mh, mw) = spec.mask_input_size;
        let nb = if spec.mask_input_batch { b } else { 1 };
        let zeros = alloc::vec_of(nb * mh * mw, 0f32, "the mask input")?;
        inputs.push((spec.mask_input.as_str().into(), Tensor::from_array(([nb, 1, mh, mw], zeros)).map_err(wrap)?.into()));
        let mut has_shape = spec.has_mask_input_shape.clone();
        if spec.has_mask_input_batch {
            if let Some(d) = has_shape.first_mut() {
                *d = b as i64;
            }
        }
        let count: i64 = has_shape.iter().product::<i64>().max(1);
        inputs
            .push((spec.has_mask_input.as_str().into(), Tensor::from_array((has_shape, vec![0f32; count as usize])).map_err(wrap)?.into()));
        if let Some((name, ty)) = &spec.orig_im_size {
            inputs.push((name.as_str().into(), orig_im_size_input(*ty, embedding).map_err(wrap)?));
        }
        let run = control::run_options(|_| Ok(()))?;
        let outputs = match &run {
            Some(options) => session.run_with_options(inputs, options),
            None => session.run(inputs),
        }
        .map_err(|e| control::run_error(&e, "SAM2 decoder run"))?;
        let read = |name: &str| f32_output(&outputs, name, "SAM2 decoder");
        // The main mask output: where a decoder also has a low-res one (osam), that is clamped to +-32
        // while the main output is the unclamped logits upsampled in the graph, as the generator's own.
        let (shape, logits) = read(&spec.masks_output)?;
        let iou = read(&spec.iou_output)?.1;
        let shape: [usize; 4] = <[i64; 4]>::try_from(shape.as_slice())
            .map_err(|_| Error::new(ErrorKind::ModelUnsupported, format!("decoder mask output has shape {shape:?}, expected [B,K,h,w]")))?
            .map(|v| v.max(0) as usize);
        Ok((shape, logits, iou))
    }
}

/// The box around runs (inclusive pixel indices), 0,0,0,0 when there are none.
fn bbox_of(runs: &[Run]) -> [u32; 4] {
    if runs.is_empty() {
        return [0; 4];
    }
    let (mut x0, mut x1) = (u32::MAX, 0);
    for r in runs {
        x0 = x0.min(r.x0);
        x1 = x1.max(r.x1 - 1);
    }
    [x0, runs[0].y, x1, runs[runs.len() - 1].y]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::resize::resize_f32;
    use crate::options::ResizeFilter;

    #[test]
    fn the_grid_is_numpys_linspace() {
        assert_eq!(grid_1d(1), vec![0.5]);
        assert_eq!(grid_1d(4), vec![0.125, 0.375, 0.625, 0.875]);
        let p = prompt_points(2, (100, 50));
        assert_eq!(p, vec![[25.0, 12.5], [75.0, 12.5], [25.0, 37.5], [75.0, 37.5]]);
    }

    #[test]
    fn scan_counts_and_runs_equal_thresholding_the_upsampled_map() {
        let mut seed = 7u64;
        let mut noise = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 40) as f32 / (1u64 << 24) as f32 * 8.0 - 4.0
        };
        for ((sw, sh), (w, h)) in [((16, 16), (64, 64)), ((37, 23), (300, 101)), ((64, 64), (50, 40)), ((8, 8), (8, 8))] {
            let plane: Vec<f32> = (0..sw * sh).map(|_| noise()).collect();
            let full = resize_f32(&plane, (sw, sh), (w, h), ResizeFilter::Bilinear).unwrap();
            let mut runs = Vec::new();
            let counts = scan(&plane, (sw, sh), (w, h), &[0.0, 1.0, -1.0], Some(&mut runs));
            let mask = EverythingObject {
                id: 1,
                bbox: [0; 4],
                area: 0,
                predicted_iou: 0.0,
                stability_score: 0.0,
                point: [0.0; 2],
                mask_index: 0,
                runs,
            }
            .mask(w, h);
            for (i, t) in [0.0f32, 1.0, -1.0].iter().enumerate() {
                let want = full.iter().filter(|v| **v > *t).count() as i64;
                let near = full.iter().filter(|v| (**v - t).abs() < 1e-4).count() as i64;
                // downscaling is not what resize_f32 does (it filters): compare only upscales
                if w >= sw && h >= sh {
                    assert!((counts[i] as i64 - want).abs() <= near, "{sw}x{sh}->{w}x{h} t {t}: {} vs {want}", counts[i]);
                }
            }
            assert_eq!(mask.iter().map(|v| *v as u64).sum::<u64>(), counts[0]);
        }
    }

    #[test]
    fn nms_keeps_the_best_and_drops_overlaps_above_the_threshold() {
        let boxes = [[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30], [0, 0, 10, 10]];
        let scores = [0.5, 0.9, 0.7, 0.9];
        // 1 (0.9) first, 3 ties with it and comes later (stable), overlapping 0.81 -> dropped
        assert_eq!(nms(&boxes, &scores, 0.7), vec![1, 2]);
        assert_eq!(nms(&boxes, &scores, 1.0), vec![1, 3, 2, 0]);
    }

    #[test]
    fn small_regions_are_filled_and_removed() {
        // 5x5: a 1-pixel hole inside a foreground block, and a 1-pixel speck
        let mut p = vec![-5f32; 25];
        for y in 0..3 {
            for x in 0..3 {
                p[y * 5 + x] = 5.0;
            }
        }
        p[6] = -5.0; // hole at (1,1)
        p[24] = 5.0; // speck at (4,4)
        remove_small_regions(&mut p, (5, 5), 1);
        assert_eq!(p[6], 10.0);
        assert_eq!(p[24], -10.0);
        assert_eq!(p[0], 5.0);
    }

    #[test]
    fn bad_options_are_refused_naming_the_field() {
        let d = EverythingOptions::default();
        d.validate().unwrap();
        for (o, what) in [
            (EverythingOptions { points_per_side: 0, ..d }, "points_per_side"),
            (EverythingOptions { points_per_side: 100_000, ..d }, "points_per_side"),
            (EverythingOptions { points_per_batch: 0, ..d }, "points_per_batch"),
            (EverythingOptions { pred_iou_thresh: f32::NAN, ..d }, "pred_iou_thresh"),
            (EverythingOptions { stability_score_thresh: 2.0, ..d }, "stability_score_thresh"),
            (EverythingOptions { box_nms_thresh: -0.1, ..d }, "box_nms_thresh"),
            (EverythingOptions { stability_score_offset: f32::INFINITY, ..d }, "stability_score_offset"),
            (EverythingOptions { mask_threshold: f32::NAN, ..d }, "mask_threshold"),
            (EverythingOptions { crop_n_layers: 1, ..d }, "crop_n_layers"),
        ] {
            let e = o.validate().unwrap_err();
            assert!(e.message.starts_with(what), "{what}: {}", e.message);
        }
    }
}
