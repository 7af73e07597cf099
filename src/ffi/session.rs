//! Session exports: options, creation from a file or memory, UNet runs, info, free.

use std::ffi::c_char;
use std::path::PathBuf;

use crate::error::{Error, ErrorKind};
use crate::unet::{UnetRun, UnetSegmenter};

use super::boundary::{caller_slice_mut, copy_json_out, required, utf8_path};
use super::enums::SegStatus;
use super::external_data::create_unet;
use super::handles::{Handle, SegCallControl, SegSession};
use super::images::{SegImage, SegMask};
use super::options::SegOptions;
use super::prologue::{create, on, on_controlled, release, run};
use super::versioned::{fill_defaults, out_size, versioned, write_versioned};

/// What one run measured. Set `struct_size = sizeof(SegRunInfo)`; segrt writes no more than that.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegRunInfo {
    pub struct_size: u32,
    /// 1 for binary models (mask 0/255), else the number of classes (mask = class index).
    pub num_classes: i32,
    /// Size the model ran at.
    pub model_width: i32,
    pub model_height: i32,
    pub preprocess_ms: f64,
    pub inference_ms: f64,
    pub postprocess_ms: f64,
    /// Threshold applied (Otsu's value in OTSU mode); NaN for multi-class models.
    pub threshold: f32,
    /// Tiles the image was cut into (0: not tiled, the whole image was resized).
    pub tiles: u32,
    /// Pixels of the mask that are not 0.
    pub foreground_pixels: u64,
}

versioned!(SegRunInfo);

impl From<&UnetRun> for SegRunInfo {
    fn from(run: &UnetRun) -> Self {
        let stats = &run.stats;
        SegRunInfo {
            struct_size: 0, // the caller's is kept
            num_classes: run.classes as i32,
            model_width: stats.model_width as i32,
            model_height: stats.model_height as i32,
            preprocess_ms: stats.preprocess_ms,
            inference_ms: stats.inference_ms,
            postprocess_ms: stats.postprocess_ms,
            threshold: run.threshold,
            tiles: stats.tiles as u32,
            foreground_pixels: run.foreground_pixels,
        }
    }
}

/// Fills `*options` with the defaults. Start every options struct here, its size declared first:
/// `SegOptions o = { .struct_size = sizeof o }; seg_options_default(&o);`. Only the `struct_size` bytes the caller
/// declared are written, and `struct_size` itself is kept. Returns `SEG_NULL_POINTER` when `options`
/// is NULL and `SEG_INVALID_ARGUMENT` (nothing written) for a size segrt does not accept.
/// Thread safety: any thread.
///
/// # Safety
/// `options` must be NULL or point to `options->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_options_default(options: *mut SegOptions) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    run(|| unsafe { fill_defaults(options, SegOptions::defaults(), "options") })
}

/// Creates a UNet session from an ONNX model file (`model_path`: UTF-8, any language, e.g. Chinese
/// folder names). `options` may be NULL for the defaults; it is only read during the call.
/// Loads ONNX Runtime first if needed (see `seg_runtime_init`).
///
/// On success `*out_session` receives a new handle, owned by the caller: release it with `seg_free`.
/// On failure `*out_session` is left untouched. Statuses: `SEG_MODEL_NOT_FOUND`, `SEG_MODEL_INVALID`,
/// `SEG_MODEL_UNSUPPORTED` (the message lists the model's inputs/outputs), `SEG_PROVIDER_UNAVAILABLE`,
/// `SEG_RUNTIME_NOT_FOUND`, `SEG_INVALID_ARGUMENT` (bad option values), `SEG_NULL_POINTER`.
/// Thread safety: any thread; the handle may then be used from any number of threads at once.
///
/// # Safety
/// `model_path` must be NULL or NUL-terminated; `options` NULL or a valid `SegOptions`;
/// `out_session` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_create(model_path: *const c_char, options: *const SegOptions, out_session: *mut *mut SegSession) -> SegStatus {
    // SAFETY: NULL or NUL-terminated (the contract).
    let args = || unsafe { utf8_path(model_path, "model_path") };
    // SAFETY: NULL or a valid `SegOptions` (the contract).
    let make = |path: PathBuf| Ok(Handle::Unet(Box::new(UnetSegmenter::from_file(&path, unsafe { SegOptions::read(options)? })?)));
    // SAFETY: `out_session` NULL or writable (the contract).
    unsafe { create(out_session, args, make) }
}

/// Like `seg_create`, from model bytes in memory. The bytes are copied; the caller keeps ownership
/// of `model_data` and may free it when the call returns.
///
/// # Safety
/// `model_data` must point to `model_len` readable bytes; `options` NULL or a valid `SegOptions`;
/// `out_session` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_create_from_memory(
    model_data: *const u8,
    model_len: usize,
    options: *const SegOptions,
    out_session: *mut *mut SegSession,
) -> SegStatus {
    // SAFETY: as the contract states (forwarded); no side files.
    unsafe { create_unet(model_data, model_len, None, options, out_session) }
}

