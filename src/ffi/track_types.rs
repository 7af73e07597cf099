//! The C types of the tracking exports (`track.rs`): the track's options, the propagation request,
//! per-object records, per-call figures and state, each input read and checked here; and a frame
//! argument counted from the end when negative. (The track handle, `SegTrack`, is in `handles`.)

use crate::error::{Error, Result};
use crate::sam2::video::{Propagation, PropagationDirection, Tracker};

use super::versioned::{read_versioned, versioned};

/// Options of `seg_track_create`: `SegTrackOptions o = { .struct_size = sizeof o }; seg_track_options_default(&o);`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegTrackOptions {
    /// `sizeof(SegTrackOptions)` as the caller was compiled with.
    pub struct_size: u32,
    /// Frames the video has, when known (0 = unknown: streaming, the default). SAM2 scales the
    /// distance of object pointers by `min(num_frames, 16) - 1`: give it for videos or volumes of
    /// fewer than 16 frames to match the official predictor exactly.
    pub num_frames: u32,
    /// The encoder outputs of this many frames are kept (0 = every frame, as the official predictor
    /// does: memory grows with the video). Default 8: memory stays bounded. A streamed track keeps
    /// its most recent frames, and prompts and tracking reach only those; a volume (`volume`) keeps
    /// the most recently used ones and encodes any other frame again when it is needed.
    pub keep_frames: u32,
    pub reserved: u32,
    // ---- Appended in a later release of ABI 1; a host built before sets a struct_size that ends
    // here, and these fields take their defaults. ----
    /// Must be 0. Reserved: ABI 1's first hosts check that a struct 16 bytes longer than theirs
    /// with a non-zero byte there is refused, so no field may take these bytes.
    pub reserved2: [u32; 4],
    /// 1: the track is a volume (or a video known in full): every frame's pixels are kept (8-bit RGB
    /// after the intensity stage: 0.75 MB per 512x512 slice), frames are encoded when first needed,
    /// and every frame stays reachable in both directions (`seg_track_propagate`). 0 (the default):
    /// a streamed track, each frame encoded when added.
    pub volume: u32,
    /// 1: a prompt on a tracked frame makes it a conditioning frame, so a later propagation over it
    /// keeps the correction (SAM2's `add_all_frames_to_correct_as_cond`). 0 (the default, as SAM2's
    /// own configurations): the correction guides the frames tracked after it, and a propagation that
    /// passes over its frame recomputes that frame.
    pub corrections_as_conditioning: u32,
}

/// A propagation request (`seg_track_propagate`; NULL = the defaults):
/// `SegPropagation p = { .struct_size = sizeof p }; seg_propagation_default(&p);`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegPropagation {
    pub struct_size: u32,
    /// A `SegTrackDirection` (default `SEG_TRACK_FORWARD`).
    pub direction: i32,
    /// 1: start at `start_frame`; 0 (the default): at the earliest conditioning frame of any object
    /// (a frame an object was prompted on before it was tracked there, prompts not yet propagated
    /// included; corrections of tracked frames do not count), as the official predictor.
    pub use_start_frame: u32,
    /// Must be 0.
    pub reserved: u32,
    /// The frame to start from when `use_start_frame` is 1 (an index; -1 = the last frame, ...).
    pub start_frame: i64,
    /// Frames to track past the start in each direction; -1 (the default) = to the end of the track.
    pub max_frames: i64,
}

/// Called by `seg_track_propagate` after each frame, with the frame's outputs in the buffers the
/// call was given (valid until the callback returns): the frame's index and the number of objects.
/// Return non-zero to go on, 0 to stop (the call then returns `SEG_CANCELLED`), as a
/// `SegProgressCallback` does.
pub type SegTrackFrameCallback = Option<unsafe extern "C" fn(frame: i64, count: usize, user_data: *mut std::ffi::c_void) -> i32>;

/// One object on one frame: `seg_track_add_prompt`, `seg_track_frame` and `seg_track_next` fill
/// one record per object, in the order the objects were first prompted (the same order as the masks).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegTrackObject {
    /// The id the caller gave the object when prompting it.
    pub object_id: i32,
    /// 1 when SAM2 sees the object on this frame (its object score is above 0); 0 when it is hidden
    /// or gone (the mask is then empty).
    pub present: u32,
    /// 0 when the object has no prediction on this frame (prompted on a later frame, tracking not
    /// yet there): then `score` is 0 and the mask empty.
    pub has_output: u32,
    /// SAM2's object score logit (present when > 0).
    pub score: f32,
    /// Pixels of the mask.
    pub area: u64,
    /// Box around the mask, inclusive pixel indices; all 0 for an empty mask.
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
}

/// What one track call did. Set `struct_size = sizeof(SegTrackInfo)`; segrt writes no more than that.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegTrackInfo {
    pub struct_size: u32,
    /// Objects of the track (records filled).
    pub objects: u32,
    /// The frame the call was about (0-based, in the order frames were added).
    pub frame: i64,
    /// Milliseconds spent in this call, per stage.
    pub preprocess_ms: f64,
    pub image_encoder_ms: f64,
    pub memory_attention_ms: f64,
    pub mask_decoder_ms: f64,
    pub memory_encoder_ms: f64,
    pub postprocess_ms: f64,
}

