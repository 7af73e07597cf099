//! The tracker: frames in, prompts, tracking, masks out at the frame's size (the memory bank it
//! keeps is in `memory`).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use ort::session::SessionInputValue;

use crate::control::{self, Stage};
use crate::error::{Error, Result};
use crate::image::intensity::{mapped_rgb8, mapping_for};
use crate::image::resize::resize_pil_bicubic;
use crate::image::ImageView;
use crate::sam2::image::prompt::{validate_prompt, BoxPrompt, Point, Prompt};

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
    /// Keep the encoder outputs of this many frames only (`None`: all): the most recent frames of a
    /// streamed track, the most recently used frames of a volume.
    pub keep_frames: Option<usize>,
    /// A volume (or a video known in full): every frame's 8-bit pixels are kept so any frame can be
    /// reached in either direction; frames are encoded when first needed, and again when their
    /// encoder outputs were evicted under `keep_frames`. `false`: a streamed track, frames encoded
    /// when added, frames older than `keep_frames` unreachable.
    pub volume: bool,
    /// A prompt on a tracked frame makes it a conditioning frame (the predictor's
    /// `add_all_frames_to_correct_as_cond`), so propagating over it keeps the correction; by default
    /// (as sam2 1.1.0's configurations) a correction is a non-conditioning output that a propagation
    /// passing over its frame recomputes.
    pub corrections_as_conditioning: bool,
}

/// The direction frames are tracked in: in reverse, a frame's memory comes from the frames after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Direction {
    #[default]
    Forward,
    Reverse,
}

/// Which way [`Tracker::propagate_with`] goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PropagationDirection {
    #[default]
    Forward,
    Reverse,
    /// Forward from the start frame, then in reverse from it (two `propagate_in_video` calls; the start
    /// frame is delivered by both).
    BothWays,
}

/// A propagation request: `propagate_in_video(start_frame_idx, max_frame_num_to_track, reverse)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Propagation {
    /// The frame to start from (`None`: the earliest conditioning frame of any object, as the predictor).
    pub start_frame: Option<usize>,
    pub direction: PropagationDirection,
    /// Frames to track past the start in each direction (`None`: to the end of the track).
    pub max_frames: Option<usize>,
}

/// A frame's pixels (after the intensity stage) at the size it is encoded from: 8-bit RGB, or one
/// channel where the three are equal (a CT or MR slice: a third of the bytes a volume keeps).
pub(super) struct StoredFrame {
    pixels: Vec<u8>,
    channels: usize,
    width: usize,
    height: usize,
}

impl StoredFrame {
    fn new(rgb: Vec<u8>, width: usize, height: usize) -> StoredFrame {
        if rgb.chunks_exact(3).all(|p| p[0] == p[1] && p[1] == p[2]) {
            let gray = rgb.chunks_exact(3).map(|p| p[0]).collect();
            return StoredFrame { pixels: gray, channels: 1, width, height };
        }
        StoredFrame { pixels: rgb, channels: 3, width, height }
    }
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
    /// A volume's frames (`TrackerOptions::volume`), to encode them when needed.
    pub(super) pixels: BTreeMap<usize, Arc<StoredFrame>>,
    /// Counts feature uses (least recently used eviction).
    pub(super) clock: u64,
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
    /// Test hook: select memories and pointers as forward tracking does, also in reverse.
    #[doc(hidden)]
    pub ablate_reverse_memory: bool,
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
            pixels: BTreeMap::new(),
            clock: 0,
            objects: Vec::new(),
            maskmem_pos_enc: None,
            tracking_started: false,
            timings: Cell::default(),
            ablate_pointers: false,
            ablate_bf16: false,
            ablate_reverse_memory: false,
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

