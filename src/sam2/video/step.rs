//! One object on one frame: the decoder step (`track_step`, `_forward_sam_heads`), the memory
//! attention that conditions it on the memory bank (`_prepare_memory_conditioned_features`), and
//! the memory encoder that turns its result into memory (`_encode_new_memory`).

use std::sync::Arc;

use ort::value::TensorRef;

use crate::error::{Error, Result};

use super::frames::Features;
use super::memory::{Direction, FrameOut, MemoryFeatures, Reach};
use super::model::{input_error, owned, Array, Module};
use super::tracker::Tracker;

impl Tracker {
    /// `_encode_new_memory`: memory features (bfloat16-rounded) of a frame's chosen logits.
    pub(super) fn encode_memory(&mut self, feats: &Features, logits: &[f32], score: f32, from_points: bool) -> Result<Arc<MemoryFeatures>> {
        let l = self.meta().low_res_size as i64;
        let m = self.model.clone();
        let inputs = vec![
            feats.vision_feat.view()?,
            TensorRef::from_array_view((vec![1i64, 1, l, l], logits)).map_err(input_error)?.into(),
            owned(vec![1, 1], vec![score])?,
            owned(vec![1], vec![from_points as u8 as f32])?,
        ];
        let mut r = self.run(Module::MemoryEncoder, inputs)?;
        if r.len() != 2 {
            return Err(Error::unsupported_model("video memory encoder: expected 2 outputs"));
        }
        let pos = r.pop().expect("two outputs");
        let feat = r.pop().expect("two outputs");
        if self.maskmem_pos_enc.is_none() {
            self.maskmem_pos_enc = Some(Arc::new(pos));
        }
        let bf16 = m.metadata().maskmem_features_storage_dtype == "bfloat16" && !self.ablate_bf16;
        Ok(Arc::new(MemoryFeatures::stored(feat, bf16)))
    }

    /// `_prepare_memory_conditioned_features`: the memory attention over the memories and object
    /// pointers object `k` selects for frame `t` (see `ObjectState::select`).
    fn memory_conditioned(&self, t: usize, feats: &Features, k: usize, direction: Direction) -> Result<Array> {
        let md = self.meta();
        let pos_enc = self.maskmem_pos_enc.as_ref().ok_or_else(|| Error::internal("no memory position encoding yet"))?;
        let reverse = direction == Direction::Reverse && !self.ablate_reverse_memory;
        let max_ptrs = self.max_ptrs();
        let reach = Reach { reverse, frames: self.frames.added, max_ptrs };
        let selection = self.objects[k].1.select(t, md, &reach)?;
        let (mems, mut ptrs) = (selection.memories, selection.pointers);
        if self.ablate_pointers {
            ptrs.clear();
        }
        let c = md.hidden_dim;
        let t_diff_max = (max_ptrs.max(2) - 1) as f32;
        let ptr_data: Vec<f32> = ptrs.iter().flat_map(|(_, p)| p.iter().copied()).collect();
        let ptr_tpos: Vec<f32> = ptrs.iter().map(|(p, _)| *p as f32 / t_diff_max).collect();
        let n = mems.len();
        if n == 0 {
            return Err(Error::internal(format!("frame {t}: no memory to condition on")));
        }
        let mut mem_shape = mems[0].0.shape().to_vec();
        mem_shape[0] = n as i64;
        let mut mem_feats: Vec<f32> = Vec::new();
        mems.iter().for_each(|(m, _)| m.extend_f32(&mut mem_feats));
        let mut pos_shape = pos_enc.shape.clone();
        pos_shape[0] = n as i64;
        let mem_pos: Vec<f32> = (0..n).flat_map(|_| pos_enc.data.iter().copied()).collect();
        let t_pos: Vec<i64> = mems.iter().map(|(_, p)| *p).collect();
        let inputs = vec![
            feats.vision_feat.view()?,
            feats.vision_pos_enc.view()?,
            owned(mem_shape, mem_feats)?,
            owned(pos_shape, mem_pos)?,
            owned(vec![n as i64], t_pos)?,
            owned(vec![ptrs.len() as i64, c as i64], ptr_data)?,
            owned(vec![ptrs.len() as i64], ptr_tpos)?,
        ];
        let mut r = self.run(Module::MemoryAttention, inputs)?;
        r.pop().ok_or_else(|| Error::unsupported_model("video memory attention: no output"))
    }
    /// `track_step` (+ `_forward_sam_heads`, `_encode_memory_in_output`) for object `k` on frame `t`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn track_step(
        &mut self,
        t: usize,
        feats: &Features,
        is_init_cond: bool,
        points: Option<(&[f32], &[i32])>,
        k: usize,
        direction: Direction,
        run_mem_encoder: bool,
        prev_logits: Option<Vec<f32>>,
    ) -> Result<FrameOut> {
        let m = self.model.clone();
        let md = m.metadata();
        let pix = if is_init_cond { feats.image_embed.clone() } else { self.memory_conditioned(t, feats, k, direction)? };
        let (coords, labels) = match points {
            Some((c, l)) => (c.to_vec(), l.to_vec()),
            None => (vec![0.0, 0.0], vec![-1]),
        };
        let n_points = points.map_or(0, |(_, l)| l.len());
        let multimask = md.multimask_output_in_sam
            && (is_init_cond || md.multimask_output_for_tracking)
            && (md.multimask_min_pt_num..=md.multimask_max_pt_num).contains(&n_points);
        let l = md.low_res_size;
        let has_mask = prev_logits.is_some();
        let mask_in = prev_logits.unwrap_or_else(|| vec![0.0; l * l]);
        let n = labels.len() as i64;
        let inputs = vec![
            pix.view()?,
            feats.high_res_0.view()?,
            feats.high_res_1.view()?,
            owned(vec![1, n, 2], coords)?,
            owned(vec![1, n], labels)?,
            owned(vec![1, 1, l as i64, l as i64], mask_in)?,
            owned(vec![1], vec![has_mask as u8 as f32])?,
            owned(vec![1], vec![multimask as u8 as f32])?,
        ];
        let d = self.run(Module::MaskDecoder, inputs)?;
        if d.len() != 4 || d[0].data.len() != l * l || d[2].data.len() != md.hidden_dim || d[3].data.is_empty() {
            return Err(Error::unsupported_model("video mask decoder: unexpected outputs"));
        }
        let score = d[3].data[0];
        let iou = d[1].data.first().copied().unwrap_or(f32::NAN);
        let mut out = FrameOut { pred_masks: d[0].data.clone().into(), obj_ptr: d[2].data.clone().into(), score, iou, maskmem: None };
        if run_mem_encoder {
            out.maskmem = Some(self.encode_memory(feats, &d[0].data, score, points.is_some())?);
        }
        Ok(out)
    }
}
