//! What segment-everything does differently on a SAM1-family pair (segment_anything's
//! `SamAutomaticMaskGenerator` on its official ONNX decoder, as MobileSAM-class pairs ship):
//! - the grid points map into the encoder's frame as `ResizeLongestSide.apply_coords` maps them (the
//!   long side to S, the image top-left in the padded square; per axis new size / old size, in f64);
//! - each prompt is the point and the (0, 0) / -1 padding point: the official export leaves the
//!   padding to the client (`SamPredictor` pads inside the prompt encoder when there is no box);
//! - the masks are the decoder's `masks` output, fed `orig_im_size`: the low-res logits covering the
//!   padded square upsampled to S x S, cropped to the image's part and upsampled to the image's size
//!   in the graph (`Sam.postprocess_masks`), so the filters see the logits the generator sees;
//! - the single-mask export returns one mask per prompt (its own pick among the multimask outputs,
//!   by predicted IoU): that one is the candidate.
//!
//! `min_mask_region_area` is refused here: SAM1's generator removes small regions after NMS, at the
//! image's resolution, and runs NMS again; that is not SAM2's low-res clean-up this pipeline runs.

use crate::error::{Error, Result};

use super::super::prompt::sam1_scales;
use super::grid::grid_1d;
use super::EverythingOptions;

/// The options a SAM1-family pair cannot honour, refused before the encoder runs.
pub(super) fn check_options(options: &EverythingOptions) -> Result<()> {
    if options.min_mask_region_area > 0 {
        return Err(Error::unsupported_model(format!(
            "min_mask_region_area is {}: small-region removal is SAM2's generator's step; on a SAM1-family pair use 0",
            options.min_mask_region_area
        )));
    }
    Ok(())
}

/// The grid's points in the encoder's frame of a SAM1 model of input `s` x `s` (x varies fastest):
/// `(g * W) * new_w / W` per axis in f64, then f32, as the generator's `points_for_image` through
/// `apply_coords`.
pub(super) fn model_points(n: usize, (w, h): (usize, usize), s: usize) -> Vec<[f32; 2]> {
    let g = grid_1d(n);
    let (kx, ky) = sam1_scales(s, (w, h));
    let mut points = Vec::with_capacity(n * n);
    for gy in &g {
        for gx in &g {
            points.push([(gx * w as f64 * kx) as f32, (gy * h as f64 * ky) as f32]);
        }
    }
    points
}

/// One decoder prompt per point (`points` in the encoder's frame): the point (label 1), then the
/// (0, 0) / -1 padding point. Returns the coordinates (x, y pairs) and labels.
pub(super) fn prompts(points: &[[f32; 2]]) -> (Vec<f32>, Vec<f32>) {
    let coords = points.iter().flat_map(|p| [p[0], p[1], 0.0, 0.0]).collect();
    let labels = points.iter().flat_map(|_| [1.0, -1.0]).collect();
    (coords, labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_points_land_where_apply_coords_puts_them() {
        // 600x400 into 1024: the image fills 1024x683 of the padded square (int(400 * 1024 / 600 + 0.5)),
        // so the grid's last row lands at 0.75 * 683, not at 0.75 * 1024 (SAM2's stretch) and not at
        // 0.75 * 400 * 1024 / 600.
        let p = model_points(2, (600, 400), 1024);
        assert_eq!(p, vec![[256.0, 170.75], [768.0, 170.75], [256.0, 512.25], [768.0, 512.25]]);
        let (coords, labels) = prompts(&p[..1]);
        assert_eq!((coords, labels), (vec![256.0, 170.75, 0.0, 0.0], vec![1.0, -1.0]));
    }

    #[test]
    fn small_region_removal_is_refused() {
        let o = EverythingOptions { min_mask_region_area: 10, ..EverythingOptions::default() };
        assert!(check_options(&o).unwrap_err().message.starts_with("min_mask_region_area"));
        check_options(&EverythingOptions::default()).unwrap();
    }
}
