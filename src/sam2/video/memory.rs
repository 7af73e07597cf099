//! The tracker's memory bank: per object, the outputs of conditioning (clicked) and tracked frames
//! with their memories and object pointers, and what a frame selects from them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ort::value::TensorRef;

use crate::error::{Error, Result};

use super::model::{input_error, owned, Array, Module};
use super::numeric::bf16_round;
use super::tracker::{Direction, Tracker};

/// The image encoder's outputs for one frame.
pub(super) struct Features {
    pub(super) image_embed: Array,
    pub(super) vision_feat: Array,
    pub(super) vision_pos_enc: Array,
    pub(super) high_res_0: Array,
    pub(super) high_res_1: Array,
    /// When the tracker last used them (a volume evicts the least recently used).
    pub(super) last_use: std::sync::atomic::AtomicU64,
}

/// One object's output on one frame (`FrameOut` of the specification).
#[derive(Clone)]
pub(super) struct FrameOut {
    /// Low-res logits, `low_res_size`².
    pub(super) pred_masks: Arc<[f32]>,
    pub(super) obj_ptr: Arc<[f32]>,
    pub(super) score: f32,
    /// Memory features, once encoded.
    pub(super) maskmem: Option<Arc<MemoryFeatures>>,
}

/// A frame's memory features as the tracker keeps them. Where the model stores them in bfloat16 (as
/// SAM2 does) only the upper 16 bits of each rounded float are kept: the same values in half the
/// bytes, which a volume holds for every slice and object.
pub(super) enum MemoryFeatures {
    Bf16 { shape: Vec<i64>, bits: Vec<u16> },
    F32(Array),
}

impl MemoryFeatures {
    fn shape(&self) -> &[i64] {
        match self {
            MemoryFeatures::Bf16 { shape, .. } => shape,
            MemoryFeatures::F32(a) => &a.shape,
        }
    }

    /// Appends the features as float32 (the memory attention's input).
    fn extend_f32(&self, out: &mut Vec<f32>) {
        match self {
            MemoryFeatures::Bf16 { bits, .. } => out.extend(bits.iter().map(|b| f32::from_bits((*b as u32) << 16))),
            MemoryFeatures::F32(a) => out.extend_from_slice(&a.data),
        }
    }
}

#[derive(Default, Clone)]
pub(super) struct ObjectState {
    pub(super) cond: BTreeMap<usize, FrameOut>,
    pub(super) non_cond: BTreeMap<usize, FrameOut>,
    pub(super) temp_cond: BTreeMap<usize, FrameOut>,
    pub(super) temp_non_cond: BTreeMap<usize, FrameOut>,
    /// Frames tracked for this object, and whether in reverse (`frames_tracked_per_obj`): a
    /// correction on a tracked frame selects its memories in the direction the frame was tracked.
    pub(super) tracked: BTreeMap<usize, Direction>,
}

impl ObjectState {
    pub(super) fn is_empty(&self) -> bool {
        self.cond.is_empty() && self.non_cond.is_empty() && self.temp_cond.is_empty() && self.temp_non_cond.is_empty()
    }
}

impl Tracker {
    /// Frames whose encoder outputs are pinned: pending clicks (the next consolidation encodes their
    /// memory) and, for a volume, conditioning frames (clicked again most often).
    fn pinned_frames(&self) -> BTreeSet<usize> {
        let volume = self.options.volume;
        self.objects
            .iter()
            .flat_map(|(_, o)| {
                let cond = o.cond.keys().filter(move |_| volume);
                o.temp_cond.keys().chain(o.temp_non_cond.keys()).chain(cond).copied()
            })
            .collect()
    }

    /// Applies `keep_frames` (see the module documentation). A streamed track drops the encoder
    /// outputs of all but the most recent frames, and the tracked outputs no reachable frame can
    /// select; a volume keeps every output and evicts the least recently used encoder outputs
    /// (their frames are encoded again when needed).
    pub(super) fn release_old(&mut self) {
        let Some(k) = self.options.keep_frames else { return };
        let pinned = self.pinned_frames();
        if self.options.volume {
            while self.features.len() > k {
                let victim = self
                    .features
                    .iter()
                    .filter(|(t, _)| !pinned.contains(t))
                    .min_by_key(|(_, f)| f.last_use.load(std::sync::atomic::Ordering::Relaxed));
                let Some((&t, _)) = victim else { break };
                self.features.remove(&t);
            }
            return;
        }
        let oldest = self.frames_added.saturating_sub(k);
        self.features.retain(|t, _| *t >= oldest || pinned.contains(t));
        let window = (self.meta().num_maskmem - 1).max(self.max_ptrs() - 1);
        let keep_from = oldest.saturating_sub(window);
        for (_, o) in &mut self.objects {
            o.non_cond.retain(|t, _| *t >= keep_from);
            o.tracked.retain(|t, _| *t >= keep_from);
        }
    }

