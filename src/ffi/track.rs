//! SAM2 video tracking exports: a video model session (`seg_create_sam2_video`), tracks made from it
//! (`seg_track_create`), frames fed in order, prompts on any frame still held, masks per object.
//!
//! A track's calls run one at a time (a lock per track): several threads may call one track, and
//! each call sees the track as the previous call left it, so the caller decides the order (feed
//! frames from one thread, or order the calls yourself). Many tracks may share one video session
//! and run at the same time.

use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, ErrorKind, Result};
use crate::image::MaskMut;
use crate::sam2::video::{FrameMasks, ModuleTimes, Propagation, PropagationDirection, Tracker, VideoModel, MAX_VIDEO_POINTS};

use super::boundary::{caller_slice, guard, guard_quiet, utf8_path};
use super::control::{call_control, SegCallControl};
use super::enums::SegStatus;
use super::handles::{lookup, lookup_track, register, track_id, unregister, Handle};
use super::images::{SegImage, SegMask};
use super::options::SegOptions;
use super::sam2_types::{SegBox, SegPoint};
use super::session::SegSession;
use super::track_types::{SegPropagation, SegTrack, SegTrackFrameCallback, SegTrackInfo, SegTrackObject, SegTrackOptions, SegTrackState};
use super::versioned::{fill_defaults, out_size, read_versioned, record_array, write_records, write_versioned};

/// Creates a SAM2 video session from a folder holding `video_metadata.json` and the four ONNX
/// modules it names (written by `models/sam2/export_sam2_video.py`; UTF-8 path). `options` as for
/// `seg_create` (NULL = defaults). Make tracks from it with `seg_track_create`; release it with
/// `seg_free` (tracks still open keep the model alive until they are freed).
///
/// # Safety
/// `models_dir` must be NULL or NUL-terminated; `options` NULL or a valid `SegOptions`;
/// `out_session` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_create_sam2_video(
    models_dir: *const c_char,
    options: *const SegOptions,
    out_session: *mut *mut SegSession,
) -> SegStatus {
    guard(|| {
        // SAFETY: NULL or NUL-terminated (the contract).
        let dir = unsafe { utf8_path(models_dir, "models_dir")? };
        if out_session.is_null() {
            return Err(Error::null("out_session"));
        }
        // SAFETY: NULL or a valid `SegOptions` (the contract).
        let options = unsafe { SegOptions::read(options)? };
        let model = VideoModel::from_dir(&dir, options)?;
        // SAFETY: not NULL, so writable (the contract).
        unsafe { out_session.write(register(Handle::Video(Arc::new(model)))) };
        Ok(())
    })
}

/// Fills `*options` with the defaults, as `seg_options_default` does:
/// `SegTrackOptions o = { .struct_size = sizeof o }; seg_track_options_default(&o);`.
///
/// # Safety
/// `options` must be NULL or point to `options->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_track_options_default(options: *mut SegTrackOptions) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    guard(|| unsafe { fill_defaults(options, SegTrackOptions::defaults(), "options") })
}

/// Starts a new, empty track on a video session (`options` NULL = defaults). Release it with
/// `seg_track_free`. Thread safety: any thread.
///
/// # Safety
/// `options` must be NULL or a valid `SegTrackOptions`; `out_track` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_track_create(
    session: *mut SegSession,
    options: *const SegTrackOptions,
    out_track: *mut *mut SegTrack,
) -> SegStatus {
    guard(|| {
        let handle = lookup(session)?;
        let model = handle.video()?.clone();
        if out_track.is_null() {
            return Err(Error::null("out_track"));
        }
        // SAFETY: NULL or a valid `SegTrackOptions` (the contract).
        let tracker = Tracker::new(model, unsafe { SegTrackOptions::read(options)? })?;
        // SAFETY: not NULL, so writable (the contract).
        unsafe { out_track.write(register(Handle::Track(Box::new(Mutex::new(tracker)))).cast()) };
        Ok(())
    })
}

