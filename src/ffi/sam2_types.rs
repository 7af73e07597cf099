//! The C types of the SAM2 exports (`sam2.rs`): prompts, the optional results of a click, and
//! segment-everything's options, records, label image and figures.

use crate::error::{Error, Result};
use crate::sam2::{BoxPrompt, EverythingObject, EverythingResult, ManyStats, Point, Prompt, Sam2Run};

use super::boundary::caller_slice;
use super::images::rows;
use super::versioned::{read_versioned, versioned, write_versioned};

/// A click in original image pixels. `label`: 1 = foreground (include), 0 = background (exclude).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegPoint {
    pub x: f32,
    pub y: f32,
    pub label: i32,
}

/// A box in original image pixels: top-left (x1, y1), bottom-right (x2, y2).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegBox {
    pub x1: f32,
    pub y1: f32,
    pub x2: f32,
    pub y2: f32,
}

/// `seg_run_sam2_points` flag: feed the session's previous chosen low-res logits back as the mask
/// input (refinement, as the reference predictor does). Ignored when the image changed or when the
/// call passes its own `mask_input`.
pub const SEG_SAM2_REFINE: u32 = 1;

/// Optional extra results of `seg_run_sam2_points`. Set `struct_size = sizeof(SegSam2Result)` and,
/// to receive them, the optional buffers (caller-owned; NULL = not wanted).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegSam2Result {
    pub struct_size: u32,
    /// Index of the chosen mask among the decoder's outputs (highest predicted IoU).
    pub chosen_index: i32,
    /// Masks the decoder returned (1, 3 or 4).
    pub num_masks: i32,
    /// Non-zero when the cached image embedding was reused (no encoder run).
    pub encoder_reused: u32,
    /// Predicted IoU of each mask (first `num_masks` valid).
    pub scores: [f32; 4],
    /// Pre-processing + encoder run (0 when the cached embedding was reused).
    pub encoder_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
    /// In: optional buffer of `all_masks_len` bytes receiving every mask (0/255), one after another,
    /// each width x height without padding. Needs `num_masks * width * height` bytes (at most 4x).
    pub all_masks: *mut u8,
    pub all_masks_len: usize,
    /// In: optional buffer of `low_res_len` floats receiving the chosen low-res logits.
    pub low_res_logits: *mut f32,
    pub low_res_len: usize,
    /// Out: size of the low-res logits.
    pub low_res_width: i32,
    pub low_res_height: i32,
}

/// One prompt of `seg_sam2_segment_prompts`: clicks and/or a box, in original image pixels. Passed
/// as an array with the caller's `sizeof(SegSam2Prompt)` (`prompt_size`), so the record can grow:
/// a newer host's longer record is accepted when the bytes this library does not know are zero.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegSam2Prompt {
    /// `n_points` clicks (label 1 = include, 0 = exclude); NULL when `n_points` is 0. Borrowed for
    /// the call only.
    pub points: *const SegPoint,
    pub n_points: usize,
    /// The box, read when `has_box` is 1 (it then counts as two model points, its corners).
    pub bbox: SegBox,
    /// 1 = `bbox` is given, 0 = no box (then at least one point).
    pub has_box: u32,
    /// Must be 0.
    pub reserved: u32,
}

/// What `seg_sam2_segment_prompts` counted and measured. Set `struct_size = sizeof(SegSam2PromptsInfo)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegSam2PromptsInfo {
    pub struct_size: u32,
    /// 1 when the decoder ran many prompts per run (an export with a prompt batch axis).
    pub batched: u32,
    /// Most prompts in one decoder run.
    pub batch: u32,
    pub prompts: u32,
    pub decoder_runs: u32,
    /// 1 when the cached image embedding was used (no encoder run).
    pub encoder_reused: u32,
    /// Pre-processing + encoder run (0 when the cached embedding was reused).
    pub encoder_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
}

