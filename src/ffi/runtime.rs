//! Library-wide exports: versions, ONNX Runtime loading, status names, the last error.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

use crate::error::Error;
use crate::log::LogLevel;
use crate::runtime;

use super::boundary::{copy_json_out, copy_out, last_error, set_last_error, utf8_path};
use super::enums::{SegLogLevel, SegStatus};
use super::options::SegOptions;
use super::prologue::run;

/// The C ABI version this library implements (`SEG_ABI_VERSION` in the header it was built with).
/// Wrappers check it before their first call.
///
/// Thread safety: any thread, any time; needs no ONNX Runtime.
#[no_mangle]
pub extern "C" fn seg_abi_version() -> u32 {
    super::SEG_ABI_VERSION
}

/// Copies a one-line version text into `buf`, e.g.
/// `segrt 0.1.0 (ABI 1); ONNX Runtime 1.31.1 loaded from /opt/app/libonnxruntime.so.1.31.1`.
///
/// `buf` (caller-owned, may be NULL when `cap` is 0) receives at most `cap` bytes including the NUL.
/// Returns the size needed including the NUL; call again with a bigger buffer if it exceeds `cap`.
/// Does not load ONNX Runtime. Thread safety: any thread.
///
/// # Safety
/// `buf` must be NULL or point to `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_version(buf: *mut c_char, cap: usize) -> usize {
    let text = std::panic::catch_unwind(|| {
        let ort = match runtime::loaded() {
            Some(rt) => format!("ONNX Runtime {} loaded from {}", rt.version, rt.path.display()),
            None => format!("ONNX Runtime not loaded yet (expects {})", runtime::ORT_EXPECTED_VERSION),
        };
        format!("segrt {} (ABI {}); {ort}", env!("CARGO_PKG_VERSION"), super::SEG_ABI_VERSION)
    })
    .unwrap_or_else(|_| "segrt".into());
    // SAFETY: NULL or `cap` writable bytes (the contract).
    unsafe { copy_out(&text, buf, cap) }
}

/// Loads ONNX Runtime now, from `ort_path` (an absolute UTF-8 path) or, when NULL, from the default
/// places in order: `SEGRT_ORT_PATH`, beside the segrt library, the build tree.
///
/// Optional: `seg_create*` loads it on first use. Call it early to report a missing runtime at start-up.
/// Returns `SEG_RUNTIME_NOT_FOUND` (message: every path tried and why it failed) or
/// `SEG_RUNTIME_INIT_FAILED` (a file that is not ONNX Runtime 1.31). A failed call leaves nothing
/// half-initialised: a later call with a correct path works. Once loaded, later calls return `SEG_OK`
/// and keep the loaded library (a process can hold only one).
/// Thread safety: any thread; concurrent calls are serialised.
///
/// # Safety
/// `ort_path` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn seg_runtime_init(ort_path: *const c_char) -> SegStatus {
    run(|| {
        // SAFETY: not NULL, so NUL-terminated (the contract).
        let path = if ort_path.is_null() { None } else { Some(unsafe { utf8_path(ort_path, "ort_path")? }) };
        runtime::init(path.as_deref()).map(|_| ())
    })
}

/// The constant's name for a status code, e.g. "SEG_MODEL_NOT_FOUND"; "SEG_UNKNOWN_STATUS" for
/// values segrt never returns. The string is static: never free it. Thread safety: any thread.
#[no_mangle]
pub extern "C" fn seg_status_str(status: i32) -> *const c_char {
    match SegStatus::from_code(status) {
        Some(s) => s.name_nul().as_ptr().cast(),
        None => c"SEG_UNKNOWN_STATUS".as_ptr(),
    }
}

/// Copies the message of the last failed call on the calling thread into `buf` (caller-owned,
/// at most `cap` bytes including the NUL; NULL with `cap` 0 just asks for the size).
/// Returns the size needed including the NUL (1 when no call has failed on this thread).
/// The message stays until the next failure on the same thread; successes do not clear it.
///
/// # Safety
/// `buf` must be NULL or point to `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_last_error(buf: *mut c_char, cap: usize) -> usize {
    let text = std::panic::catch_unwind(last_error).unwrap_or_default();
    // SAFETY: NULL or `cap` writable bytes (the contract).
    unsafe { copy_out(&text, buf, cap) }
}

/// Receives segrt's diagnostics: `level` is a `SegLogLevel` value, `message` a NUL-terminated UTF-8
/// string valid only during the call, `user_data` the pointer given to `seg_set_log_callback`.
pub type SegLogCallback = Option<unsafe extern "C" fn(level: i32, message: *const c_char, user_data: *mut c_void)>;