/// Releases a track. `seg_track_free(NULL)` is a no-op; a freed or made-up handle gives
/// `SEG_INVALID_HANDLE`, a session handle `SEG_WRONG_SESSION_KIND` (it is not freed). A call running
/// on the track in another thread finishes normally; the memory is released when it returns.
///
/// # Safety
/// Any value may be passed.
#[no_mangle]
pub unsafe extern "C" fn seg_track_free(track: *mut SegTrack) -> SegStatus {
    if track.is_null() {
        return SegStatus::SEG_OK;
    }
    guard_quiet(|| {
        unregister(track_id(track), |h| matches!(h, Handle::Track(_)), "track", "a track (release sessions with seg_free)").map(drop)
    })
}

/// Forgets every frame, object and memory of the track: it is as new (same session and options).
/// A call running on the track finishes first.
///
/// # Safety
/// Any value may be passed as `track`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_reset(track: *mut SegTrack) -> SegStatus {
    guard(|| {
        let handle = lookup_track(track)?;
        let lock = handle.track()?;
        refuse_reentry(lock)?;
        // A track left inconsistent by a caught panic is usable again after a reset.
        lock.lock().unwrap_or_else(|p| p.into_inner()).reset();
        lock.clear_poison();
        Ok(())
    })
}

/// Adds the next frame and encodes it (no tracking): the frame gets the next index (0, 1, ...),
/// written to `*out_frame` (optional). Every frame must have the first frame's size. Use it to
/// prompt on a frame before tracking, or to feed a volume first and track later with
/// `seg_track_frame`. `out_info` optional (set its `struct_size`).
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// `frame` must describe readable pixels; `out_frame` NULL or writable; `out_info` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn seg_track_add_frame(
    track: *mut SegTrack,
    frame: *const SegImage,
    out_frame: *mut i64,
    out_info: *mut SegTrackInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    guard(|| {
        with_track(track, control, |tracker| {
            // SAFETY: NULL or a valid `SegTrackInfo` (the contract).
            let info_size = unsafe { out_size(out_info)? };
            if frame.is_null() {
                return Err(Error::null("frame"));
            }
            // SAFETY: not NULL, and describes readable pixels (the contract).
            let view = unsafe { (*frame).view(tracker.model().options().max_pixels)? };
            let before = tracker.timings();
            let t = as_before_if_cancelled(tracker, |tracker| tracker.add_frame(&view))?;
            if !out_frame.is_null() {
                // SAFETY: not NULL, so writable (the contract).
                unsafe { out_frame.write(t as i64) };
            }
            // SAFETY: `info_size` bytes of `out_info`, checked by `out_size`.
            unsafe { write_info(out_info, info_size, t, tracker.object_ids().len(), &tracker.timings().since(&before)) };
            Ok(())
        })
    })
}

/// Prompts one object on a frame already added (`frame`: its index; -1 = the last frame added, -2
/// the one before, ...): clicks (`points`, label 1 = object, 0 = not the object) and/or a box, in
/// the frame's pixels, checked as `seg_run_sam2_points` checks them (finite, inside the frame, labels
/// 0 or 1, a box with x2 > x1 and y2 > y1). The prompt replaces earlier clicks of this object on this frame. A new
/// `object_id` starts a new object, on any frame, also after tracking started (each object is
/// tracked on its own; it has no output on frames before it was tracked there). A prompt on a frame
/// not yet tracked for this object makes it a conditioning frame; on a tracked frame it corrects
/// the mask there and the correction is used as memory when tracking goes on (see
/// `SegTrackOptions::corrections_as_conditioning` for propagations that pass over that frame).
///
/// Writes every object of that frame (the prompted one with its new mask): see "Frame outputs" in
/// `seg_track_frame`.
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// `points` must be NULL or `n_points` readable records; `bbox` NULL or valid; outputs as in
/// `seg_track_frame`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_add_prompt(
    track: *mut SegTrack,
    frame: i64,
    object_id: i32,
    points: *const SegPoint,
    n_points: usize,
    bbox: *const SegBox,
    out_objects: *mut SegTrackObject,
    object_size: usize,
    out_masks: *const SegMask,
    capacity: usize,
    out_count: *mut usize,
    out_info: *mut SegTrackInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    guard(|| {
        with_track(track, control, |tracker| {
            let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
            if points.is_null() && n_points > 0 {
                return Err(Error::null("points (n_points is not 0)"));
            }
            if n_points > MAX_VIDEO_POINTS {
                return Err(Error::invalid(format!("{n_points} points: at most {MAX_VIDEO_POINTS} per prompt")));
            }
            // SAFETY: `n_points` > 0 only with `points` not NULL (checked above): `n_points` readable records.
            let points = unsafe { caller_slice(points, n_points, "points")? };
            let coords: Vec<[f32; 2]> = points.iter().map(|p| [p.x, p.y]).collect();
            let labels: Vec<i32> = points.iter().map(|p| p.label).collect();
            // SAFETY: NULL or a readable `SegBox` (the contract).
            let bbox = unsafe { bbox.as_ref() }.map(|b| [b.x1, b.y1, b.x2, b.y2]);
            let t = frame_index(tracker, frame)?;
            let new_object = !tracker.object_ids().contains(&object_id);
            let n = tracker.object_ids().len() + new_object as usize;
            let size = tracker.frame_size();
            // SAFETY: the outputs are NULL or valid for `capacity` elements (the contract).
            unsafe { out.run(tracker, n, size, |tracker| tracker.add_prompt(t, object_id, &coords, &labels, bbox)) }
        })
    })
}

