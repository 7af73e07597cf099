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
//! order, [`Tracker::add_points`] (or [`Tracker::add_prompt`] with a box, or [`Tracker::add_mask`]
//! with the object's mask) on any frame already added (and still held), then [`Tracker::propagate_with`] (the official `propagate_in_video`: from a
//! start frame forward, in reverse or both ways, as far as asked; [`Tracker::propagate`] is forward
//! from the earliest prompt to the last frame) or, streaming, [`Tracker::track_frame`] for each new
//! frame. A volume ([`TrackerOptions::volume`]) keeps every frame reachable in both directions.
//!
//! The files: `metadata` (the JSON and the settings), `model` (the four sessions), `tracker` (the
//! `Tracker`: frames in, prompts, masks out), `frames` (the frames and their encoder outputs),
//! `memory` (the memory bank and what a frame selects from it), `step` (the decoder step, the memory
//! attention and encoder around it), `propagation` (propagation order and consolidation),
//! `mask_prompt` (a mask as the prompt), `conditioning` (conditioning frames taken out of a track,
//! and a track made of them: reference-based segmentation's memory approach), `numeric`, `timings`.
//!
//! **Memory bound** ([`TrackerOptions::keep_frames`]): with `Some(k)` the tracker keeps the encoder
//! outputs of the `k` most recently added frames only (plus frames whose clicks are not yet
//! consolidated); clicking on or tracking an older frame is then an error. Tracked outputs of frames
//! more than `max(num_maskmem - 1, max_ptrs - 1)` frames before the oldest frame still held are
//! dropped too: no frame that can still be tracked would select them. Conditioning outputs (small:
//! memory features, pointer, low-res logits) are always kept. With `None` (the default) everything
//! is kept, as the official predictor does (which keeps every frame's pixels).

mod conditioning;
mod frames;
mod mask_prompt;
mod memory;
mod metadata;
mod model;
mod numeric;
mod propagation;
mod step;
mod timings;
mod tracker;

pub use conditioning::{ConditioningMemory, MemoryParts};
pub use memory::Direction;
pub use metadata::{MaskDownsample, ModuleIo, PredictorSettings, Preprocessing, VideoFiles, VideoIo, VideoMetadata};
pub use model::{VideoInfo, VideoModel};
pub use numeric::{bf16_round, upsample_bilinear};
pub use propagation::{Propagation, PropagationDirection};
pub use timings::ModuleTimes;
pub use tracker::{FrameMasks, ObjectMask, Tracker, TrackerOptions, MAX_VIDEO_POINTS};