    /// True once a frame was tracked.
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
        self.tensor(&StoredFrame::new(self.frame_rgb(image)?, image.width(), image.height()))
    }

    /// The frame through the intensity stage when it applies, rounded to 8 bits (the tracker's resize
    /// is PIL's 8-bit bicubic), RGB.
    fn frame_rgb(&self, image: &ImageView<'_>) -> Result<Vec<u8>> {
        match mapping_for(self.model.intensity().as_ref(), image)? {
            Some(mapping) => mapped_rgb8(image, &mapping),
            None => image.try_to_rgb8(),
        }
    }

    /// The encoder's input tensor of an 8-bit RGB frame of `(w, h)`.
    fn tensor(&self, frame: &StoredFrame) -> Result<Vec<f32>> {
        let s = self.meta().image_size;
        let (w, h, channels) = (frame.width, frame.height, frame.channels);
        let resized;
        let pixels = if (w, h) == (s, s) {
            &frame.pixels
        } else {
            // Each channel is resized on its own: a gray frame resized once is each of its RGB planes.
            resized = resize_pil_bicubic(&frame.pixels, (w, h), channels, (s, s))?;
            &resized
        };
        let p = &self.meta().preprocessing;
        let mut out = crate::alloc::vec_of(3 * s * s, 0f32, "a video frame tensor")?;
        for (c, plane) in out.chunks_exact_mut(s * s).enumerate() {
            for (o, px) in plane.iter_mut().zip(pixels.chunks_exact(channels)) {
                let x = (px[c.min(channels - 1)] as f64 / 255.0) as f32;
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
        let start = Instant::now();
        let frame = StoredFrame::new(self.frame_rgb(image)?, image.width(), image.height());
        self.add_time(|t| &mut t.preprocess_ms, start);
        let t = self.frames_added;
        if self.options.volume {
            // Encoded when first needed.
            self.pixels.insert(t, Arc::new(frame));
        } else {
            let features = self.encode(&frame)?;
            self.features.insert(t, Arc::new(features));
        }
        self.size = Some((w, h));
        self.frames_added += 1;
        self.release_old();
        Ok(t)
    }

    /// Runs the image encoder on a frame.
    fn encode(&self, frame: &StoredFrame) -> Result<Features> {
        let s = self.meta().image_size as i64;
        let start = Instant::now();
        let tensor = Array { shape: vec![1, 3, s, s], data: self.tensor(frame)? };
        self.add_time(|t| &mut t.preprocess_ms, start);
        let mut o = self.run(Module::ImageEncoder, vec![tensor.view()?])?;
        if o.len() != 5 {
            return Err(Error::unsupported_model("video image encoder: expected 5 outputs"));
        }
        let mut take = || o.remove(0);
        Ok(Features {
            image_embed: take(),
            vision_feat: take(),
            vision_pos_enc: take(),
            high_res_0: take(),
            high_res_1: take(),
            last_use: Default::default(),
        })
    }

    /// Frame `t`'s encoder outputs: held, or (a volume) encoded now.
    pub(super) fn features(&mut self, t: usize) -> Result<Arc<Features>> {
        self.check_reachable(t)?;
        let feats = match self.features.get(&t) {
            Some(f) => f.clone(),
            None => {
                let frame = self.pixels.get(&t).cloned().ok_or_else(|| Error::internal(format!("frame {t} has no pixels")))?;
                let f = Arc::new(self.encode(&frame)?);
                self.features.insert(t, f.clone());
                f
            }
        };
        self.clock += 1;
        feats.last_use.store(self.clock, std::sync::atomic::Ordering::Relaxed);
        if self.options.volume {
            self.release_old();
        }
        Ok(feats)
    }

    /// Refuses a frame never added, or one a streamed track no longer holds.
    pub fn check_reachable(&self, t: usize) -> Result<()> {
        if t >= self.frames_added {
            return Err(Error::invalid(format!("frame {t} was never added ({} frames so far)", self.frames_added)));
        }
        if !self.features.contains_key(&t) && !self.pixels.contains_key(&t) {
            return Err(Error::invalid(format!(
                "frame {t} is no longer held: a streamed track keeps only its {} most recent frames \
                 (make the track a volume to reach every frame in both directions)",
                self.options.keep_frames.unwrap_or(0)
            )));
        }
        Ok(())
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
    /// frame is a correction (memory-conditioned in the direction the frame was tracked, previous
    /// logits as mask input) and stays a non-conditioning frame unless
    /// `corrections_as_conditioning`. A new `object_id` adds an object, also after tracking started
    /// (each object is tracked on its own, as the predictor does).
    pub fn add_prompt(
        &mut self,
        frame: usize,
        object_id: i32,
        points: &[[f32; 2]],
        labels: &[i32],
        bbox: Option<[f32; 4]>,
    ) -> Result<FrameMasks> {
        self.check_reachable(frame)?;
        let (w, h) = self.size.ok_or_else(|| Error::internal("no frame size"))?;
        if points.len() != labels.len() || points.len() > MAX_VIDEO_POINTS {
            return Err(Error::invalid(format!(
                "{} points and {} labels: give a box or 1 to {MAX_VIDEO_POINTS} points, one label each",
                points.len(),
                labels.len()
            )));
        }
        // The image predictor's checks and messages: finite, inside the frame, labels 0/1, a box with area.
        let as_image_prompt = Prompt {
            points: points.iter().zip(labels).map(|(p, &label)| Point { x: p[0], y: p[1], label }).collect(),
            bbox: bbox.map(|[x1, y1, x2, y2]| BoxPrompt { x1, y1, x2, y2 }),
            ..Prompt::default()
        };
        validate_prompt(&as_image_prompt, w, h)?;
        let (mut points, mut labels) = (points.to_vec(), labels.to_vec());
        if let Some(b) = bbox {
            points.splice(0..0, [[b[0], b[1]], [b[2], b[3]]]);
            labels.splice(0..0, [2, 3]);
        }
        let feats = self.features(frame)?;
        let k = match self.object_index(object_id) {
            Some(k) => k,
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
        let tracked = o.tracked.get(&frame).copied();
        let is_init_cond = tracked.is_none();
        let is_cond = is_init_cond || self.corrections_as_conditioning();
        let temp = if is_cond { &o.temp_cond } else { &o.temp_non_cond };
        let prev = temp.get(&frame).or_else(|| o.cond.get(&frame)).or_else(|| o.non_cond.get(&frame));
        let clamp = self.meta().mask_input_clamp;
        let prev_logits: Option<Vec<f32>> = prev.map(|p| p.pred_masks.iter().map(|v| v.clamp(-clamp, clamp)).collect());
        let direction = tracked.unwrap_or_default();
        let out = match self.track_step(frame, &feats, is_init_cond, Some((&coords, labels)), k, direction, false, prev_logits) {
            Ok(out) => out,
            Err(e) => {
                // An object created by this call and never predicted is forgotten again.
                if self.objects[k].1.is_empty() {
                    self.objects.remove(k);
                }
                return Err(e);
            }
        };
        let o = &mut self.objects[k].1;
        if is_cond {
            o.temp_cond.insert(frame, out);
        } else {
            o.temp_non_cond.insert(frame, out);
        }
        Ok(self.frame_masks(frame, Some(is_cond)))
    }

    fn corrections_as_conditioning(&self) -> bool {
        self.options.corrections_as_conditioning || self.meta().predictor.add_all_frames_to_correct_as_cond
    }

    /// `propagate_in_video` (forward, from the earliest conditioning frame to the last frame added);
    /// returns each frame's masks. See [`Tracker::propagate_with`].
    pub fn propagate(&mut self) -> Result<Vec<FrameMasks>> {
        let mut frames = Vec::new();
        self.propagate_with(Propagation::default(), |_, fm| {
            frames.push(fm.clone());
            Ok(())
        })?;
        Ok(frames)
    }

    /// The frames `request` visits, in order, with their direction (checked before anything runs:
    /// the start inside the track, every frame reachable).
    pub fn propagation_order(&self, request: Propagation) -> Result<Vec<(usize, Direction)>> {
        if self.objects.is_empty() {
            return Err(Error::invalid("no object to track: add points first"));
        }
        let n = self.frames_added;
        let start = match request.start_frame {
            Some(t) if t >= n => {
                return Err(Error::invalid(format!("start frame {t}: the track has {n} frames (0 to {})", n.saturating_sub(1))))
            }
            Some(t) => t,
            // The earliest conditioning frame of any object, its pending prompts included (the
            // predictor consolidates them into conditioning frames first, then takes the minimum).
            None => self
                .objects
                .iter()
                .flat_map(|(_, o)| o.cond.keys().chain(o.temp_cond.keys()))
                .min()
                .copied()
                .ok_or_else(|| Error::invalid("no conditioning frame: prompt an object on a frame it was not tracked on"))?,
        };
        let max = request.max_frames.unwrap_or(n);
        let forward = (start..=start.saturating_add(max).min(n - 1)).map(|t| (t, Direction::Forward));
        // Reverse from frame 0 tracks nothing, as the predictor.
        let reverse = (start.saturating_sub(max)..=start).rev().filter(|_| start > 0).map(|t| (t, Direction::Reverse));
        let order: Vec<(usize, Direction)> = match request.direction {
            PropagationDirection::Forward => forward.collect(),
            PropagationDirection::Reverse => reverse.collect(),
            PropagationDirection::BothWays => forward.chain(reverse).collect(),
        };
        for (t, _) in &order {
            self.check_reachable(*t)?;
        }
        Ok(order)
    }

    /// `propagate_in_video(start_frame_idx, max_frame_num_to_track, reverse)` (both ways: forward,
    /// then in reverse from the same start): consolidates pending prompts, then tracks each frame
    /// of the request for every object (re-tracking frames tracked before, as the predictor does;
    /// conditioning frames keep their output) and hands each frame's masks to `on_frame`, which may
    /// stop the propagation by returning an error. On an error (a failed run, a cancelled control,
    /// `on_frame`'s) the frames handed over stay tracked and the frame in progress is as before.
    /// Progress: [`Stage::Propagation`], the fraction of the request's frames done.
    pub fn propagate_with(&mut self, request: Propagation, mut on_frame: impl FnMut(&Tracker, &FrameMasks) -> Result<()>) -> Result<()> {
        let order = self.propagation_order(request)?;
        control::progress(Stage::Propagation, 0.0)?;
        self.preflight()?;
        for (i, (t, direction)) in order.iter().enumerate() {
            // A copy is cheap (frames and outputs are shared): it puts back a frame that failed halfway.
            let before = self.clone();
            let fm = match self.track_frame_in(*t, *direction) {
                Ok(fm) => fm,
                Err(e) => {
                    *self = before;
                    return Err(e);
                }
            };
            on_frame(self, &fm)?;
            drop(fm);
            // Each frame leaves long-lived outputs above its freed temporaries (the encoder's
            // tensors, the masks): glibc keeps those holes resident unless asked, and over hundreds
            // of slices they outgrow what the track holds.
            crate::engine::arena::trim_malloc();
            control::progress(Stage::Propagation, (i + 1) as f32 / order.len() as f32)?;
        }
        Ok(())
    }

    /// Tracks one frame forward (consolidating pending clicks first): every object without a
    /// conditioning output on it gets a memory-conditioned prediction, stored (with its memory) as a
    /// non-conditioning output. Streaming use: `add_frame` then `track_frame` on its index.
    pub fn track_frame(&mut self, frame: usize) -> Result<FrameMasks> {
        self.check_reachable(frame)?;
        self.preflight()?;
        self.track_frame_in(frame, Direction::Forward)
    }

    /// One frame of `propagate_in_video` in `direction` (pending prompts already consolidated).
    fn track_frame_in(&mut self, frame: usize, direction: Direction) -> Result<FrameMasks> {
        let feats = self.features(frame)?;
        self.tracking_started = true;
        for k in 0..self.objects.len() {
            if !self.objects[k].1.cond.contains_key(&frame) {
                let out = self.track_step(frame, &feats, false, None, k, direction, true, None)?;
                self.objects[k].1.non_cond.insert(frame, out);
            }
            self.objects[k].1.tracked.insert(frame, direction);
        }
        Ok(self.frame_masks(frame, None))
    }

    /// `remove_object(strict=True)`: forgets the object and everything tracked for it; the other
    /// objects are unchanged (each is tracked on its own). An unknown id is an error.
    pub fn remove_object(&mut self, object_id: i32) -> Result<()> {
        let k = self.object_index(object_id).ok_or_else(|| self.unknown_object(object_id))?;
        self.objects.remove(k);
        if self.objects.is_empty() {
            // reset_state: the frames stay, tracking results go.
            self.tracking_started = false;
        }
        self.release_old();
        Ok(())
    }

    /// `clear_all_prompts_in_frame`: forgets the object's prompts on `frame`; a conditioning output
    /// there becomes a non-conditioning one (and the frame counts as not tracked for the object).
    /// Returns every object on that frame.
    pub fn clear_prompts(&mut self, frame: usize, object_id: i32) -> Result<FrameMasks> {
        if frame >= self.frames_added {
            return Err(Error::invalid(format!("frame {frame} was never added ({} frames so far)", self.frames_added)));
        }
        let k = self.object_index(object_id).ok_or_else(|| self.unknown_object(object_id))?;
        let o = &mut self.objects[k].1;
        o.temp_cond.remove(&frame);
        o.temp_non_cond.remove(&frame);
        if let Some(out) = o.cond.remove(&frame) {
            o.non_cond.insert(frame, out);
            o.tracked.remove(&frame);
        }
        let is_cond = self.objects.iter().any(|(_, o)| o.temp_cond.contains_key(&frame));
        Ok(self.frame_masks(frame, Some(is_cond)))
    }

    fn unknown_object(&self, object_id: i32) -> Error {
        Error::invalid(format!("object {object_id} is not in the track (objects {:?})", self.object_ids()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A gray frame kept as one channel gives the encoder exactly the tensor of its RGB form.
    #[test]
    fn a_gray_frame_kept_as_one_channel_gives_the_rgb_frames_tensor() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/sam2/video");
        let model = Arc::new(VideoModel::from_dir(&dir, crate::Options::default()).unwrap());
        let tracker = Tracker::new(model, TrackerOptions::default()).unwrap();
        let (w, h) = (97, 61);
        let rgb: Vec<u8> = (0..w * h).flat_map(|i| [((i * 37) % 251) as u8; 3]).collect();
        let gray = StoredFrame::new(rgb.clone(), w, h);
        assert_eq!((gray.channels, gray.pixels.len()), (1, w * h));
        let as_rgb = StoredFrame { pixels: rgb, channels: 3, width: w, height: h };
        assert!(tracker.tensor(&gray).unwrap() == tracker.tensor(&as_rgb).unwrap());
        let mut colour = as_rgb.pixels.clone();
        colour[4] = 1;
        assert_eq!(StoredFrame::new(colour, w, h).channels, 3, "one coloured pixel keeps RGB");
    }
}