/// Tracks frame `frame` (an index; -1 = the last frame added) for every object: clicks given
/// since the last tracking are consolidated first, then each object without a prompt on that frame
/// gets SAM2's memory-conditioned mask, remembered for the frames after. Frames are normally tracked
/// in order, each once; tracking a frame again recomputes it from the memory as it is now.
///
/// Frame outputs (also of `seg_track_add_prompt` and `seg_track_next`), one per object in the order
/// objects were first prompted, all optional:
/// - `out_objects`: `capacity` records (`SegTrackObject`) of `object_size` bytes each
///   (`sizeof(SegTrackObject)` as the caller was compiled with);
/// - `out_masks`: `capacity` caller-owned masks of the frame's size, 0/255 each;
/// - `out_count`: the number of objects.
///
/// When either array is given and `capacity` is below the number of objects the call returns
/// `SEG_BUFFER_TOO_SMALL` with `*out_count` set, before anything runs (the track is unchanged);
/// `seg_track_state` tells the count beforehand. Masks of the wrong size are refused the same way.
/// Outputs are written only on success.
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// Outputs must be NULL or valid for `capacity` elements; each mask must describe writable memory.
#[no_mangle]
pub unsafe extern "C" fn seg_track_frame(
    track: *mut SegTrack,
    frame: i64,
    out_objects: *mut SegTrackObject,
    object_size: usize,
    out_masks: *const SegMask,
    capacity: usize,
    out_count: *mut usize,
    out_info: *mut SegTrackInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    guard(|| {
        with_track(track, control, |tracker| {
            let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
            let t = frame_index(tracker, frame)?;
            let (n, size) = (tracker.object_ids().len(), tracker.frame_size());
            // SAFETY: the outputs are NULL or valid for `capacity` elements (the contract).
            unsafe { out.run(tracker, n, size, |tracker| tracker.track_frame(t)) }
        })
    })
}

/// Streaming: adds the next frame and tracks it (`seg_track_add_frame` + `seg_track_frame` in one
/// call, under one lock). Needs at least one object prompted. Outputs as for `seg_track_frame`;
/// `out_info->frame` is the new frame's index. When the buffers are too small nothing is added.
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// As for `seg_track_add_frame` and `seg_track_frame`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_next(
    track: *mut SegTrack,
    frame: *const SegImage,
    out_objects: *mut SegTrackObject,
    object_size: usize,
    out_masks: *const SegMask,
    capacity: usize,
    out_count: *mut usize,
    out_info: *mut SegTrackInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    guard(|| {
        with_track(track, control, |tracker| {
            let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
            if frame.is_null() {
                return Err(Error::null("frame"));
            }
            if tracker.object_ids().is_empty() {
                return Err(Error::invalid("no object to track: add a frame and prompt an object on it first (seg_track_add_prompt)"));
            }
            // SAFETY: not NULL, and describes readable pixels (the contract).
            let view = unsafe { (*frame).view(tracker.model().options().max_pixels)? };
            tracker.check_frame_size((view.width(), view.height()))?;
            let n = tracker.object_ids().len();
            // SAFETY: the outputs are NULL or valid for `capacity` elements (the contract).
            unsafe {
                out.run(tracker, n, Some((view.width(), view.height())), |tracker| {
                    let t = tracker.add_frame(&view)?;
                    tracker.track_frame(t)
                })
            }
        })
    })
}

