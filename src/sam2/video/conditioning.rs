//! Conditioning frames taken out of a track, and a track made of them: the memory approach of
//! reference-based segmentation keeps an object's conditioning frames (memory features, object
//! pointer; no pixels) and tracks each new image as the next frame of a video made of them alone,
//! so the new image never joins the memory.

use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};

use super::memory::{FrameOut, MemoryFeatures, ObjectState};
use super::model::{Array, VideoModel};
use super::tracker::{Tracker, TrackerOptions};

/// One object's conditioning frame as the memory bank holds it, with the memory position encoding
/// (a constant of the model) its memory is read with.
#[derive(Clone)]
pub struct ConditioningMemory {
    out: FrameOut,
    pos_enc: Arc<Array>,
}

/// A [`ConditioningMemory`] as plain values (to save it). `features` are the stored memory features
/// as float32 (bfloat16 values where the model stores them so: exact in float32).
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryParts {
    pub features_shape: Vec<i64>,
    pub features: Vec<f32>,
    pub pos_enc_shape: Vec<i64>,
    pub pos_enc: Vec<f32>,
    pub obj_ptr: Vec<f32>,
    pub score: f32,
}

fn element_count(shape: &[i64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, d| usize::try_from(*d).ok().and_then(|d| n.checked_mul(d)))
}

impl ConditioningMemory {
    /// The object-score logit of the frame (+10 for a mask prompt).
    pub fn score(&self) -> f32 {
        self.out.score
    }

    pub fn parts(&self) -> MemoryParts {
        let maskmem = self.out.maskmem.as_ref().expect("a conditioning memory has its memory features");
        let mut features = Vec::new();
        maskmem.extend_f32(&mut features);
        MemoryParts {
            features_shape: maskmem.shape().to_vec(),
            features,
            pos_enc_shape: self.pos_enc.shape.clone(),
            pos_enc: self.pos_enc.data.clone(),
            obj_ptr: self.out.obj_ptr.to_vec(),
            score: self.out.score,
        }
    }

    /// A conditioning memory from its parts, for `model` (sizes checked against each other and the
    /// model's object-pointer width).
    pub fn from_parts(model: &VideoModel, p: MemoryParts) -> Result<Self> {
        let md = model.metadata();
        let bad = |why: &str| Error::new(ErrorKind::ModelInvalid, format!("a conditioning memory {why}"));
        let fits = |shape: &[i64], data: &[f32]| shape.len() == 4 && shape[0] == 1 && element_count(shape) == Some(data.len());
        if !fits(&p.features_shape, &p.features) || !fits(&p.pos_enc_shape, &p.pos_enc) || p.features_shape != p.pos_enc_shape {
            return Err(bad("has features of inconsistent sizes"));
        }
        if p.obj_ptr.len() != md.hidden_dim {
            return Err(bad(&format!("has an object pointer of {} values; the model's are {}", p.obj_ptr.len(), md.hidden_dim)));
        }
        if !p.features.iter().chain(&p.pos_enc).chain(&p.obj_ptr).chain([&p.score]).all(|v| v.is_finite()) {
            return Err(bad("holds a value that is not a finite number"));
        }
        let bf16 = md.maskmem_features_storage_dtype == "bfloat16";
        let features = Array { shape: p.features_shape, data: p.features };
        Ok(ConditioningMemory {
            out: FrameOut {
                pred_masks: Arc::from([]),
                obj_ptr: p.obj_ptr.into(),
                score: p.score,
                iou: 1.0,
                maskmem: Some(Arc::new(MemoryFeatures::stored(features, bf16))),
            },
            pos_enc: Arc::new(Array { shape: p.pos_enc_shape, data: p.pos_enc }),
        })
    }
}

impl Tracker {
    /// Consolidates pending prompts (their memory is encoded, as when tracking starts) and returns
    /// object `object_id`'s conditioning frames, in frame order.
    pub fn conditioning_memory(&mut self, object_id: i32) -> Result<Vec<ConditioningMemory>> {
        let k = self
            .objects
            .iter()
            .position(|(o, _)| *o == object_id)
            .ok_or_else(|| Error::invalid(format!("object {object_id} is not in the track (objects {:?})", self.object_ids())))?;
        self.preflight()?;
        let pos_enc = self.maskmem_pos_enc.clone().ok_or_else(|| Error::internal("no memory position encoding after consolidation"))?;
        Ok(self.objects[k].1.cond.values().map(|out| ConditioningMemory { out: out.clone(), pos_enc: pos_enc.clone() }).collect())
    }

    /// A track whose frames `0..memories.len()` are `memories` as object 1's conditioning frames (no
    /// pixels: only frames added later can be tracked), in a video of `memories.len() + later`
    /// frames (the object-pointer distances are scaled by the video's length, as the predictor does).
    pub fn from_conditioning(model: Arc<VideoModel>, memories: &[ConditioningMemory], later: usize) -> Result<Tracker> {
        let first = memories.first().ok_or_else(|| Error::invalid("no conditioning frame to track against"))?;
        let mut tracker = Tracker::new(model, TrackerOptions { num_frames: Some(memories.len() + later), ..TrackerOptions::default() })?;
        let mut object = ObjectState::default();
        for (t, m) in memories.iter().enumerate() {
            object.cond.insert(t, m.out.clone());
        }
        tracker.objects.push((1, object));
        tracker.frames.added = memories.len();
        tracker.maskmem_pos_enc = Some(first.pos_enc.clone());
        Ok(tracker)
    }
}
