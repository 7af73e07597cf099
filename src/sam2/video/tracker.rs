//! The tracker: frames in, prompts, tracking, masks out at the frame's size (the memory bank it
//! keeps is in `memory`).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use ort::session::SessionInputValue;

use crate::error::{Error, Result};
use crate::image::intensity::{mapped_rgb8, mapping_for};
use crate::image::resize::resize_pil_bicubic;
use crate::image::ImageView;

use super::memory::{Features, ObjectState};
use super::metadata::VideoMetadata;
use super::model::{Array, Module, VideoModel};
use super::numeric::upsample_bilinear;
use super::timings::{elapsed_ms, ModuleTimes};

/// Most points one `add_points` call takes.
pub const MAX_VIDEO_POINTS: usize = 64;

/// How a tracker runs; see the module documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrackerOptions {
    /// The video's length when known. The official predictor scales object-pointer distances by
    /// `min(num_frames, max_obj_ptrs_in_encoder) - 1`; `None` assumes a video of at least
    /// `max_obj_ptrs_in_encoder` frames (exact for every such video, the streaming case).
    pub num_frames: Option<usize>,
    /// Keep the encoder outputs of this many most recent frames only (`None`: all).
    pub keep_frames: Option<usize>,
}

/// One object on one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectMask {
    pub object_id: i32,
    /// Low-res logits (`low_res_size`², row-major); `no_obj_score` everywhere where the object has no
    /// output on this frame or is absent.
    pub low_res: Vec<f32>,
    /// The mask at the frame's size, 0/255: bilinear upsampling of `low_res`, `> 0`.
    pub mask: Vec<u8>,
    /// The object-score logit (`None` when the object has no output on this frame).
    pub score: Option<f32>,
    /// `score > 0`.
    pub present: bool,
}

/// Every object on one frame, in the order objects were first prompted.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameMasks {
    pub frame: usize,
    pub width: usize,
    pub height: usize,
    pub objects: Vec<ObjectMask>,
}

/// A video (or a stack of slices) being tracked; see the module documentation.
/// Cloning is cheap (frames and outputs are shared `Arc`s): a call that may be cancelled keeps a
/// copy to put back.
#[derive(Clone)]
pub struct Tracker {
    pub(super) model: Arc<VideoModel>,
    pub(super) options: TrackerOptions,
    /// (width, height) of the first frame; every frame must have it.
    pub(super) size: Option<(usize, usize)>,
    pub(super) frames_added: usize,
    pub(super) features: BTreeMap<usize, Arc<Features>>,
    /// Objects in the order they were first prompted.
    pub(super) objects: Vec<(i32, ObjectState)>,
    /// `_get_maskmem_pos_enc`: one constant for all frames and objects, from the first encoding.
    pub(super) maskmem_pos_enc: Option<Arc<Array>>,
    pub(super) tracking_started: bool,
    /// Time per module so far (a `Cell`: modules also run from `&self` methods).
    pub(super) timings: Cell<ModuleTimes>,
    /// Test hook: drop every object pointer (to show the parity test catches it).
    #[doc(hidden)]
    pub ablate_pointers: bool,
    /// Test hook: keep memory features in float32.
    #[doc(hidden)]
    pub ablate_bf16: bool,
}

impl Tracker {
    pub fn new(model: Arc<VideoModel>, options: TrackerOptions) -> Result<Self> {
        if options.keep_frames == Some(0) {
            return Err(Error::invalid("keep_frames must be at least 1"));
        }
        if options.num_frames == Some(0) {
            return Err(Error::invalid("num_frames must be at least 1"));
        }
        Ok(Tracker {
            model,
            options,
            size: None,
            frames_added: 0,
            features: BTreeMap::new(),
            objects: Vec::new(),
            maskmem_pos_enc: None,
            tracking_started: false,
            timings: Cell::default(),
            ablate_pointers: false,
            ablate_bf16: false,
        })
    }

    pub(super) fn meta(&self) -> &VideoMetadata {
        self.model.metadata()
    }

    /// Forgets every frame, object and memory: the tracker is as new (same model and options).
    pub fn reset(&mut self) {
        let fresh = Tracker::new(self.model.clone(), self.options).expect("options were valid when the tracker was made");
        *self = fresh;
    }

    pub fn model(&self) -> &Arc<VideoModel> {
        &self.model
    }

    pub fn options(&self) -> TrackerOptions {
        self.options
    }

    /// True once a frame was tracked: objects can no longer be added.
    pub fn tracking_started(&self) -> bool {
        self.tracking_started
    }