/// Fills `*request` with the defaults (forward from the earliest prompted frame to the end):
/// `SegPropagation p = { .struct_size = sizeof p }; seg_propagation_default(&p);`.
///
/// # Safety
/// `request` must be NULL or point to `request->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_propagation_default(request: *mut SegPropagation) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    guard(|| unsafe { fill_defaults(request, SegPropagation::defaults(), "request") })
}

/// Propagates every object through the track's frames, as SAM2's `propagate_in_video`: from a start
/// frame (by default the earliest conditioning frame of any object, see `SegPropagation`) forward, in
/// reverse, or both ways (`request`, NULL = forward from the prompts to the end), each frame tracked for every object
/// (conditioning frames keep their output; frames tracked before are tracked again). Prompts given
/// since the last tracking are consolidated first. This is the volume workflow: click a structure on
/// a middle slice, propagate both ways, correct a slice, propagate again from there.
///
/// After each frame its outputs are written to the buffers (as `seg_track_frame` writes them) and
/// `on_frame` (optional) is called with the frame's index and object count; it may copy the masks
/// out (a call on this same track from it is refused with `SEG_INVALID_ARGUMENT`: the track is busy
/// with this call), and returns non-zero to go on, 0 to stop. Frames are visited in order (both ways: the start frame to the
/// last, then the start frame again down to 0); `out_info` sums the call's times, its `frame` is the
/// last frame done. Every frame of the request must be reachable before anything runs (a streamed
/// track reaches only the frames it still holds; make the track a volume to go back over all).
///
/// Stopping (`on_frame` returning 0, or `control` cancelled: `SEG_CANCELLED`) or an error
/// keeps the frames already handed to `on_frame` tracked; the frame in progress is as before.
/// Progress: `SEG_STAGE_PROPAGATION` with the fraction of frames done (and `SEG_STAGE_FRAMES` per
/// model run).
///
/// # Safety
/// `request` NULL or valid for its `struct_size`; outputs as in `seg_track_frame`; `on_frame` NULL or
/// a function callable with `user_data` from this thread while the call runs.
#[no_mangle]
pub unsafe extern "C" fn seg_track_propagate(
    track: *mut SegTrack,
    request: *const SegPropagation,
    out_objects: *mut SegTrackObject,
    object_size: usize,
    out_masks: *const SegMask,
    capacity: usize,
    out_count: *mut usize,
    on_frame: SegTrackFrameCallback,
    user_data: *mut c_void,
    out_info: *mut SegTrackInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    guard(|| {
        with_track(track, control, |tracker| {
            // SAFETY: NULL or valid for its `struct_size` (the contract).
            let raw = unsafe { read_versioned(request, SegPropagation::defaults())? };
            if raw.reserved != 0 {
                return Err(Error::invalid("SegPropagation.reserved must be 0"));
            }
            let start_frame = match raw.use_start_frame {
                0 => None,
                1 => Some(frame_index(tracker, raw.start_frame).map_err(|e| e.context("SegPropagation.start_frame"))?),
                v => return Err(Error::invalid(format!("SegPropagation.use_start_frame is {v}: 0 or 1"))),
            };
            let max_frames = match raw.max_frames {
                -1 => None,
                m if m >= 0 => Some(m as usize),
                m => return Err(Error::invalid(format!("SegPropagation.max_frames is {m}: -1 (to the end) or a count"))),
            };
            let request = Propagation { start_frame, direction: PropagationDirection::try_from(raw.direction)?, max_frames };
            let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
            let n = tracker.object_ids().len();
            // SAFETY: the outputs are NULL or valid for `capacity` elements (the contract).
            let (mut masks, info_size) = unsafe { out.check(n, tracker.frame_size())? };
            let before = tracker.timings();
            tracker.propagate_with(request, |tracker, fm| {
                // SAFETY: the buffers were checked for the track's objects (their number does not
                // change while the call holds the track).
                unsafe { out.write(fm, &mut masks, info_size, &tracker.timings().since(&before))? };
                match on_frame {
                    // SAFETY: the host's callback, called as `SegTrackFrameCallback` documents.
                    Some(f) if unsafe { f(fm.frame as i64, fm.objects.len(), user_data) } == 0 => {
                        Err(Error::new(ErrorKind::Cancelled, format!("stopped by the frame callback after frame {}", fm.frame)))
                    }
                    _ => Ok(()),
                }
            })
        })
    })
}