/// The state of a track (`seg_track_state`). Set `struct_size = sizeof(SegTrackState)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegTrackState {
    pub struct_size: u32,
    /// Objects prompted so far.
    pub objects: u32,
    /// Frames added so far.
    pub frames: i64,
    /// Frame size (0 before the first frame).
    pub width: i32,
    pub height: i32,
    /// Frames whose encoder outputs are held, and per-frame object outputs held in the memory bank:
    /// both stay bounded with `keep_frames`.
    pub held_frames: u32,
    pub held_outputs: u32,
    /// The options the track was created with.
    pub num_frames: u32,
    pub keep_frames: u32,
    /// 1 once a frame was tracked (objects can still be added, as in SAM2's predictor).
    pub tracking_started: u32,
    pub reserved: u32,
    /// Always 0 (ABI 1's first hosts check that a struct 16 bytes longer than theirs with a
    /// non-zero byte there is refused, so no field may take these bytes).
    pub reserved2: [u32; 4],
    /// The options the track was created with.
    pub volume: u32,
    pub corrections_as_conditioning: u32,
}

/// Default `SegTrackOptions::keep_frames`.
pub const SEG_TRACK_DEFAULT_KEEP_FRAMES: u32 = 8;

impl SegTrackOptions {
    pub fn defaults() -> Self {
        SegTrackOptions {
            struct_size: std::mem::size_of::<SegTrackOptions>() as u32,
            num_frames: 0,
            keep_frames: SEG_TRACK_DEFAULT_KEEP_FRAMES,
            reserved: 0,
            reserved2: [0; 4],
            volume: 0,
            corrections_as_conditioning: 0,
        }
    }

    /// Reads a caller's options (NULL = defaults), honouring `struct_size`.
    ///
    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegTrackOptions) -> Result<crate::sam2::video::TrackerOptions> {
        // SAFETY: forwarded from the caller.
        let raw = unsafe { read_versioned(p, SegTrackOptions::defaults())? };
        if raw.reserved2 != [0; 4] {
            return Err(Error::invalid("SegTrackOptions.reserved2 is not 0"));
        }
        Ok(crate::sam2::video::TrackerOptions {
            num_frames: (raw.num_frames > 0).then_some(raw.num_frames as usize),
            keep_frames: (raw.keep_frames > 0).then_some(raw.keep_frames as usize),
            volume: flag(raw.volume, "volume")?,
            corrections_as_conditioning: flag(raw.corrections_as_conditioning, "corrections_as_conditioning")?,
        })
    }
}

fn flag(v: u32, what: &str) -> Result<bool> {
    match v {
        0 | 1 => Ok(v == 1),
        _ => Err(Error::invalid(format!("SegTrackOptions.{what} is {v}: 0 or 1"))),
    }
}

impl SegPropagation {
    /// Reads a caller's request (NULL = the defaults), honouring `struct_size`, and checks it; the
    /// start frame is counted on `tracker` (negative: from its end).
    ///
    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegPropagation, tracker: &Tracker) -> Result<Propagation> {
        // SAFETY: forwarded from the caller.
        let raw = unsafe { read_versioned(p, SegPropagation::defaults())? };
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
        Ok(Propagation { start_frame, direction: PropagationDirection::try_from(raw.direction)?, max_frames })
    }

    pub fn defaults() -> Self {
        SegPropagation {
            struct_size: std::mem::size_of::<SegPropagation>() as u32,
            direction: super::enums::SegTrackDirection::SEG_TRACK_FORWARD as i32,
            use_start_frame: 0,
            reserved: 0,
            start_frame: 0,
            max_frames: -1,
        }
    }
}

/// A frame argument: an index, or from the end when negative (-1 = the last frame added).
pub(crate) fn frame_index(tracker: &Tracker, frame: i64) -> Result<usize> {
    let n = tracker.num_frames() as i64;
    let t = if frame < 0 { n + frame } else { frame };
    if t < 0 || t >= n {
        return Err(Error::invalid(format!("frame {frame}: the track has {n} frames (indices 0 to {}, or -1 for the last)", n - 1)));
    }
    Ok(t as usize)
}

versioned!(SegPropagation);
versioned!(SegTrackOptions {
    /// 1.0's (to `reserved`), that with the reserved block (all zero: nothing new), then with
    /// `volume` and `corrections_as_conditioning`.
    const LAYOUTS: &'static [usize] = &[16, 32, size_of::<Self>()];
    const RESERVED_TAIL: Option<std::ops::Range<usize>> = Some(16..32);
});
versioned!(SegTrackInfo);
versioned!(SegTrackState {
    /// 1.0's (to `reserved`), that with the reserved block, then with `volume` and
    /// `corrections_as_conditioning`.
    const LAYOUTS: &'static [usize] = &[48, 64, size_of::<Self>()];
    const RESERVED_TAIL: Option<std::ops::Range<usize>> = Some(48..64);
});

const _: () = assert!(size_of::<SegTrackOptions>() == 40 && size_of::<SegTrackState>() == 72 && size_of::<SegPropagation>() == 32);