    /// Milliseconds per module since the tracker was created.
    pub fn timings(&self) -> ModuleTimes {
        self.timings.get()
    }

    /// Runs one module of the model, adding its time to `timings`.
    pub(super) fn run(&self, module: Module, inputs: Vec<SessionInputValue<'_>>) -> Result<Vec<Array>> {
        let start = Instant::now();
        let r = self.model.run(module, inputs);
        self.add_time(|t| t.slot(module), start);
        r
    }

    pub(super) fn add_time(&self, slot: impl FnOnce(&mut ModuleTimes) -> &mut f64, start: Instant) {
        let mut t = self.timings.get();
        *slot(&mut t) += elapsed_ms(start);
        self.timings.set(t);
    }

    /// Frames added so far.
    pub fn num_frames(&self) -> usize {
        self.frames_added
    }

    /// (width, height) of the frames, once one was added.
    pub fn frame_size(&self) -> Option<(usize, usize)> {
        self.size
    }

    /// Object ids in the order they were first prompted.
    pub fn object_ids(&self) -> Vec<i32> {
        self.objects.iter().map(|(id, _)| *id).collect()
    }

    /// Per-frame outputs (conditioning and tracked, all objects) held in the memory bank.
    pub fn held_outputs(&self) -> usize {
        self.objects.iter().map(|(_, o)| o.cond.len() + o.non_cond.len() + o.temp_cond.len() + o.temp_non_cond.len()).sum()
    }

    /// Frames whose encoder outputs are held.
    pub fn held_frames(&self) -> Vec<usize> {
        self.features.keys().copied().collect()
    }

    /// `_load_img_as_tensor` (after the intensity stage, when it applies): the frame resized to S x S as PIL's default `resize` does (bicubic,
    /// bit-exact: `resize_pil_bicubic`; no resize when the frame already is S x S), `u8 / 255`, then
    /// ImageNet mean / std, NCHW float32.
    pub fn preprocess(&self, image: &ImageView<'_>) -> Result<Vec<f32>> {
        let s = self.meta().image_size;
        // Through the intensity stage when it applies, rounded to 8 bits: the tracker's resize is
        // PIL's 8-bit bicubic.
        let rgb = match mapping_for(self.model.intensity().as_ref(), image)? {
            Some(mapping) => mapped_rgb8(image, &mapping)?,
            None => image.try_to_rgb8()?,
        };
        let rgb = if (image.width(), image.height()) == (s, s) {
            rgb
        } else {
            resize_pil_bicubic(&rgb, (image.width(), image.height()), 3, (s, s))?
        };
        let p = &self.meta().preprocessing;
        let mut out = crate::alloc::vec_of(3 * s * s, 0f32, "a video frame tensor")?;
        for (c, plane) in out.chunks_exact_mut(s * s).enumerate() {
            for (o, px) in plane.iter_mut().zip(rgb.chunks_exact(3)) {
                let x = (px[c] as f64 / 255.0) as f32;
                *o = (x - p.mean[c]) / p.std[c];
            }
        }
        Ok(out)
    }

    /// Adds the next frame (encodes it now); returns its index. Every frame must have the first
    /// frame's size.
    pub fn add_frame(&mut self, image: &ImageView<'_>) -> Result<usize> {
        self.add_frame_sized(image, (image.width(), image.height()))
    }

    /// Adds the next frame already resized to the model's S x S by the caller (e.g. with PIL, as the
    /// official predictor does), for a video whose frames are `size` = (width, height): clicks are
    /// in those pixels and masks come at that size.
    pub fn add_resized_frame(&mut self, image: &ImageView<'_>, size: (usize, usize)) -> Result<usize> {
        let s = self.meta().image_size;
        if (image.width(), image.height()) != (s, s) {
            return Err(Error::invalid(format!(
                "a resized frame must be {s}x{s} (the model's input size), not {}x{}",
                image.width(),
                image.height()
            )));
        }
        crate::image::check_size(size.0 as i64, size.1 as i64, u64::MAX)?;
        self.add_frame_sized(image, size)
    }

    /// Refuses a next frame of `(w, h)` when the track's frames have another size.
    pub fn check_frame_size(&self, (w, h): (usize, usize)) -> Result<()> {
        match self.size {
            Some((fw, fh)) if (fw, fh) != (w, h) => Err(Error::invalid(format!(
                "frame {} is {w}x{h} but the track's frames are {fw}x{fh}: every frame must have the first frame's size",
                self.frames_added
            ))),
            _ => Ok(()),
        }
    }