/// Removes an object from the track (SAM2's `remove_object`): its prompts, outputs and memory; the
/// other objects are unchanged. An id not in the track (e.g. removed already) is
/// `SEG_INVALID_ARGUMENT`, the track unchanged. Removing the last object leaves the frames.
///
/// # Safety
/// Any value may be passed as `track`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_remove_object(track: *mut SegTrack, object_id: i32) -> SegStatus {
    guard(|| {
        let handle = lookup_track(track)?;
        let mut tracker = lock(handle.track()?)?;
        tracker.remove_object(object_id)
    })
}

/// Clears one object's prompts on one frame (SAM2's `clear_all_prompts_in_frame`): if the frame was
/// a conditioning frame of the object, its output there stays as a tracked (non-conditioning) output
/// and later prompts there start afresh. Writes every object of that frame as `seg_track_frame`
/// does. An object not in the track is `SEG_INVALID_ARGUMENT`.
///
/// # Safety
/// Outputs as in `seg_track_frame`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_clear_prompts(
    track: *mut SegTrack,
    frame: i64,
    object_id: i32,
    out_objects: *mut SegTrackObject,
    object_size: usize,
    out_masks: *const SegMask,
    capacity: usize,
    out_count: *mut usize,
    out_info: *mut SegTrackInfo,
) -> SegStatus {
    guard(|| {
        let handle = lookup_track(track)?;
        let mut tracker = lock(handle.track()?)?;
        let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
        let t = frame_index(&tracker, frame)?;
        let (n, size) = (tracker.object_ids().len(), tracker.frame_size());
        // SAFETY: the outputs are NULL or valid for `capacity` elements (the contract).
        unsafe { out.run(&mut tracker, n, size, |tracker| tracker.clear_prompts(t, object_id)) }
    })
}

/// Describes a track: objects, frames, frame size, what its memory holds (`held_frames`,
/// `held_outputs` stay bounded with `keep_frames`). Set `out_state->struct_size` first.
///
/// # Safety
/// `out_state` must be NULL or valid for its `struct_size`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_state(track: *mut SegTrack, out_state: *mut SegTrackState) -> SegStatus {
    guard(|| {
        let handle = lookup_track(track)?;
        let tracker = lock(handle.track()?)?;
        if out_state.is_null() {
            return Err(Error::null("out_state"));
        }
        // SAFETY: not NULL, so valid for its `struct_size` (the contract).
        let size = unsafe { out_size(out_state)? };
        let (w, h) = tracker.frame_size().unwrap_or((0, 0));
        let options = tracker.options();
        let state = SegTrackState {
            struct_size: 0, // the caller's is kept
            objects: tracker.object_ids().len() as u32,
            frames: tracker.num_frames() as i64,
            width: w as i32,
            height: h as i32,
            held_frames: tracker.held_frames().len() as u32,
            held_outputs: tracker.held_outputs() as u32,
            num_frames: options.num_frames.unwrap_or(0) as u32,
            keep_frames: options.keep_frames.unwrap_or(0) as u32,
            tracking_started: tracker.tracking_started() as u32,
            reserved: 0,
            reserved2: [0; 4],
            volume: options.volume as u32,
            corrections_as_conditioning: options.corrections_as_conditioning as u32,
        };
        // SAFETY: `size` bytes of `out_state`, checked by `out_size`.
        unsafe { write_versioned(&state, out_state, size) };
        Ok(())
    })
}

