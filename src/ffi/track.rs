//! SAM2 video tracking exports: tracks made from a video session (`seg_track_create`; the session
//! is `video.rs`'s), frames fed in order, prompts on any frame still held, masks per object.
//!
//! A track's calls run one at a time (a lock per track): several threads may call one track, and
//! each call sees the track as the previous call left it, so the caller decides the order (feed
//! frames from one thread, or order the calls yourself). Many tracks may share one video session
//! and run at the same time.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use crate::error::{Error, ErrorKind};
use crate::sam2::video::{Tracker, VideoModel, MAX_VIDEO_POINTS};

use super::boundary::{caller_slice, required};
use super::enums::SegStatus;
use super::handles::{lookup, Handle, SegCallControl, SegSession, SegTrack};
use super::images::{SegImage, SegMask};
use super::prologue::{create, release, run};
use super::reference::mask_bytes;
use super::sam2_types::{SegBox, SegPoint};
use super::track_lock::{as_before_if_cancelled, on_track, on_track_controlled, refuse_reentry};
use super::track_outputs::{write_info, FrameOutputs};
use super::track_types::{
    frame_index, SegPropagation, SegTrackFrameCallback, SegTrackInfo, SegTrackObject, SegTrackOptions, SegTrackState,
};
use super::versioned::{fill_defaults, out_size, write_versioned};

/// Fills `*options` with the defaults, as `seg_options_default` does:
/// `SegTrackOptions o = { .struct_size = sizeof o }; seg_track_options_default(&o);`.
///
/// # Safety
/// `options` must be NULL or point to `options->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_track_options_default(options: *mut SegTrackOptions) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    run(|| unsafe { fill_defaults(options, SegTrackOptions::defaults(), "options") })
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
    let args = || Ok(lookup(session)?.get::<Arc<VideoModel>>()?.clone());
    // SAFETY: NULL or a valid `SegTrackOptions` (the contract).
    let make = |model| Ok(Handle::Track(Box::new(Mutex::new(Tracker::new(model, unsafe { SegTrackOptions::read(options)? })?))));
    // SAFETY: `out_track` NULL or writable (the contract).
    unsafe { create(out_track, args, make) }
}

/// Releases a track. `seg_track_free(NULL)` is a no-op; a freed or made-up handle gives
/// `SEG_INVALID_HANDLE`, a session handle `SEG_WRONG_SESSION_KIND` (it is not freed). A call running
/// on the track in another thread finishes normally; the memory is released when it returns.
///
/// # Safety
/// Any value may be passed.
#[no_mangle]
pub unsafe extern "C" fn seg_track_free(track: *mut SegTrack) -> SegStatus {
    release(track, |h| matches!(h, Handle::Track(_)), "a track (release sessions with seg_free)")
}