/// Options of `seg_sam2_everything`, with the defaults and meaning of SAM2's automatic mask
/// generator (`SAM2AutomaticMaskGenerator`):
/// `SegEverythingOptions o = { .struct_size = sizeof o }; seg_everything_options_default(&o);`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegEverythingOptions {
    /// `sizeof(SegEverythingOptions)` as the caller was compiled with.
    pub struct_size: u32,
    /// Prompts along each side of the image: a grid of `points_per_side`² points (default 32; 1..=256).
    pub points_per_side: i32,
    /// Prompts per decoder run where the decoder takes a batch of prompts (default 64; 1..=4096).
    /// The result does not depend on it.
    pub points_per_batch: i32,
    /// Keep masks whose predicted IoU is above this (default 0.8; 0 = no filter; within [0, 1]).
    pub pred_iou_thresh: f32,
    /// Keep masks whose stability score is at least this (default 0.95; 0 = no filter; within [0, 1]).
    pub stability_score_thresh: f32,
    /// The stability score compares the mask at `mask_threshold` +- this (default 1.0).
    pub stability_score_offset: f32,
    /// Logit threshold of a mask pixel (default 0.0).
    pub mask_threshold: f32,
    /// Box IoU above which the lower-scored of two masks is dropped (default 0.7; within [0, 1]).
    pub box_nms_thresh: f32,
    /// 0 = off (default); else holes and specks of at most this many pixels at the decoder's mask
    /// resolution (256x256 for released models) are removed first, as SAM2's generator does.
    pub min_mask_region_area: i32,
    /// Must be 0: crop layers are not supported.
    pub crop_n_layers: i32,
}

/// One object found by `seg_sam2_everything`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegEverythingObject {
    /// Its value in the label image: objects are numbered 1, 2, ... by predicted IoU, best first.
    pub id: u32,
    /// Which of the decoder's multimask outputs the mask is (0..2).
    pub mask_index: i32,
    /// Box around the full mask, inclusive pixel indices; all 0 for an empty mask.
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
    /// Pixels of the full mask (also those painted over by smaller objects in the label image).
    pub area: u64,
    pub predicted_iou: f32,
    pub stability_score: f32,
    /// The prompt point that gave the mask, in image pixels.
    pub point_x: f32,
    pub point_y: f32,
}

/// A caller-owned 16-bit label image: 0 = background, object k = k. It must have the image's size.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegLabelImage {
    pub data: *mut u16,
    pub width: i32,
    pub height: i32,
    /// Values (not bytes) from one row to the next; 0 = `width`.
    pub stride: i32,
}

/// What `seg_sam2_everything` counted and measured. Set `struct_size = sizeof(SegEverythingInfo)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegEverythingInfo {
    pub struct_size: u32,
    /// 1 when the decoder ran many prompts per run (an export with a prompt batch axis).
    pub batched: u32,
    /// Prompts per decoder run.
    pub batch: u32,
    pub prompts: u32,
    pub decoder_runs: u32,
    /// Masks decoded, then those left after the predicted-IoU, the stability and the NMS filters.
    pub masks_decoded: u32,
    pub after_iou: u32,
    pub after_stability: u32,
    pub after_nms: u32,
    /// Objects returned (`after_nms`, at most 65535) and those beyond 65535 left out (lowest IoU).
    pub objects: u32,
    pub dropped: u32,
    /// 1 when the cached image embedding was used (no encoder run).
    pub encoder_reused: u32,
    /// 1 when the result was the session's last one (same image and options): nothing ran.
    pub cached: u32,
    pub reserved: u32,
    pub encoder_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
}

impl SegEverythingOptions {
    pub fn defaults() -> Self {
        let o = crate::sam2::EverythingOptions::default();
        SegEverythingOptions {
            struct_size: std::mem::size_of::<SegEverythingOptions>() as u32,
            points_per_side: o.points_per_side as i32,
            points_per_batch: o.points_per_batch as i32,
            pred_iou_thresh: o.pred_iou_thresh,
            stability_score_thresh: o.stability_score_thresh,
            stability_score_offset: o.stability_score_offset,
            mask_threshold: o.mask_threshold,
            box_nms_thresh: o.box_nms_thresh,
            min_mask_region_area: o.min_mask_region_area as i32,
            crop_n_layers: o.crop_n_layers as i32,
        }
    }