thread_local! {
    /// The tracks this thread holds locked: a call on one of them from inside its own callback
    /// (`seg_track_propagate`'s frame callback, a progress or log callback) would wait for itself.
    static HELD: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A track locked by this thread; unlocked (and forgotten) on drop.
struct Locked<'a> {
    guard: MutexGuard<'a, Tracker>,
    key: usize,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Tracker;
    fn deref(&self) -> &Tracker {
        &self.guard
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Tracker {
        &mut self.guard
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        HELD.with(|h| h.borrow_mut().retain(|k| *k != self.key));
    }
}

/// Refuses a call on a track this thread is already inside (it would never return).
fn refuse_reentry(m: &Mutex<Tracker>) -> Result<usize> {
    let key = m as *const Mutex<Tracker> as usize;
    if HELD.with(|h| h.borrow().contains(&key)) {
        return Err(Error::invalid(
            "this track is running a call on this thread (called from its own frame, progress or log callback): \
             call it after seg_track_propagate returns",
        ));
    }
    Ok(key)
}

/// A track call that may run models: `control` covers all of `call`, which gets the track locked by
/// this thread.
fn with_track<T>(track: *mut SegTrack, control: *mut SegCallControl, call: impl FnOnce(&mut Tracker) -> Result<T>) -> Result<T> {
    let control = call_control(control)?;
    crate::control::scope(control, || {
        let handle = lookup_track(track)?;
        let mut tracker = lock(handle.track()?)?;
        call(&mut tracker)
    })
}

fn lock(m: &Mutex<Tracker>) -> Result<Locked<'_>> {
    let key = refuse_reentry(m)?;
    let guard = m.lock().map_err(|_| {
        Error::new(
            ErrorKind::Internal,
            "an earlier call on this track failed inside segrt and may have left it inconsistent: call seg_track_reset",
        )
    })?;
    HELD.with(|h| h.borrow_mut().push(key));
    Ok(Locked { guard, key })
}

/// Runs `call` on the tracker; when the call is cancelled the track is put back as it was before
/// (a copy is kept only for calls under a control: the copy is cheap, its frames and outputs shared).
fn as_before_if_cancelled<T>(tracker: &mut Tracker, call: impl FnOnce(&mut Tracker) -> Result<T>) -> Result<T> {
    let before = crate::control::is_active().then(|| tracker.clone());
    let result = call(tracker);
    if let (Err(e), Some(before)) = (&result, before) {
        if e.kind == ErrorKind::Cancelled {
            *tracker = before;
        }
    }
    result
}

/// A frame argument: an index, or from the end when negative (-1 = the last frame added).
fn frame_index(tracker: &Tracker, frame: i64) -> Result<usize> {
    let n = tracker.num_frames() as i64;
    let t = if frame < 0 { n + frame } else { frame };
    if t < 0 || t >= n {
        return Err(Error::invalid(format!("frame {frame}: the track has {n} frames (indices 0 to {}, or -1 for the last)", n - 1)));
    }
    Ok(t as usize)
}

/// # Safety
/// `info` must be NULL or valid for `size` bytes.
unsafe fn write_info(info: *mut SegTrackInfo, size: usize, frame: usize, objects: usize, t: &ModuleTimes) {
    let record = SegTrackInfo {
        struct_size: 0, // the caller's is kept
        objects: objects as u32,
        frame: frame as i64,
        preprocess_ms: t.preprocess_ms,
        image_encoder_ms: t.image_encoder_ms,
        memory_attention_ms: t.memory_attention_ms,
        mask_decoder_ms: t.mask_decoder_ms,
        memory_encoder_ms: t.memory_encoder_ms,
        postprocess_ms: t.postprocess_ms,
    };
    // SAFETY: forwarded from the caller.
    unsafe { write_versioned(&record, info, size) };
}

/// The caller's buffers for every object of one frame.
struct FrameOutputs {
    objects: *mut SegTrackObject,
    object_size: usize,
    masks: *const SegMask,
    capacity: usize,
    count: *mut usize,
    info: *mut SegTrackInfo,
}