/// Installs a process-wide diagnostics callback (NULL removes it): which ONNX Runtime was loaded,
/// the execution provider each new session got, provider fallback reasons (`SEG_LOG_WARN`), and
/// the message of every failed call (`SEG_LOG_ERROR`, the same text as `seg_last_error`).
///
/// The callback runs synchronously on the thread making the segrt call, possibly several threads at
/// once. It is never called from `seg_free`, so a host may free sessions from a finalizer or
/// destructor safely. It must not unwind (throw) into segrt; it may call segrt functions.
/// After `seg_set_log_callback(NULL, NULL)` returns, a message already being delivered on another
/// thread may still finish. `user_data` is passed back untouched (segrt never reads it).
///
/// # Safety
/// `callback` must be NULL or a function that stays callable until it is replaced.
#[no_mangle]
pub unsafe extern "C" fn seg_set_log_callback(callback: SegLogCallback, user_data: *mut c_void) -> SegStatus {
    run(|| {
        match callback {
            None => crate::log::set_sink(None),
            Some(cb) => {
                // The pointer is only handed back to the host's own callback.
                let user_data = user_data as usize;
                crate::log::set_sink(Some(Arc::new(move |level: LogLevel, message: &str| {
                    // Interior NULs would cut the message short; they never occur in segrt's messages.
                    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
                    // A segrt call the callback makes must not replace the message of the call
                    // being reported: the thread's last error is restored after the callback.
                    let saved = last_error();
                    // SAFETY: the host's callback, called as `SegLogCallback` documents: the message lives
                    // across the call, and user_data is the host's own.
                    unsafe { cb(SegLogLevel::from(level) as i32, text.as_ptr(), user_data as *mut c_void) };
                    set_last_error(&saved);
                })));
            }
        }
        Ok(())
    })
}

/// Lists every execution provider segrt can use, as JSON: its `SegProvider` value, whether the
/// loaded ONNX Runtime build includes it, and whether it actually initialises on this machine (a
/// tiny session is created with it alone, with `error_on_failure`), with ONNX Runtime's reason when
/// not (e.g. a missing `libcublasLt.so.13`). Needs no GPU tools or admin rights.
///
/// `options` (may be NULL) supplies `device_id` and `ort_path`. Loads ONNX Runtime if needed. Output
/// as for `seg_session_info`: the JSON is copied into `buf` (`cap` bytes); `*out_len` receives the size
/// needed; a size query (`buf` NULL, `cap` 0) returns `SEG_OK`, a too-small buffer
/// `SEG_BUFFER_TOO_SMALL`. Takes tens of milliseconds (a session per provider). Thread safety: any thread.
///
/// # Safety
/// `options` NULL or a valid `SegOptions`; `buf` NULL or `cap` writable bytes; `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_providers(options: *const SegOptions, buf: *mut c_char, cap: usize, out_len: *mut usize) -> SegStatus {
    run(|| {
        // SAFETY: NULL or a valid `SegOptions` (the contract).
        let options = unsafe { SegOptions::read(options)? };
        let probes = crate::engine::probe_providers(&options)?;
        let json = serde_json::to_string_pretty(&probes).map_err(|e| Error::internal(e.to_string()))?;
        // SAFETY: `buf` NULL or `cap` writable bytes, `out_len` NULL or writable (the contract).
        unsafe { copy_json_out(&json, buf, cap, out_len) }
    })
}

/// Gives ONNX Runtime's unused working memory back to the system now: the blocks of the CPU arena
/// every handle shares that no run uses, and the C library's free heaps. For a host that knows it
/// goes idle (an annotation tool losing focus, a station between batches): under `SEG_ARENA_AUTO` an
/// image encode's working memory goes back by itself about 2 seconds after the last encode, and under
/// `SEG_ARENA_KEEP` only with this call or when the last handle is freed. Handles stay usable; the
/// next run takes its memory again. Runs on other threads may go on meanwhile (nothing they use is
/// released). Returns `SEG_OK`, also when nothing is held (no handle, ONNX Runtime not loaded).
/// Takes about a millisecond. Thread safety: any thread.
///
/// # Safety
/// None beyond the C ABI's: no arguments.
#[no_mangle]
pub unsafe extern "C" fn seg_release_memory() -> SegStatus {
    run(|| {
        crate::engine::idle_release::release_now();
        Ok(())
    })
}