    /// Reads a caller's options (NULL = defaults), honouring `struct_size`, and checks them.
    ///
    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegEverythingOptions) -> Result<crate::sam2::EverythingOptions> {
        // SAFETY: forwarded from the caller.
        let raw = unsafe { read_versioned(p, SegEverythingOptions::defaults())? };
        let count = |v: i32, what: &str| -> Result<usize> {
            usize::try_from(v).map_err(|_| Error::invalid(format!("SegEverythingOptions.{what} is {v}, it must not be negative")))
        };
        let o = crate::sam2::EverythingOptions {
            points_per_side: count(raw.points_per_side, "points_per_side")?,
            points_per_batch: count(raw.points_per_batch, "points_per_batch")?,
            pred_iou_thresh: raw.pred_iou_thresh,
            stability_score_thresh: raw.stability_score_thresh,
            stability_score_offset: raw.stability_score_offset,
            mask_threshold: raw.mask_threshold,
            box_nms_thresh: raw.box_nms_thresh,
            min_mask_region_area: count(raw.min_mask_region_area, "min_mask_region_area")?,
            crop_n_layers: count(raw.crop_n_layers, "crop_n_layers")?,
        };
        o.validate().map_err(|e| e.context("SegEverythingOptions"))?;
        Ok(o)
    }
}

versioned!(SegSam2Result);
versioned!(SegEverythingOptions);
versioned!(SegEverythingInfo);
versioned!(SegSam2PromptsInfo);

/// The clicks and the box of a prompt (`seg_run_sam2_points`, a `SegSam2Prompt`), checked.
///
/// # Safety
/// `points` must be NULL with `n_points` 0, or point to `n_points` readable points; `bbox` NULL or a
/// readable `SegBox`.
pub(super) unsafe fn prompt_from(points: *const SegPoint, n_points: usize, bbox: *const SegBox) -> Result<Prompt> {
    if n_points > crate::sam2::MAX_POINTS {
        return Err(Error::invalid(format!("{n_points} points: at most {} are accepted", crate::sam2::MAX_POINTS)));
    }
    // SAFETY: `n_points` > 0 only with `points` not NULL (checked by the caller) and valid for them.
    let pts = unsafe { caller_slice(points, n_points, "points")? };
    Ok(Prompt {
        points: pts.iter().map(|p| Point { x: p.x, y: p.y, label: p.label }).collect(),
        // SAFETY: NULL or a readable `SegBox` (the contract).
        bbox: unsafe { bbox.as_ref() }.map(|b| BoxPrompt { x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2 }),
        ..Prompt::default()
    })
}

/// The caller's mask input of a `seg_run_sam2_points` call (NULL: none): `low_res_len` logits.
///
/// # Safety
/// `mask_input` must be NULL or point to `mask_input_len` readable floats.
pub(super) unsafe fn mask_input_from(mask_input: *const f32, mask_input_len: usize, low_res_len: usize) -> Result<Option<Vec<f32>>> {
    if mask_input.is_null() {
        if mask_input_len != 0 {
            return Err(Error::null("mask_input (mask_input_len is not 0)"));
        }
        return Ok(None);
    }
    if mask_input_len != low_res_len {
        return Err(Error::invalid(format!(
            "mask_input_len is {mask_input_len}: mask_input must hold the {low_res_len} low-res logits an earlier call returned"
        )));
    }
    // SAFETY: not NULL, so `mask_input_len` readable floats (the contract).
    Ok(Some(unsafe { caller_slice(mask_input, mask_input_len, "mask_input")? }.to_vec()))
}

impl SegSam2Prompt {
    /// The prompt of this record, checked (`has_box` 0 or 1, `reserved` 0).
    ///
    /// # Safety
    /// `points` must be NULL (then `n_points` 0) or point to `n_points` readable points.
    pub(super) unsafe fn prompt(&self) -> Result<Prompt> {
        if self.points.is_null() && self.n_points > 0 {
            return Err(Error::null("points (n_points is not 0)"));
        }
        if self.has_box > 1 || self.reserved != 0 {
            return Err(Error::invalid(format!(
                "has_box is {} and reserved {}: has_box must be 0 or 1, reserved 0",
                self.has_box, self.reserved
            )));
        }
        let bbox = if self.has_box == 1 { &self.bbox as *const SegBox } else { std::ptr::null() };
        // SAFETY: the points are NULL (none) or valid for `n_points` (the contract); `bbox` is ours.
        unsafe { prompt_from(self.points, self.n_points, bbox) }
    }
}

