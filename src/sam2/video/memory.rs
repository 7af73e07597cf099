//! The tracker's memory bank: per object, the outputs of conditioning (clicked) and tracked frames
//! with their memories and object pointers, what a frame selects from them, and what may be
//! forgotten under `keep_frames`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::error::{Error, Result};

use super::metadata::VideoMetadata;
use super::model::Array;
use super::numeric::bf16_round;

/// The direction frames are tracked in: in reverse, a frame's memory comes from the frames after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Direction {
    #[default]
    Forward,
    Reverse,
}

/// One object's output on one frame (`FrameOut` of the specification).
#[derive(Clone)]
pub(super) struct FrameOut {
    /// Low-res logits, `low_res_size`².
    pub(super) pred_masks: Arc<[f32]>,
    pub(super) obj_ptr: Arc<[f32]>,
    pub(super) score: f32,
    /// The decoder's predicted IoU of `pred_masks` (1 for a mask prompt, as the predictor's dummy).
    pub(super) iou: f32,
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
    /// The memory encoder's features as stored: rounded to bfloat16 when `bf16`.
    pub(super) fn stored(feat: Array, bf16: bool) -> MemoryFeatures {
        if bf16 {
            let bits = feat.data.iter().map(|v| (bf16_round(*v).to_bits() >> 16) as u16).collect();
            return MemoryFeatures::Bf16 { shape: feat.shape, bits };
        }
        MemoryFeatures::F32(feat)
    }

    pub(super) fn shape(&self) -> &[i64] {
        match self {
            MemoryFeatures::Bf16 { shape, .. } => shape,
            MemoryFeatures::F32(a) => &a.shape,
        }
    }

    /// Appends the features as float32 (the memory attention's input).
    pub(super) fn extend_f32(&self, out: &mut Vec<f32>) {
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

    /// Per-frame outputs held, consolidated or pending.
    pub(super) fn held_outputs(&self) -> usize {
        self.cond.len() + self.non_cond.len() + self.temp_cond.len() + self.temp_non_cond.len()
    }
}

/// Frames whose encoder outputs are pinned: pending clicks (the next consolidation encodes their
/// memory) and, for a volume, conditioning frames (clicked again most often).
pub(super) fn pinned_frames(objects: &[(i32, ObjectState)], volume: bool) -> BTreeSet<usize> {
    objects
        .iter()
        .flat_map(|(_, o)| {
            let cond = o.cond.keys().filter(move |_| volume);
            o.temp_cond.keys().chain(o.temp_non_cond.keys()).chain(cond).copied()
        })
        .collect()
}

/// A streamed track forgets the tracked outputs before `keep_from`: no frame it can still reach
/// selects them.
pub(super) fn forget_before(objects: &mut [(i32, ObjectState)], keep_from: usize) {
    for (_, o) in objects {
        o.non_cond.retain(|t, _| *t >= keep_from);
        o.tracked.retain(|t, _| *t >= keep_from);
    }
}

/// What frame `t` selects from an object's memory (`_prepare_memory_conditioned_features`): the
/// memories with their temporal positions and the object pointers with their signed distances.
pub(super) struct Selection<'a> {
    pub(super) memories: Vec<(&'a MemoryFeatures, i64)>,
    pub(super) pointers: Vec<(i64, &'a [f32])>,
}

/// Where the selection looks.
pub(super) struct Reach {
    /// Tracking in reverse: the previous frames are those after `t`, and pointer distances change
    /// sign (`track_in_reverse` in `sam2_base.py`).
    pub(super) reverse: bool,
    /// Frames of the track (reverse tracking stops at its end).
    pub(super) frames: usize,
    /// `min(num_frames, max_obj_ptrs_in_encoder)`.
    pub(super) max_ptrs: usize,
}

impl ObjectState {
    /// The memories and pointers frame `t` selects: every conditioning frame's memory at t_pos 0,
    /// then those of the previous `num_maskmem - 1` frames; the pointers of the conditioning frames
    /// up to `t` (in the tracking direction), then those of the previous `max_ptrs - 1` frames.
    pub(super) fn select(&self, t: usize, meta: &VideoMetadata, reach: &Reach) -> Result<Selection<'_>> {
        let nm = meta.num_maskmem;
        let mut memories: Vec<(&MemoryFeatures, i64)> = Vec::new();
        for out in self.cond.values() {
            memories.push((out.maskmem.as_deref().ok_or_else(|| Error::internal("conditioning frame without memory"))?, 0));
        }
        let reverse = reach.reverse;
        // The frame `d` frames before `t` in the tracking direction (None: outside the video).
        let before = |d: usize| if reverse { Some(t + d).filter(|s| *s < reach.frames) } else { t.checked_sub(d) };
        for t_pos in 1..nm {
            let t_rel = nm - t_pos;
            let Some(prev) = before(t_rel) else { continue };
            if let Some(m) = self.non_cond.get(&prev).and_then(|out| out.maskmem.as_deref()) {
                memories.push((m, t_pos as i64));
            }
        }
        let sign = if reverse { -1 } else { 1 };
        let mut pointers: Vec<(i64, &[f32])> = Vec::new();
        for (&s, out) in &self.cond {
            let in_the_past = if reverse { s >= t } else { s <= t };
            if !meta.only_obj_ptrs_in_the_past_for_eval || in_the_past {
                let d = t as i64 - s as i64;
                pointers.push((if meta.use_signed_tpos_enc_to_obj_ptrs { d * sign } else { d.abs() }, &out.obj_ptr));
            }
        }
        for t_diff in 1..reach.max_ptrs {
            let Some(s) = before(t_diff) else { break };
            if let Some(out) = self.non_cond.get(&s) {
                pointers.push((t_diff as i64, &out.obj_ptr));
            }
        }
        Ok(Selection { memories, pointers })
    }
}
