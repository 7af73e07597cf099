//! The tracker: frames in, prompts, masks out at the frame's size. Its frames are kept by `frames`,
//! its memory bank by `memory`; the decoder step is `step`, propagation `propagation`.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

use ort::session::SessionInputValue;

use crate::error::{Error, Result};
use crate::image::intensity::{mapped_rgb8, mapping_for};
use crate::image::ImageView;
use crate::sam2::image::prompt::{validate_prompt, BoxPrompt, Point, Prompt};

use super::frames::{self, Features, Frames, StoredFrame};
use super::memory::{forget_before, pinned_frames, FrameOut, ObjectState};
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
    /// The decoder's predicted IoU of the mask (`None` when the object has no output on this frame;
    /// 1 on a frame prompted with a mask, as the predictor).
    pub predicted_iou: Option<f32>,
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
    /// The frames added, their encoder outputs and (a volume) pixels.
    pub(super) frames: Frames,
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
            frames: Frames::default(),
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
        self.frames.added
    }

    /// (width, height) of the frames, once one was added.
    pub fn frame_size(&self) -> Option<(usize, usize)> {
        self.frames.size
    }

    /// Object ids in the order they were first prompted.
    pub fn object_ids(&self) -> Vec<i32> {
        self.objects.iter().map(|(id, _)| *id).collect()
    }

    /// Per-frame outputs (conditioning and tracked, all objects) held in the memory bank.
    pub fn held_outputs(&self) -> usize {
        self.objects.iter().map(|(_, o)| o.held_outputs()).sum()
    }

    /// Frames whose encoder outputs are held.
    pub fn held_frames(&self) -> Vec<usize> {
        self.frames.features.keys().copied().collect()
    }

    /// `_load_img_as_tensor` (after the intensity stage, when it applies): see `frames::tensor`.
    pub fn preprocess(&self, image: &ImageView<'_>) -> Result<Vec<f32>> {
        frames::tensor(&StoredFrame::new(self.frame_rgb(image)?, image.width(), image.height()), self.meta())
    }

    /// The frame through the intensity stage when it applies, rounded to 8 bits (the tracker's resize
    /// is PIL's 8-bit bicubic), RGB.
    fn frame_rgb(&self, image: &ImageView<'_>) -> Result<Vec<u8>> {
        match mapping_for(self.model.core().intensity().as_ref(), image)? {
            Some(mapping) => mapped_rgb8(image, &mapping),
            None => image.try_to_rgb8(),
        }
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
    pub fn check_frame_size(&self, size: (usize, usize)) -> Result<()> {
        self.frames.check_size(size)
    }

    fn add_frame_sized(&mut self, image: &ImageView<'_>, (w, h): (usize, usize)) -> Result<usize> {
        self.check_frame_size((w, h))?;
        let start = Instant::now();
        let frame = StoredFrame::new(self.frame_rgb(image)?, image.width(), image.height());
        self.add_time(|t| &mut t.preprocess_ms, start);
        let t = self.frames.added;
        if self.options.volume {
            // Encoded when first needed.
            self.frames.pixels.insert(t, Arc::new(frame));
        } else {
            let features = self.encode(&frame)?;
            self.frames.features.insert(t, Arc::new(features));
        }
        self.frames.size = Some((w, h));
        self.frames.added += 1;
        self.release_old();
        Ok(t)
    }

    /// Runs the image encoder on a frame.
    fn encode(&self, frame: &StoredFrame) -> Result<Features> {
        let s = self.meta().image_size as i64;
        let start = Instant::now();
        let tensor = Array { shape: vec![1, 3, s, s], data: frames::tensor(frame, self.meta())? };
        self.add_time(|t| &mut t.preprocess_ms, start);
        Features::from_outputs(self.run(Module::ImageEncoder, vec![tensor.view()?])?)
    }

    /// Frame `t`'s encoder outputs: held, or (a volume) encoded now.
    pub(super) fn features(&mut self, t: usize) -> Result<Arc<Features>> {
        self.check_reachable(t)?;
        let mut frames = std::mem::take(&mut self.frames);
        let feats = frames.features(t, |frame| self.encode(frame));
        self.frames = frames;
        let feats = feats?;
        if self.options.volume {
            self.release_old();
        }
        Ok(feats)
    }

    /// Refuses a frame never added, or one a streamed track no longer holds.
    pub fn check_reachable(&self, t: usize) -> Result<()> {
        self.frames.check_reachable(t, self.options.keep_frames)
    }

    /// Applies `keep_frames` (see the module documentation). A streamed track drops the encoder
    /// outputs of all but the most recent frames, and the tracked outputs no reachable frame can
    /// select; a volume keeps every output and evicts the least recently used encoder outputs
    /// (their frames are encoded again when needed).
    pub(super) fn release_old(&mut self) {
        let Some(k) = self.options.keep_frames else { return };
        let pinned = pinned_frames(&self.objects, self.options.volume);
        if let Some(oldest) = self.frames.release(k, self.options.volume, &pinned) {
            let window = (self.meta().num_maskmem - 1).max(self.max_ptrs() - 1);
            forget_before(&mut self.objects, oldest.saturating_sub(window));
        }
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
        let (w, h) = self.frames.size.ok_or_else(|| Error::internal("no frame size"))?;
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
        let k = self.object_slot(object_id);
        // normalize_coords: x / W * S, y / H * S in float32.
        let s = self.meta().image_size as f32;
        let coords: Vec<f32> = points.iter().flat_map(|p| [p[0] / w as f32 * s, p[1] / h as f32 * s]).collect();
        let labels = labels.as_slice();
        let (is_cond, is_init_cond, direction) = self.prompt_kind(frame, k);
        let o = &self.objects[k].1;
        let temp = if is_cond { &o.temp_cond } else { &o.temp_non_cond };
        let prev = temp.get(&frame).or_else(|| o.cond.get(&frame)).or_else(|| o.non_cond.get(&frame));
        let clamp = self.meta().mask_input_clamp;
        let prev_logits: Option<Vec<f32>> = prev.map(|p| p.pred_masks.iter().map(|v| v.clamp(-clamp, clamp)).collect());
        let out = self.track_step(frame, &feats, is_init_cond, Some((&coords, labels)), k, direction, false, prev_logits);
        self.store_prompted(frame, k, is_cond, out)
    }

    /// The object (index) for `object_id`, added when new.
    pub(super) fn object_slot(&mut self, object_id: i32) -> usize {
        match self.object_index(object_id) {
            Some(k) => k,
            None => {
                self.objects.push((object_id, ObjectState::default()));
                self.objects.len() - 1
            }
        }
    }

    /// Whether a prompt on `frame` makes object `k`'s output there a conditioning one, and whether
    /// it is an initial conditioning frame (not tracked yet: no memory), with the direction it was
    /// tracked in.
    pub(super) fn prompt_kind(&self, frame: usize, k: usize) -> (bool, bool, super::memory::Direction) {
        let tracked = self.objects[k].1.tracked.get(&frame).copied();
        let is_init_cond = tracked.is_none();
        (is_init_cond || self.corrections_as_conditioning(), is_init_cond, tracked.unwrap_or_default())
    }

    /// Keeps a prompt's output as pending (`temp_output_dict`) and returns every object on its frame;
    /// on an error an object created by this prompt and never predicted is forgotten again.
    pub(super) fn store_prompted(&mut self, frame: usize, k: usize, is_cond: bool, out: Result<FrameOut>) -> Result<FrameMasks> {
        let out = match out {
            Ok(out) => out,
            Err(e) => {
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

    pub(super) fn corrections_as_conditioning(&self) -> bool {
        self.options.corrections_as_conditioning || self.meta().predictor.add_all_frames_to_correct_as_cond
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
        if frame >= self.frames.added {
            return Err(Error::invalid(format!("frame {frame} was never added ({} frames so far)", self.frames.added)));
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
    pub(super) fn frame_masks(&self, t: usize, temp: Option<bool>) -> FrameMasks {
        let start = Instant::now();
        let (w, h) = self.frames.size.unwrap_or((0, 0));
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
                let predicted_iou = out.map(|o| o.iou);
                ObjectMask { object_id: *id, low_res, mask, score, present: score.is_some_and(|s| s > 0.0), predicted_iou }
            })
            .collect();
        self.add_time(|t| &mut t.postprocess_ms, start);
        FrameMasks { frame: t, width: w, height: h, objects }
    }
}
