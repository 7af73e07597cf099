//! The memory approach: a reference taught on a SAM2 video model. Each example (an image and the
//! object's mask) becomes a conditioning frame of the video modules, prompted with its mask as the
//! official predictor's `add_new_mask` does; a find tracks the new image as the next frame of a
//! video made of those frames alone (the official `SAM2VideoPredictor` on reference frames 0..k-1
//! and the new image as frame k), and never adds it to the memory: no drift, no order dependence.
//! The object score decides presence. Like SAM2's memory itself, it matches the same object or part
//! again, not another instance of a category.

use std::sync::{Arc, RwLock};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::sam2::video::{ConditioningMemory, MemoryParts, Tracker, TrackerOptions, VideoModel};

use super::find::{elapsed_ms, options_check, FindMode, FindOptions, FindResult, FindStats, Found, Refinement};
use super::instances::extent;
use super::store::{self, Reader, Writer};
use super::teach::taught_mask;
use super::MAX_EXAMPLES;

/// A reference taught on a video model: its examples' conditioning frames (memory features and
/// object pointers, no pixels). Immutable between `add`s and safe to share between threads.
pub struct MemoryReference {
    model_identity: u128,
    /// The intensity setting the examples were encoded under.
    setting: u64,
    examples: RwLock<Arc<Vec<ConditioningMemory>>>,
}

fn setting_of(model: &VideoModel) -> u64 {
    model.core().intensity().as_ref().map_or(0, |i| i.key().max(1))
}

/// One example's conditioning frame: a one-frame track prompted with the mask, consolidated.
fn example(model: &Arc<VideoModel>, image: &ImageView<'_>, mask: &[u8], mask_stride: usize) -> Result<ConditioningMemory> {
    let (stride, _) = taught_mask(mask, mask_stride, (image.width(), image.height()))?;
    let mut track = Tracker::new(model.clone(), TrackerOptions { num_frames: Some(1), ..TrackerOptions::default() })?;
    let frame = track.add_frame(image)?;
    track.add_mask(frame, 1, mask, stride)?;
    track.conditioning_memory(1)?.pop().ok_or_else(|| Error::internal("a mask prompt left no conditioning frame"))
}

impl MemoryReference {
    /// A reference from one image and the object's mask on it (`mask`: width x height bytes, not 0 =
    /// object, rows `mask_stride` apart, 0 = `width`), taught on `model`.
    pub fn new(model: &Arc<VideoModel>, image: &ImageView<'_>, mask: &[u8], mask_stride: usize) -> Result<Self> {
        let first = example(model, image, mask, mask_stride)?;
        Ok(MemoryReference { model_identity: model.identity(), setting: setting_of(model), examples: RwLock::new(Arc::new(vec![first])) })
    }

    /// Adds another example: one more conditioning frame (frame k of the video a find runs, before
    /// the new image). Other threads' finds meanwhile use the reference as it was.
    pub fn add(&self, model: &Arc<VideoModel>, image: &ImageView<'_>, mask: &[u8], mask_stride: usize) -> Result<()> {
        self.check_model(model)?;
        let next = example(model, image, mask, mask_stride)?;
        let mut examples = self.examples.write().unwrap_or_else(|p| p.into_inner());
        if examples.len() >= MAX_EXAMPLES {
            return Err(Error::invalid(format!("a reference holds at most {MAX_EXAMPLES} examples")));
        }
        let mut more = examples.as_ref().clone();
        more.push(next);
        *examples = Arc::new(more);
        Ok(())
    }

