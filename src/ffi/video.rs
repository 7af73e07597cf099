//! The SAM2 video session export (`seg_create_sam2_video`): the four modules a track runs on. Tracks
//! made from it are `track.rs`'s.

use std::ffi::c_char;
use std::path::PathBuf;
use std::sync::Arc;

use crate::sam2::video::VideoModel;

use super::boundary::utf8_path;
use super::enums::SegStatus;
use super::handles::{Handle, SegSession};
use super::options::SegOptions;
use super::prologue::create;

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
    // SAFETY: NULL or NUL-terminated (the contract).
    let args = || unsafe { utf8_path(models_dir, "models_dir") };
    // SAFETY: NULL or a valid `SegOptions` (the contract).
    let make = |dir: PathBuf| Ok(Handle::Video(Arc::new(VideoModel::from_dir(&dir, unsafe { SegOptions::read(options)? })?)));
    // SAFETY: `out_session` NULL or writable (the contract).
    unsafe { create(out_session, args, make) }
}