    fn add_frame_sized(&mut self, image: &ImageView<'_>, (w, h): (usize, usize)) -> Result<usize> {
        self.check_frame_size((w, h))?;
        let s = self.meta().image_size as i64;
        let start = Instant::now();
        let tensor = Array { shape: vec![1, 3, s, s], data: self.preprocess(image)? };
        self.add_time(|t| &mut t.preprocess_ms, start);
        let mut o = self.run(Module::ImageEncoder, vec![tensor.view()?])?;
        if o.len() != 5 {
            return Err(Error::unsupported_model("video image encoder: expected 5 outputs"));
        }
        let mut take = || o.remove(0);
        let features =
            Features { image_embed: take(), vision_feat: take(), vision_pos_enc: take(), high_res_0: take(), high_res_1: take() };
        let t = self.frames_added;
        self.size = Some((w, h));
        self.features.insert(t, Arc::new(features));
        self.frames_added += 1;
        self.release_old();
        Ok(t)
    }

    pub(super) fn features(&self, t: usize) -> Result<Arc<Features>> {
        if t >= self.frames_added {
            return Err(Error::invalid(format!("frame {t} was never added ({} frames so far)", self.frames_added)));
        }
        self.features.get(&t).cloned().ok_or_else(|| {
            Error::invalid(format!(
                "frame {t} is no longer held (keep_frames = {:?} keeps only the most recent frames)",
                self.options.keep_frames
            ))
        })
    }

    /// `min(num_frames, max_obj_ptrs_in_encoder)`.
    pub(super) fn max_ptrs(&self) -> usize {
        let m = self.meta().max_obj_ptrs_in_encoder;
        self.options.num_frames.map_or(m, |n| n.min(m))
    }

    fn object_index(&self, id: i32) -> Option<usize> {
        self.objects.iter().position(|(o, _)| *o == id)
    }

    /// `add_new_points_or_box` with points only; see [`Tracker::add_prompt`].
    pub fn add_points(&mut self, frame: usize, object_id: i32, points: &[[f32; 2]], labels: &[i32]) -> Result<FrameMasks> {
        self.add_prompt(frame, object_id, points, labels, None)
    }

    /// `add_new_points_or_box` (`clear_old_points`): the prompt replaces earlier clicks of this
    /// object on this frame. `points` are (x, y) in the frame's pixels, `labels` 1 (positive) or 0
    /// (negative); `bbox` (x1, y1, x2, y2), also in pixels, becomes two corner points (labels 2, 3)
    /// placed before the clicks, as the predictor does. Returns every object on that frame (the
    /// prompted one with its new mask).
    /// A frame not tracked yet for this object becomes a conditioning frame; a prompt on a tracked
    /// frame is a correction (memory-conditioned, previous logits as mask input) and stays a
    /// non-conditioning frame. New objects can be added only before tracking starts.
    pub fn add_prompt(
        &mut self,
        frame: usize,
        object_id: i32,
        points: &[[f32; 2]],
        labels: &[i32],
        bbox: Option<[f32; 4]>,
    ) -> Result<FrameMasks> {
        let feats = self.features(frame)?;
        let (w, h) = self.size.ok_or_else(|| Error::internal("no frame size"))?;
        if (points.is_empty() && bbox.is_none()) || points.len() != labels.len() || points.len() > MAX_VIDEO_POINTS {
            return Err(Error::invalid(format!(
                "{} points and {} labels: give a box or 1 to {MAX_VIDEO_POINTS} points, one label each",
                points.len(),
                labels.len()
            )));
        }
        if let Some(p) = points.iter().find(|p| !p[0].is_finite() || !p[1].is_finite()) {
            return Err(Error::invalid(format!("point {p:?} is not finite")));
        }
        if let Some(l) = labels.iter().find(|l| !matches!(l, 0 | 1)) {
            return Err(Error::invalid(format!("label {l}: labels are 1 (positive) or 0 (negative)")));
        }
        if let Some(b) = bbox {
            if b.iter().any(|v| !v.is_finite()) || b[2] < b[0] || b[3] < b[1] {
                return Err(Error::invalid(format!("box {b:?}: give finite (x1, y1, x2, y2) with x1 <= x2 and y1 <= y2")));
            }
        }
        let (mut points, mut labels) = (points.to_vec(), labels.to_vec());
        if let Some(b) = bbox {
            points.splice(0..0, [[b[0], b[1]], [b[2], b[3]]]);
            labels.splice(0..0, [2, 3]);
        }
        let k = match self.object_index(object_id) {
            Some(k) => k,
            None if self.tracking_started => {
                return Err(Error::invalid(format!(
                    "object {object_id} is unknown and tracking has started: objects {:?} only (start a new tracker to add objects)",
                    self.object_ids()
                )))
            }
            None => {
                self.objects.push((object_id, ObjectState::default()));
                self.objects.len() - 1
            }
        };
        // normalize_coords: x / W * S, y / H * S in float32.
        let s = self.meta().image_size as f32;
        let coords: Vec<f32> = points.iter().flat_map(|p| [p[0] / w as f32 * s, p[1] / h as f32 * s]).collect();
        let labels = labels.as_slice();
        let o = &self.objects[k].1;
        let is_init_cond = !o.tracked.contains(&frame);
        let temp = if is_init_cond { &o.temp_cond } else { &o.temp_non_cond };
        let prev = temp.get(&frame).or_else(|| o.cond.get(&frame)).or_else(|| o.non_cond.get(&frame));
        let clamp = self.meta().mask_input_clamp;
        let prev_logits: Option<Vec<f32>> = prev.map(|p| p.pred_masks.iter().map(|v| v.clamp(-clamp, clamp)).collect());
        let out = match self.track_step(frame, &feats, is_init_cond, Some((&coords, labels)), k, false, prev_logits) {
            Ok(out) => out,
            Err(e) => {
                // An object created by this call and never predicted is forgotten again.
                let o = &self.objects[k].1;
                if o.cond.is_empty() && o.non_cond.is_empty() && o.temp_cond.is_empty() && o.temp_non_cond.is_empty() {
                    self.objects.remove(k);
                }
                return Err(e);
            }
        };
        let o = &mut self.objects[k].1;
        if is_init_cond {
            o.temp_cond.insert(frame, out);
        } else {
            o.temp_non_cond.insert(frame, out);
        }
        Ok(self.frame_masks(frame, Some(is_init_cond)))
    }