    fn snapshot(&self) -> Arc<Vec<ConditioningMemory>> {
        self.examples.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn examples(&self) -> usize {
        self.snapshot().len()
    }

    pub fn model_identity(&self) -> u128 {
        self.model_identity
    }

    fn check_model(&self, model: &VideoModel) -> Result<()> {
        store::check_identity(store::Kind::Video, self.model_identity, model.identity())?;
        if setting_of(model) != self.setting {
            return Err(Error::invalid(
                "the reference was taught under another intensity setting than the session's now: set the same one, or teach again",
            ));
        }
        Ok(())
    }

    /// Finds the object in `image`: the new image tracked as the frame after the examples. Mode
    /// `Best` only (one object, one mask); the score is the sigmoid of the object-score logit (the
    /// predictor's own decision is a score above 0.5); no refinement and no colour. The
    /// `Found::point` is the mask's centroid, `similarity` the score, `colour` 1.
    pub fn find(&self, model: &Arc<VideoModel>, image: &ImageView<'_>, options: &FindOptions) -> Result<FindResult> {
        options_check(options)?;
        if options.mode == FindMode::All {
            return Err(Error::invalid(
                "a reference taught on a video model finds the single best match: every instance needs a reference taught on a SAM2 image session",
            ));
        }
        self.check_model(model)?;
        let examples = self.snapshot();
        let mut track = Tracker::from_conditioning(model.clone(), &examples, 1)?;
        let frame = track.add_frame(image)?;
        let masks = track.track_frame(frame)?;
        let start = Instant::now();
        let object = masks.objects.first().ok_or_else(|| Error::internal("a track of one object returned none"))?;
        let (w, h) = (masks.width, masks.height);
        let logit = object.score.unwrap_or(model.metadata().no_obj_score);
        let score = 1.0 / (1.0 + (-logit).exp());
        let mut mask = object.mask.clone();
        let (bbox, area) = extent(&mask, w, h);
        let present = score >= options.threshold && area > 0;
        let point = centroid(&mask, w, h);
        if !present {
            mask.fill(0);
        }
        let t = track.timings();
        let stats = FindStats {
            encoder_reused: false,
            encoder_ms: t.preprocess_ms + t.image_encoder_ms,
            maps_ms: t.memory_attention_ms,
            decoder_ms: t.mask_decoder_ms,
            decoder_runs: 1,
            postprocess_ms: t.postprocess_ms + elapsed_ms(start),
        };
        let found =
            Found { score, present, bbox, area, predicted_iou: object.predicted_iou.unwrap_or(0.0), point, similarity: score, colour: 1.0 };
        Ok(FindResult { width: w, height: h, instances: vec![found], mask, labels: None, refinement: Refinement::NotSupported, stats })
    }

    /// The reference as a file's bytes (kind "video model", see `store`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let examples = self.snapshot();
        let mut w = Writer::default();
        w.u64(self.setting);
        w.u32(examples.len() as u32);
        for e in examples.iter() {
            let p = e.parts();
            for (shape, data) in [(&p.features_shape, &p.features), (&p.pos_enc_shape, &p.pos_enc)] {
                w.u32(shape.len() as u32);
                shape.iter().for_each(|d| w.u64(*d as u64));
                w.f32s(data);
            }
            w.u32(p.obj_ptr.len() as u32);
            w.f32s(&p.obj_ptr);
            w.f32(p.score);
        }
        store::seal(store::Kind::Video, self.model_identity, &w.0)
    }

    /// Saves the reference to `path` (written whole or not at all).
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        store::write_file(path, &self.to_bytes())
    }

    pub fn load(model: &VideoModel, path: &std::path::Path) -> Result<Self> {
        Self::from_bytes(model, &store::read_file(path)?)
    }

    /// A reference from a file's bytes, for use with `model` (refused when made with another model
    /// or kind, damaged, or of a newer format).
    pub fn from_bytes(model: &VideoModel, bytes: &[u8]) -> Result<Self> {
        let payload = store::open(bytes, store::Kind::Video, model.identity())?;
        let mut r = Reader::new(payload);
        let setting = r.u64()?;
        let n = r.u32()? as usize;
        if n == 0 || n > MAX_EXAMPLES {
            return Err(store::damaged(format!("it holds {n} examples")));
        }
        let mut examples = Vec::with_capacity(n);
        for _ in 0..n {
            let array = |r: &mut Reader<'_>| -> Result<(Vec<i64>, Vec<f32>)> {
                let rank = r.u32()? as usize;
                if rank != 4 {
                    return Err(store::damaged(format!("a memory of rank {rank}")));
                }
                let shape: Vec<i64> = (0..rank).map(|_| r.u64().map(|d| d.min(i64::MAX as u64) as i64)).collect::<Result<_>>()?;
                let count =
                    shape.iter().try_fold(1usize, |n, d| n.checked_mul(*d as usize)).ok_or_else(|| store::damaged("a count overflows"))?;
                Ok((shape, r.f32s(count)?))
            };
            let (features_shape, features) = array(&mut r)?;
            let (pos_enc_shape, pos_enc) = array(&mut r)?;
            let c = r.u32()? as usize;
            let obj_ptr = r.f32s(c)?;
            let score = r.f32()?;
            let parts = MemoryParts { features_shape, features, pos_enc_shape, pos_enc, obj_ptr, score };
            examples.push(ConditioningMemory::from_parts(model, parts)?);
        }
        r.finish()?;
        Ok(MemoryReference { model_identity: model.identity(), setting, examples: RwLock::new(Arc::new(examples)) })
    }
}

/// The mask's centroid (0, 0 for an empty mask).
fn centroid(mask: &[u8], w: usize, h: usize) -> (f32, f32) {
    let (mut sx, mut sy, mut n) = (0f64, 0f64, 0f64);
    for y in 0..h {
        for (x, v) in mask[y * w..(y + 1) * w].iter().enumerate() {
            if *v != 0 {
                sx += x as f64;
                sy += y as f64;
                n += 1.0;
            }
        }
    }
    if n == 0.0 {
        return (0.0, 0.0);
    }
    ((sx / n) as f32, (sy / n) as f32)
}