/// Forgets every frame, object and memory of the track: it is as new (same session and options).
/// A call running on the track finishes first.
///
/// # Safety
/// Any value may be passed as `track`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_reset(track: *mut SegTrack) -> SegStatus {
    super::prologue::on(track, |lock: &Mutex<Tracker>| {
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
    on_track_controlled(track, control, |tracker| {
        // SAFETY: NULL or a valid `SegTrackInfo` (the contract).
        let info_size = unsafe { out_size(out_info)? };
        // SAFETY: NULL or describes readable pixels (the contract).
        let view = unsafe { required(frame, "frame")?.view(tracker.model().options().max_pixels)? };
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
    on_track_controlled(track, control, |tracker| {
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
}

/// Prompts one object on a frame already added with its mask (`frame`: its index; -1 = the last
/// frame added, ...), as the official predictor's `add_new_mask`: `mask` has the frame's size (any
/// non-zero byte is the object) and becomes the object's output on that frame as it is (resized to
/// the model's input size, its object score +10), replacing the object's earlier prompts there; the
/// object pointer the memory keeps is computed by the decoder from the mask. A frame not yet tracked
/// for this object becomes a conditioning frame, a tracked one is corrected (as
/// `seg_track_add_prompt`). An empty mask or one of another size gives `SEG_INVALID_ARGUMENT`; a
/// video model whose `video_metadata.json` lacks `mask_downsample` (exported before it was
/// recorded) `SEG_MODEL_UNSUPPORTED`. Outputs as `seg_track_add_prompt`.
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// `mask` must be NULL or describe `height` rows of `stride` readable bytes; outputs as in
/// `seg_track_frame`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_add_mask(
    track: *mut SegTrack,
    frame: i64,
    object_id: i32,
    mask: *const SegMask,
    out_objects: *mut SegTrackObject,
    object_size: usize,
    out_masks: *const SegMask,
    capacity: usize,
    out_count: *mut usize,
    out_info: *mut SegTrackInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    on_track_controlled(track, control, |tracker| {
        let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
        let t = frame_index(tracker, frame)?;
        let size = tracker.frame_size().ok_or_else(|| Error::invalid("the track has no frame yet: add one first"))?;
        // SAFETY: NULL or a valid descriptor of readable bytes (the contract).
        let (bytes, stride) = unsafe { mask_bytes(mask, size)? };
        let new_object = !tracker.object_ids().contains(&object_id);
        let n = tracker.object_ids().len() + new_object as usize;
        // SAFETY: the outputs are NULL or valid for `capacity` elements (the contract).
        unsafe { out.run(tracker, n, Some(size), |tracker| tracker.add_mask(t, object_id, bytes, stride)) }
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
    on_track_controlled(track, control, |tracker| {
        let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
        let t = frame_index(tracker, frame)?;
        let (n, size) = (tracker.object_ids().len(), tracker.frame_size());
        // SAFETY: the outputs are NULL or valid for `capacity` elements (the contract).
        unsafe { out.run(tracker, n, size, |tracker| tracker.track_frame(t)) }
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
    on_track_controlled(track, control, |tracker| {
        let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
        // SAFETY: NULL or describes readable pixels (the contract).
        let frame = unsafe { required(frame, "frame")? };
        if tracker.object_ids().is_empty() {
            return Err(Error::invalid("no object to track: add a frame and prompt an object on it first (seg_track_add_prompt)"));
        }
        // SAFETY: as above.
        let view = unsafe { frame.view(tracker.model().options().max_pixels)? };
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
}

/// Fills `*request` with the defaults (forward from the earliest prompted frame to the end):
/// `SegPropagation p = { .struct_size = sizeof p }; seg_propagation_default(&p);`.
///
/// # Safety
/// `request` must be NULL or point to `request->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_propagation_default(request: *mut SegPropagation) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    run(|| unsafe { fill_defaults(request, SegPropagation::defaults(), "request") })
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
    on_track_controlled(track, control, |tracker| {
        // SAFETY: NULL or valid for its `struct_size` (the contract).
        let request = unsafe { SegPropagation::read(request, tracker)? };
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
}

/// Removes an object from the track (SAM2's `remove_object`): its prompts, outputs and memory; the
/// other objects are unchanged. An id not in the track (e.g. removed already) is
/// `SEG_INVALID_ARGUMENT`, the track unchanged. Removing the last object leaves the frames.
///
/// # Safety
/// Any value may be passed as `track`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_remove_object(track: *mut SegTrack, object_id: i32) -> SegStatus {
    on_track(track, |tracker| tracker.remove_object(object_id))
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
    on_track(track, |tracker| {
        let out = FrameOutputs { objects: out_objects, object_size, masks: out_masks, capacity, count: out_count, info: out_info };
        let t = frame_index(tracker, frame)?;
        let (n, size) = (tracker.object_ids().len(), tracker.frame_size());
        // SAFETY: the outputs are NULL or valid for `capacity` elements (the contract).
        unsafe { out.run(tracker, n, size, |tracker| tracker.clear_prompts(t, object_id)) }
    })
}

/// Describes a track: objects, frames, frame size, what its memory holds (`held_frames`,
/// `held_outputs` stay bounded with `keep_frames`). Set `out_state->struct_size` first.
///
/// # Safety
/// `out_state` must be NULL or valid for its `struct_size`.
#[no_mangle]
pub unsafe extern "C" fn seg_track_state(track: *mut SegTrack, out_state: *mut SegTrackState) -> SegStatus {
    on_track(track, |tracker| {
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
