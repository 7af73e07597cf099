//! The TensorRT shape profiles of a SAM2 pair: the encoder's one input size, and the decoder's
//! prompt axes as segrt feeds them (see `engine::providers::tensorrt::profile`). A decoder's profile binds, so under
//! it segrt keeps prompts and prompt batches within `PROFILE_MAX_POINTS` and `PROFILE_MAX_BATCH`.

use crate::engine::io::TensorInfo;
use crate::engine::providers::tensorrt::profile::{AxisRange, ShapeProfile};

use super::spec::{Feature, Sam2Spec};

/// Most points of one prompt (boxes not counted) a decoder's TensorRT profile takes. TensorRT plans
/// its memory for the largest shape of a profile, so the bound is what interactive prompts need,
/// not the 1024 points segrt otherwise accepts.
pub const PROFILE_MAX_POINTS: usize = 32;

/// Most prompts of one decoder run under a TensorRT profile (segment-everything's default batch).
pub const PROFILE_MAX_BATCH: usize = 64;

/// Model-space points of a prompt at most: its points, a box's two corners or the padding point.
const MAX_MODEL_POINTS: i64 = PROFILE_MAX_POINTS as i64 + 2;

/// The encoder's profile: one image of the model's input size.
pub fn encoder_profile(spec: &Sam2Spec, declared: &[TensorInfo]) -> Result<Option<ShapeProfile>, String> {
    let s = spec.image_size as i64;
    let fed = [1, 3, s, s];
    ShapeProfile::derive(declared, |_, axis| fed.get(axis).map(|&d| (d, d, d)))
}

/// The decoder's profile (`encoder_outputs`: what the encoder declares, whose features the decoder
/// is fed): prompt batches of 1 to `PROFILE_MAX_BATCH`, prompts of up to `MAX_MODEL_POINTS` points,
/// tuned for one click (its point and the padding point).
pub fn decoder_profile(spec: &Sam2Spec, declared: &[TensorInfo], encoder_outputs: &[TensorInfo]) -> Result<Option<ShapeProfile>, String> {
    let batch: AxisRange = if spec.prompt_batch { (1, 1, PROFILE_MAX_BATCH as i64) } else { (1, 1, 1) };
    let one: AxisRange = (1, 1, 1);
    // A box alone has no points in transformers' layout (its box is an input of its own).
    let transformers = spec.layout.is_transformers();
    let points: AxisRange = (if transformers { 0 } else { 1 }, 2, MAX_MODEL_POINTS);
    let fixed = |d: usize| Some((d as i64, d as i64, d as i64));
    let (mh, mw) = spec.mask_input_size;
    ShapeProfile::derive(declared, |input, axis| {
        let name = input.name.as_str();
        if name == spec.point_coords || name == spec.point_labels {
            // [B, N, 2] / [B, N]; transformers' [1, obj, N, 2] / [1, obj, N].
            return match (transformers, axis) {
                (false, 0) | (true, 1) => Some(batch),
                (false, 1) | (true, 2) => Some(points),
                (true, 0) => Some(one),
                _ => None,
            };
        }
        if spec.layout.input_boxes() == Some(name) {
            // [1, obj, 4]: a box per prompt, or none.
            return match axis {
                0 => Some(one),
                1 => Some((0, 1, batch.2)),
                _ => None,
            };
        }
        if name == spec.mask_input {
            return match axis {
                0 => Some(if spec.mask_input_batch { batch } else { one }),
                1 => Some(one),
                2 => fixed(mh),
                3 => fixed(mw),
                _ => None,
            };
        }
        if name == spec.has_mask_input {
            return (axis == 0).then_some(if spec.has_mask_input_batch { batch } else { one });
        }
        // An image feature: what the encoder gives for its role, where the encoder declares it.
        let role = spec.decoder_features.iter().find(|(_, n)| n == name).map(|(r, _)| *r)?;
        let output = spec.encoder_outputs.iter().find(|(r, _)| *r == role).map(|(_, n)| n)?;
        let declared = encoder_outputs.iter().find(|t| t.name == *output)?;
        let d = *declared.shape.get(axis)?;
        let d = if d >= 0 { d } else { feature_side(role, spec.image_size, axis)? };
        Some((d, d, d))
    })
}

/// The batch axis (1) and the spatial axes of a feature map of a model of input size `s`.
fn feature_side(role: Feature, s: usize, axis: usize) -> Option<i64> {
    let stride = match role {
        Feature::Embed => 16,
        Feature::HighRes0 => 4,
        Feature::HighRes1 => 8,
    };
    match axis {
        0 => Some(1),
        2 | 3 => Some((s / stride) as i64),
        _ => None,
    }
}