impl SegSam2Result {
    /// Writes `run` into the caller's struct at `out` (this is a copy of it, with its buffers):
    /// the figures, and the chosen low-res logits into `low_res_logits` when given.
    ///
    /// # Safety
    /// `out` must be valid for `size` bytes (checked by `out_size`); `low_res_logits`, when not NULL,
    /// must hold `run.low_res.len()` writable floats (checked by the caller against `low_res_len`).
    pub(super) unsafe fn write_run(&self, run: &Sam2Run, out: *mut SegSam2Result, size: usize) {
        let mut record = *self;
        record.chosen_index = run.chosen as i32;
        record.num_masks = run.scores.len() as i32;
        record.encoder_reused = run.stats.encoder_reused as u32;
        record.scores = [0.0; 4];
        for (d, s) in record.scores.iter_mut().zip(&run.scores) {
            *d = *s;
        }
        record.encoder_ms = run.stats.encoder_preprocess_ms + run.stats.encoder_ms;
        record.decoder_ms = run.stats.decoder_ms;
        record.postprocess_ms = run.stats.postprocess_ms;
        record.low_res_width = run.low_res_size.0 as i32;
        record.low_res_height = run.low_res_size.1 as i32;
        if !self.low_res_logits.is_null() {
            // SAFETY: not NULL, so `low_res_len` >= the logits' length writable floats (this function's contract).
            unsafe { std::slice::from_raw_parts_mut(self.low_res_logits, run.low_res.len()) }.copy_from_slice(&run.low_res);
        }
        // SAFETY: `size` bytes of `out` (this function's contract).
        unsafe { write_versioned(&record, out, size) };
    }
}

impl From<&ManyStats> for SegSam2PromptsInfo {
    fn from(s: &ManyStats) -> Self {
        SegSam2PromptsInfo {
            struct_size: 0, // the caller's is kept
            batched: (s.batch > 1) as u32,
            batch: s.batch as u32,
            prompts: s.prompts as u32,
            decoder_runs: s.decoder_runs as u32,
            encoder_reused: s.encoder_reused as u32,
            encoder_ms: s.encoder_ms,
            decoder_ms: s.decoder_ms,
            postprocess_ms: s.postprocess_ms,
        }
    }
}

impl SegLabelImage {
    /// The caller's label image as values and their stride, checked against the image's `(w, h)`.
    ///
    /// # Safety
    /// `data` must point to `height` rows of `stride` writable values.
    pub(super) unsafe fn target<'a>(&self, (w, h): (usize, usize)) -> Result<(&'a mut [u16], usize)> {
        if self.data.is_null() {
            return Err(Error::null("label image data"));
        }
        if (self.width, self.height) != (w as i32, h as i32) {
            return Err(Error::invalid(format!(
                "the label image is {}x{} but the image is {w}x{h}: it must have the image's size",
                self.width, self.height
            )));
        }
        let (stride, len) = rows(self.stride, (w, h), 2, "label image")?;
        // SAFETY: `height` rows of `stride` values are writable (the contract); `len` ends at the
        // last row's `width` values, and its bytes fit in isize.
        Ok((unsafe { std::slice::from_raw_parts_mut(self.data, len) }, stride))
    }
}

impl From<&EverythingObject> for SegEverythingObject {
    fn from(o: &EverythingObject) -> Self {
        SegEverythingObject {
            id: o.id,
            mask_index: o.mask_index as i32,
            x0: o.bbox[0] as i32,
            y0: o.bbox[1] as i32,
            x1: o.bbox[2] as i32,
            y1: o.bbox[3] as i32,
            area: o.area,
            predicted_iou: o.predicted_iou,
            stability_score: o.stability_score,
            point_x: o.point[0],
            point_y: o.point[1],
        }
    }
}

impl SegEverythingInfo {
    /// The figures of `result`; `cached`: it was the session's last result (nothing ran: no times).
    pub(super) fn of(result: &EverythingResult, cached: bool) -> Self {
        let s = &result.stats;
        SegEverythingInfo {
            struct_size: 0, // the caller's is kept
            batched: (s.batch > 1) as u32,
            batch: s.batch as u32,
            prompts: s.prompts as u32,
            decoder_runs: s.decoder_runs as u32,
            masks_decoded: s.masks_decoded as u32,
            after_iou: s.after_iou as u32,
            after_stability: s.after_stability as u32,
            after_nms: s.after_nms as u32,
            objects: result.objects.len() as u32,
            dropped: result.dropped as u32,
            encoder_reused: (s.encoder_reused || cached) as u32,
            cached: cached as u32,
            reserved: 0,
            encoder_ms: if cached { 0.0 } else { s.encoder_ms },
            decoder_ms: if cached { 0.0 } else { s.decoder_ms },
            postprocess_ms: if cached { 0.0 } else { s.postprocess_ms },
        }
    }
}
