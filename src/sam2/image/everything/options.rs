//! The options of segment-everything, with the reference generator's defaults, and their checks.

use crate::error::{Error, Result};

/// Most points per side accepted (256² = 65 536 prompts).
pub const MAX_POINTS_PER_SIDE: usize = 256;
/// Most prompts per decoder run accepted.
pub const MAX_POINTS_PER_BATCH: usize = 4096;

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

#[cfg(test)]
mod tests {
    use super::*;

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