    /// `propagate_in_video_preflight`: clicked outputs get their memory (binarised mask) and move
    /// to the consolidated outputs; a conditioning frame's non-conditioning output is dropped.
    pub(super) fn preflight(&mut self) -> Result<()> {
        if self.objects.is_empty() {
            return Err(Error::invalid("no object to track: add points first"));
        }
        for k in 0..self.objects.len() {
            for cond in [false, true] {
                let temp = std::mem::take(if cond { &mut self.objects[k].1.temp_cond } else { &mut self.objects[k].1.temp_non_cond });
                for (t, mut out) in temp {
                    if out.maskmem.is_none() {
                        let feats = self.features(t)?;
                        out.maskmem = Some(self.encode_memory(&feats, &out.pred_masks, out.score, true)?);
                    }
                    let o = &mut self.objects[k].1;
                    if cond {
                        o.cond.insert(t, out)
                    } else {
                        o.non_cond.insert(t, out)
                    };
                }
            }
            let o = &mut self.objects[k].1;
            let cond: Vec<usize> = o.cond.keys().copied().collect();
            for t in cond {
                o.non_cond.remove(&t);
            }
            if o.cond.is_empty() {
                return Err(Error::invalid(format!(
                    "object {} has no conditioning frame: click it on a frame it was not tracked on",
                    self.objects[k].0
                )));
            }
        }
        self.release_old();
        Ok(())
    }

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
        if m.metadata().maskmem_features_storage_dtype == "bfloat16" && !self.ablate_bf16 {
            let bits = feat.data.iter().map(|v| (bf16_round(*v).to_bits() >> 16) as u16).collect();
            return Ok(Arc::new(MemoryFeatures::Bf16 { shape: feat.shape, bits }));
        }
        Ok(Arc::new(MemoryFeatures::F32(feat)))
    }

    /// `_prepare_memory_conditioned_features`: the memory attention over the selected memories and
    /// object pointers of object `k` for frame `t`.
    ///
    /// Tracking in reverse, the previous frames are those after `t`, and pointer distances change sign
    /// (`track_in_reverse` in `sam2_base.py`).
    fn memory_conditioned(&self, t: usize, feats: &Features, k: usize, direction: Direction) -> Result<Array> {
        let md = self.meta();
        let o = &self.objects[k].1;
        let nm = md.num_maskmem;
        let pos_enc = self.maskmem_pos_enc.as_ref().ok_or_else(|| Error::internal("no memory position encoding yet"))?;
        // Memories: every conditioning frame at t_pos 0, then the previous num_maskmem - 1 frames.
        let mut mems: Vec<(&MemoryFeatures, i64)> = Vec::new();
        for out in o.cond.values() {
            mems.push((out.maskmem.as_deref().ok_or_else(|| Error::internal("conditioning frame without memory"))?, 0));
        }
        let reverse = direction == Direction::Reverse && !self.ablate_reverse_memory;
        // The frame `d` frames before `t` in the tracking direction (None: outside the video).
        let before = |d: usize| if reverse { Some(t + d).filter(|s| *s < self.frames_added) } else { t.checked_sub(d) };
        for t_pos in 1..nm {
            let t_rel = nm - t_pos;
            let Some(prev) = before(t_rel) else { continue };
            if let Some(m) = o.non_cond.get(&prev).and_then(|out| out.maskmem.as_deref()) {
                mems.push((m, t_pos as i64));
            }
        }
        // Object pointers: conditioning frames up to t (in the tracking direction), then the
        // previous max_ptrs - 1 frames.
        let max_ptrs = self.max_ptrs();
        let sign = if reverse { -1 } else { 1 };
        let mut ptrs: Vec<(i64, &[f32])> = Vec::new();
        for (&s, out) in &o.cond {
            let in_the_past = if reverse { s >= t } else { s <= t };
            if !md.only_obj_ptrs_in_the_past_for_eval || in_the_past {
                let d = t as i64 - s as i64;
                ptrs.push((if md.use_signed_tpos_enc_to_obj_ptrs { d * sign } else { d.abs() }, &out.obj_ptr));
            }
        }
        for t_diff in 1..max_ptrs {
            let Some(s) = before(t_diff) else { break };
            if let Some(out) = o.non_cond.get(&s) {
                ptrs.push((t_diff as i64, &out.obj_ptr));
            }
        }
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
        let mut out = FrameOut { pred_masks: d[0].data.clone().into(), obj_ptr: d[2].data.clone().into(), score, maskmem: None };
        if run_mem_encoder {
            out.maskmem = Some(self.encode_memory(feats, &d[0].data, score, points.is_some())?);
        }
        Ok(out)
    }
}