impl FrameOutputs {
    /// Checks every buffer for `n` objects on frames of `size` before anything runs; returns the
    /// masks to fill and the info size.
    ///
    /// # Safety
    /// The pointers must be valid as `seg_track_frame` states.
    unsafe fn check<'a>(&self, n: usize, size: Option<(usize, usize)>) -> Result<(Vec<MaskMut<'a>>, usize)> {
        // SAFETY: NULL or a valid `SegTrackInfo` (the contract).
        let info_size = unsafe { out_size(self.info)? };
        if !self.objects.is_null() {
            record_array::<SegTrackObject>(self.object_size, self.capacity, "SegTrackObject")?;
        }
        let wants_records = !self.objects.is_null() || !self.masks.is_null();
        if wants_records && self.capacity < n {
            if !self.count.is_null() {
                // SAFETY: not NULL, so writable (the contract).
                unsafe { self.count.write(n) };
            }
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                format!("the output arrays hold {} objects, the track has {n} (the count is in *out_count)", self.capacity),
            ));
        }
        let mut masks = Vec::new();
        if !self.masks.is_null() {
            // SAFETY: `capacity` >= n masks are readable (checked above and the contract).
            for (i, m) in unsafe { caller_slice(self.masks, n, "out_masks")? }.iter().enumerate() {
                // SAFETY: each mask describes writable rows (the contract).
                let mask = unsafe { m.target() }.map_err(|e| e.context(format!("out_masks[{i}]")))?;
                if let Some((w, h)) = size {
                    if (mask.width(), mask.height()) != (w, h) {
                        return Err(Error::invalid(format!(
                            "out_masks[{i}] is {}x{} but the frames are {w}x{h}: every mask must have the frame's size",
                            mask.width(),
                            mask.height()
                        )));
                    }
                }
                masks.push(mask);
            }
        }
        Ok((masks, info_size))
    }

    /// Checks the buffers for `n` objects on frames of `size`, runs `call` (one frame's outputs) and
    /// writes them with the time `call` took.
    ///
    /// # Safety
    /// As for `check`.
    unsafe fn run(
        &self,
        tracker: &mut Tracker,
        n: usize,
        size: Option<(usize, usize)>,
        call: impl FnOnce(&mut Tracker) -> Result<FrameMasks>,
    ) -> Result<()> {
        // SAFETY: forwarded from the caller.
        let (masks, info_size) = unsafe { self.check(n, size)? };
        let before = tracker.timings();
        let fm = as_before_if_cancelled(tracker, call)?;
        let mut masks = masks;
        // SAFETY: forwarded from the caller; the buffers were checked for the frame's objects.
        unsafe { self.write(&fm, &mut masks, info_size, &tracker.timings().since(&before)) }
    }

    /// Writes the frame's records, masks, count and info.
    ///
    /// # Safety
    /// As for `check`.
    unsafe fn write(&self, fm: &FrameMasks, masks: &mut [MaskMut<'_>], info_size: usize, times: &ModuleTimes) -> Result<()> {
        let n = fm.objects.len();
        if (!self.objects.is_null() && self.capacity < n) || (!self.masks.is_null() && masks.len() != n) {
            return Err(Error::internal(format!("{n} objects on the frame, buffers checked for {}", masks.len())));
        }
        for (o, mask) in fm.objects.iter().zip(masks.iter_mut()) {
            for (y, row) in o.mask.chunks_exact(fm.width).enumerate() {
                mask.row_mut(y).copy_from_slice(row);
            }
        }
        if !self.objects.is_null() {
            let records: Vec<SegTrackObject> =
                fm.objects.iter().map(|o| record(o.object_id, o.score, o.present, &o.mask, fm.width)).collect();
            // SAFETY: `capacity` >= n records of `object_size` bytes (checked above and the contract).
            unsafe { write_records(self.objects, self.object_size, &records) };
        }
        if !self.count.is_null() {
            // SAFETY: not NULL, so writable (the contract).
            unsafe { self.count.write(n) };
        }
        // SAFETY: `info_size` bytes of `info`, checked by `out_size`.
        unsafe { write_info(self.info, info_size, fm.frame, n, times) };
        Ok(())
    }
}

/// An object's record: score, presence, area and box of its mask (`width` pixels per row).
fn record(object_id: i32, score: Option<f32>, present: bool, mask: &[u8], width: usize) -> SegTrackObject {
    let mut r = SegTrackObject { object_id, present: present as u32, has_output: score.is_some() as u32, ..Default::default() };
    r.score = score.unwrap_or(0.0);
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for (y, row) in mask.chunks_exact(width.max(1)).enumerate() {
        let Some(first) = row.iter().position(|v| *v != 0) else { continue };
        let last = row.iter().rposition(|v| *v != 0).unwrap_or(first);
        r.area += row[first..=last].iter().filter(|v| **v != 0).count() as u64;
        (x0, x1) = (x0.min(first), x1.max(last));
        (y0, y1) = (y0.min(y), y);
    }
    if r.area > 0 {
        (r.x0, r.y0, r.x1, r.y1) = (x0 as i32, y0 as i32, x1 as i32, y1 as i32);
    }
    r
}
