//! SAM2 video tracking: the official `SAM2VideoPredictor` (sam2 1.1.0) rebuilt on four
//! ONNX modules exported by `models/sam2/export_sam2_video.py` (image encoder, memory attention,
//! memory encoder, mask decoder with object pointer and object score) plus `video_metadata.json`.
//!
//! `models/sam2/video_ort_tracker.py` is the specification; every rule here names the Python
//! function it mirrors. The memory bank per object holds, like the predictor's `output_dict_per_obj`:
//! * conditioning frames: frames clicked before they were tracked (memory at t_pos 0, always used);
//! * non-conditioning frames: tracked frames (and corrections on tracked frames); the previous
//!   `num_maskmem - 1` of them give memories at t_pos `num_maskmem - t_rel`;
//! * object pointers: those of conditioning frames up to the current one, then those of the
//!   previous `min(num_frames, max_obj_ptrs_in_encoder) - 1` frames, each with its signed frame
//!   distance / (`min(num_frames, max_obj_ptrs_in_encoder) - 1`);
//! * clicks not yet consolidated ("temp"): their memory is encoded (from the binarised mask) when
//!   tracking next runs (`propagate_in_video_preflight`).
//!
//! Memory features are stored rounded to bfloat16, as the predictor stores them.
//!
//! Usage: [`VideoModel::from_dir`], then a [`Tracker`]: [`Tracker::add_frame`] for each frame in
//! order, [`Tracker::add_points`] on any frame already added (and still held), then
//! [`Tracker::propagate`] (the official `propagate_in_video`, forward, over the frames added so far)
//! or, streaming, [`Tracker::track_frame`] for each new frame.
//!
//! **Memory bound** ([`TrackerOptions::keep_frames`]): with `Some(k)` the tracker keeps the encoder
//! outputs of the `k` most recently added frames only (plus frames whose clicks are not yet
//! consolidated); clicking on or tracking an older frame is then an error. Tracked outputs of frames
//! more than `max(num_maskmem - 1, max_ptrs - 1)` frames before the oldest frame still held are
//! dropped too: no frame that can still be tracked would select them. Conditioning outputs (small:
//! memory features, pointer, low-res logits) are always kept. With `None` (the default) everything
//! is kept, as the official predictor does (which keeps every frame's pixels).

mod memory;
mod metadata;
mod model;
mod numeric;
mod timings;
mod tracker;

pub use metadata::{ModuleIo, PredictorSettings, Preprocessing, VideoFiles, VideoIo, VideoMetadata};
pub use model::{VideoInfo, VideoModel};
pub use numeric::{bf16_round, upsample_bilinear};
pub use timings::ModuleTimes;
pub use tracker::{Direction, FrameMasks, ObjectMask, Propagation, PropagationDirection, Tracker, TrackerOptions, MAX_VIDEO_POINTS};