    /// `propagate_in_video` (forward): consolidates pending clicks, then tracks every frame from the
    /// first conditioning frame to the last frame added (re-tracking frames tracked before, as the
    /// predictor does). Returns each frame's masks.
    pub fn propagate(&mut self) -> Result<Vec<FrameMasks>> {
        self.preflight()?;
        let start = self.objects.iter().filter_map(|(_, o)| o.cond.keys().next().copied()).min().unwrap_or(0);
        (start..self.frames_added).map(|t| self.track_frame(t)).collect()
    }

    /// Tracks one frame (consolidating pending clicks first): every object without a conditioning
    /// output on it gets a memory-conditioned prediction, stored (with its memory) as a
    /// non-conditioning output. Streaming use: `add_frame` then `track_frame` on its index.
    pub fn track_frame(&mut self, frame: usize) -> Result<FrameMasks> {
        self.preflight()?;
        let feats = self.features(frame)?;
        self.tracking_started = true;
        for k in 0..self.objects.len() {
            if !self.objects[k].1.cond.contains_key(&frame) {
                let out = self.track_step(frame, &feats, false, None, k, true, None)?;
                self.objects[k].1.non_cond.insert(frame, out);
            }
            self.objects[k].1.tracked.insert(frame);
        }
        Ok(self.frame_masks(frame, None))
    }

    /// `_consolidate_temp_output_across_obj` + `_get_orig_video_res_output` for frame `t`; with
    /// `temp` (Some(is_cond)) pending clicks of that kind come first.
    fn frame_masks(&self, t: usize, temp: Option<bool>) -> FrameMasks {
        let start = Instant::now();
        let (w, h) = self.size.unwrap_or((0, 0));
        let l = self.meta().low_res_size;
        let objects = self
            .objects
            .iter()
            .map(|(id, o)| {
                let pending = match temp {
                    Some(true) => o.temp_cond.get(&t),
                    Some(false) => o.temp_non_cond.get(&t),
                    None => None,
                };
                let out = pending.or_else(|| o.cond.get(&t)).or_else(|| o.non_cond.get(&t));
                let low_res = match out {
                    Some(out) => out.pred_masks.to_vec(),
                    None => vec![self.meta().no_obj_score; l * l],
                };
                let mask = upsample_bilinear(&low_res, (l, l), (w, h)).iter().map(|v| if *v > 0.0 { 255 } else { 0 }).collect();
                let score = out.map(|o| o.score);
                ObjectMask { object_id: *id, low_res, mask, score, present: score.is_some_and(|s| s > 0.0) }
            })
            .collect();
        self.add_time(|t| &mut t.postprocess_ms, start);
        FrameMasks { frame: t, width: w, height: h, objects }
    }
}