/// Releases a session. `seg_free(NULL)` is a no-op returning `SEG_OK`; a handle that was already
/// freed or never created returns `SEG_INVALID_HANDLE` (never undefined behaviour).
/// A call running on another thread at the same time finishes normally; the memory is released when
/// it returns. Per-thread ONNX Runtime sessions of the handle are released with it.
///
/// # Safety
/// Any value may be passed.
#[no_mangle]
pub unsafe extern "C" fn seg_free(session: *mut SegSession) -> SegStatus {
    release(
        session,
        |h| !matches!(h, Handle::Track(_) | Handle::Control(_) | Handle::Reference(_)),
        "a session (release tracks with seg_track_free, controls with seg_control_free, references with seg_reference_free)",
    )
}

/// Runs a UNet session on one image and writes the mask at the image's size into `out_mask`.
///
/// - `image`: borrowed pixels (read only, only during the call); see `SegImage` for formats and strides.
/// - `out_mask`: caller-owned buffer of the image's width x height (0/255 for binary models, the class
///   index for multi-class models).
/// - `out_probability`: optional (NULL = not wanted) caller-owned `float` buffer of `probability_len`
///   elements, at least width x height; receives the foreground probability (multi-class: of the chosen
///   class), row-major without padding.
/// - `out_info`: optional; set its `struct_size` first. Receives timings, classes, the threshold used.
///
/// Outputs are written only on success. Thread safety: any number of threads may run the same session at
/// once: each call borrows one of the handle's ONNX Runtime sessions (up to `SegOptions.max_sessions`
/// run at once; further calls wait their turn in arrival order).
///
/// `control`: NULL, or a `SegCallControl` to cancel the call from another thread and receive its
/// progress (`SEG_CANCELLED`: no output written, the handle as before the call).
///
/// # Safety
/// All pointers must be NULL or valid for the sizes the descriptors state.
#[no_mangle]
pub unsafe extern "C" fn seg_run_unet(
    session: *mut SegSession,
    image: *const SegImage,
    out_mask: *const SegMask,
    out_probability: *mut f32,
    probability_len: usize,
    out_info: *mut SegRunInfo,
    control: *mut SegCallControl,
) -> SegStatus {
    on_controlled(session, control, |unet: &UnetSegmenter| {
        // SAFETY: NULL or valid for the sizes they state (the contract).
        let (image, out_mask) = unsafe { (required(image, "image")?, required(out_mask, "out_mask")?) };
        // SAFETY: as above.
        let view = unsafe { image.view(unet.options().max_pixels)? };
        let (w, h) = (view.width(), view.height());
        // SAFETY: as above.
        let mut mask = unsafe { out_mask.target()? };
        if !out_probability.is_null() && probability_len < w * h {
            return Err(Error::new(
                ErrorKind::BufferTooSmall,
                format!("probability buffer holds {probability_len} floats, the image needs {}", w * h),
            ));
        }
        // SAFETY: NULL or a valid `SegRunInfo` (the contract).
        let info_size = unsafe { out_size(out_info)? };
        let probability = if out_probability.is_null() {
            None
        } else {
            // SAFETY: not NULL, so `probability_len` >= w * h writable floats (checked above).
            Some(unsafe { caller_slice_mut(out_probability, w * h, "out_probability")? })
        };

        // The mask and the probability are written straight into the caller's buffers.
        let run = unet.segment_into(&view, &mut mask, probability)?;

        // SAFETY: `info_size` bytes of `out_info`, checked by `out_size`.
        unsafe { write_versioned(&SegRunInfo::from(&run), out_info, info_size) };
        Ok(())
    })
}

/// Describes a session as JSON: the model's inputs and outputs (names, dtypes, shapes; -1 = dynamic),
/// how segrt interprets them (layout, channels, classes), the execution provider requested and in use
/// with any fallback reason, the threads sessions run on, the session pool ("pool": max_sessions,
/// sessions, busy, created, waits, resident memory of the first and of an extra session; SAM2:
/// "encoder_pool" and "decoder_pool"), and the ONNX Runtime version and path.
///
/// The JSON (UTF-8, NUL-terminated) is copied into the caller-owned `buf` of `cap` bytes; `*out_len`
/// (optional) receives the size needed including the NUL. A pure size query (`buf` NULL, `cap` 0,
/// `out_len` set) returns `SEG_OK`; otherwise a `cap` that is too small gives `SEG_BUFFER_TOO_SMALL`
/// (nothing is written then; call again with `*out_len` bytes).
///
/// # Safety
/// `buf` must be NULL or point to `cap` writable bytes; `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_session_info(session: *mut SegSession, buf: *mut c_char, cap: usize, out_len: *mut usize) -> SegStatus {
    on(session, |handle: &Handle| {
        let json = match handle {
            Handle::Unet(u) => serde_json::to_string_pretty(&u.info()),
            Handle::Sam2(s) => serde_json::to_string_pretty(&s.info()),
            Handle::Video(v) => serde_json::to_string_pretty(&v.info()),
            Handle::Track(_) | Handle::Control(_) | Handle::Reference(_) => {
                return Err(handle.wrong_kind("a session (describe a track with seg_track_state)"))
            }
        }
        .map_err(|e| Error::internal(e.to_string()))?;
        // SAFETY: `buf` NULL or `cap` writable bytes, `out_len` NULL or writable (the contract).
        unsafe { copy_json_out(&json, buf, cap, out_len) }
    })
}
