//! A mask as a prompt (`add_new_mask`): the caller's mask of an object on a frame becomes that
//! frame's output as it is (`_use_mask_as_output`), with an object pointer the decoder computes from
//! it; its memory is encoded when tracking next runs, as for clicks.

use crate::error::{Error, Result};

use super::frames::Features;
use super::memory::FrameOut;
use super::model::{owned, Module};
use super::numeric::resize_bilinear_antialiased;
use super::tracker::{FrameMasks, Tracker};

/// `_use_mask_as_output`'s logits for the mask's outside and inside (sigmoid(-10) = 4.5e-5).
const OUT_SCALE: f32 = 20.0;
const OUT_BIAS: f32 = -10.0;

impl Tracker {
    /// `add_new_mask`: `mask` (the frame's width x height bytes, not 0 = object, rows `mask_stride`
    /// apart, 0 = the width) is object `object_id`'s output on `frame`, replacing its earlier
    /// prompts there. As the predictor: the mask is resized to the model's S x S (bilinear,
    /// antialiased, `>= 0.5`), its low-res logits are +-10 (antialiased down to the low-res grid),
    /// its object score +10, and the object pointer comes from the decoder given the raw frame
    /// features and the mask (through the model's `mask_downsample`) as mask input. A frame not
    /// tracked yet for this object becomes a conditioning frame, otherwise the mask corrects the
    /// tracked output (see [`Tracker::add_prompt`]). Returns every object on that frame.
    ///
    /// An empty mask is refused: the predictor would mark the object absent with a learned
    /// no-object pointer, which the exported modules do not carry.
    pub fn add_mask(&mut self, frame: usize, object_id: i32, mask: &[u8], mask_stride: usize) -> Result<FrameMasks> {
        self.check_reachable(frame)?;
        let (w, h) = self.frames.size.ok_or_else(|| Error::internal("no frame size"))?;
        let stride = if mask_stride == 0 { w } else { mask_stride };
        if stride < w || mask.len() < stride * (h - 1) + w {
            return Err(Error::invalid(format!(
                "the mask holds {} bytes with rows {stride} apart: a {w}x{h} frame needs a mask of its size",
                mask.len()
            )));
        }
        let md = self.meta();
        if !md.use_mask_input_as_output_without_sam {
            return Err(Error::unsupported_model(
                "this video model decodes mask prompts with the decoder (use_mask_input_as_output_without_sam is off): not supported",
            ));
        }
        let (s, l) = (md.image_size, md.low_res_size);
        let conv = md.mask_downsample.clone().ok_or_else(|| {
            Error::unsupported_model(
                "video_metadata.json has no mask_downsample: export the model again with models/sam2/export_sam2_video.py to prompt it with masks",
            )
        })?;
        if conv.kernel == 0
            || conv.stride == 0
            || conv.weight.len() != conv.kernel * conv.kernel
            || (s - conv.kernel) / conv.stride + 1 != l
        {
            return Err(Error::new(
                crate::error::ErrorKind::ModelInvalid,
                "video_metadata.json: mask_downsample does not fit the model's sizes",
            ));
        }
        let frame_mask: Vec<f32> = (0..h).flat_map(|y| mask[y * stride..y * stride + w].iter().map(|v| (*v != 0) as u8 as f32)).collect();
        if frame_mask.iter().all(|v| *v == 0.0) {
            return Err(Error::invalid("the mask is empty: mark the object's pixels (not 0)"));
        }
        // add_new_mask: to S x S unless it is already, then binary again.
        let at_s: Vec<f32> = if (w, h) == (s, s) {
            frame_mask
        } else {
            resize_bilinear_antialiased(&frame_mask, (w, h), (s, s)).iter().map(|v| (*v >= 0.5) as u8 as f32).collect()
        };
        let high: Vec<f32> = at_s.iter().map(|v| v * OUT_SCALE + OUT_BIAS).collect();
        let low = resize_bilinear_antialiased(&high, (s, s), (s / 4, s / 4));
        if low.len() != l * l {
            return Err(Error::new(crate::error::ErrorKind::ModelInvalid, "video_metadata.json: low_res_size is not image_size / 4"));
        }
        let mask_input = downsample(&at_s, s, &conv);
        let appearing = at_s.iter().any(|v| *v > 0.0);
        let feats = self.features(frame)?;
        let k = self.object_slot(object_id);
        let (is_cond, _, _) = self.prompt_kind(frame, k);
        let out = self.object_pointer_of_mask(&feats, mask_input).map(|obj_ptr| FrameOut {
            pred_masks: low.into(),
            obj_ptr: obj_ptr.into(),
            score: OUT_SCALE * appearing as u8 as f32 + OUT_BIAS,
            iou: 1.0,
            maskmem: None,
        });
        self.store_prompted(frame, k, is_cond, out)
    }

    /// `_use_mask_as_output`'s object pointer: `_forward_sam_heads` on the raw (not memory-
    /// conditioned) features with the downsampled mask as mask input, no click (the padding point)
    /// and single-mask output.
    fn object_pointer_of_mask(&self, feats: &Features, mask_input: Vec<f32>) -> Result<Vec<f32>> {
        let l = self.meta().low_res_size as i64;
        let inputs = vec![
            feats.vision_feat.view()?,
            feats.high_res_0.view()?,
            feats.high_res_1.view()?,
            owned(vec![1, 1, 2], vec![0f32, 0.0])?,
            owned(vec![1, 1], vec![-1i32])?,
            owned(vec![1, 1, l, l], mask_input)?,
            owned(vec![1], vec![1f32])?,
            owned(vec![1], vec![0f32])?,
        ];
        let mut d = self.run(Module::MaskDecoder, inputs)?;
        if d.len() != 4 || d[2].data.len() != self.meta().hidden_dim {
            return Err(Error::unsupported_model("video mask decoder: unexpected outputs"));
        }
        Ok(std::mem::take(&mut d[2].data))
    }
}

/// `mask_downsample`: the one-channel convolution (no padding) of an `s x s` map.
fn downsample(map: &[f32], s: usize, conv: &super::MaskDownsample) -> Vec<f32> {
    let (k, st) = (conv.kernel, conv.stride);
    let n = (s - k) / st + 1;
    let mut out = Vec::with_capacity(n * n);
    for y in 0..n {
        for x in 0..n {
            let mut acc = 0f32;
            for ky in 0..k {
                for kx in 0..k {
                    acc += conv.weight[ky * k + kx] * map[(y * st + ky) * s + x * st + kx];
                }
            }
            out.push(acc + conv.bias);
        }
    }
    out
}
