//! Shared helpers of the C boundary: panic catching, the per-thread last error, the handle
//! registry, and copying strings into caller-owned buffers.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Result, SegStatus};
use crate::log::SegLogLevel;
use crate::sam2::Sam2Segmenter;
use crate::unet::UnetSegmenter;

use super::types::SegSession;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

pub(crate) fn set_last_error(message: &str) {
    LAST_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        e.clear();
        e.push_str(message);
    });
}

pub(crate) fn last_error() -> String {
    LAST_ERROR.with(|e| e.borrow().clone())
}

/// Runs an export's body: a returned error or a panic becomes a status and the thread's last error,
/// and is reported to the log sink.
pub(crate) fn guard(body: impl FnOnce() -> Result<()>) -> SegStatus {
    let status = guard_quiet(body);
    if status != SegStatus::SEG_OK {
        let _ = catch_unwind(|| crate::log::emit(SegLogLevel::SEG_LOG_ERROR, &format!("{}: {}", status.name(), last_error())));
    }
    status
}

/// `guard` without the log message, for release paths (`seg_free`): a host tearing down (a .NET
/// finalizer) must never receive a callback.
pub(crate) fn guard_quiet(body: impl FnOnce() -> Result<()>) -> SegStatus {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SegStatus::SEG_OK,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            e.status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic payload".into());
            set_last_error(&format!("panic inside segrt (caught; the host process is unharmed): {what}"));
            SegStatus::SEG_PANIC
        }
    }
}

/// Copies `text` plus a NUL into `buf` (truncating to `cap`); returns the size needed including the NUL.
///
/// # Safety
/// `buf` must be NULL or point to `cap` writable bytes.
pub(crate) unsafe fn copy_out(text: &str, buf: *mut c_char, cap: usize) -> usize {
    let bytes = text.as_bytes();
    if !buf.is_null() && cap > 0 {
        let n = bytes.len().min(cap - 1);
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
    bytes.len() + 1
}

/// Copies a JSON text out with the size-query convention of `seg_session_info`: `*out_len` (optional)
/// gets the size needed including the NUL; `buf` NULL with `cap` 0 is a query (`Ok`); a buffer that is
/// too small is `SEG_BUFFER_TOO_SMALL` and receives nothing.
///
/// # Safety
/// `buf` must be NULL or point to `cap` writable bytes; `out_len` NULL or writable.
pub(crate) unsafe fn copy_json_out(json: &str, buf: *mut c_char, cap: usize, out_len: *mut usize) -> Result<()> {
    let needed = json.len() + 1;
    if !out_len.is_null() {
        out_len.write(needed);
    }
    if buf.is_null() && cap == 0 && !out_len.is_null() {
        return Ok(());
    }
    if buf.is_null() || cap < needed {
        return Err(Error::new(SegStatus::SEG_BUFFER_TOO_SMALL, format!("the JSON needs {needed} bytes, the buffer has {cap}")));
    }
    copy_out(json, buf, cap);
    Ok(())
}

/// A UTF-8 C string argument as a path.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
pub(crate) unsafe fn utf8_path(p: *const c_char, what: &str) -> Result<PathBuf> {
    if p.is_null() {
        return Err(Error::null(what));
    }
    let s = CStr::from_ptr(p)
        .to_str()
        .map_err(|_| Error::invalid(format!("{what} is not valid UTF-8 (segrt takes UTF-8 paths on every platform)")))?;
    if s.is_empty() {
        return Err(Error::invalid(format!("{what} is empty")));
    }
    Ok(PathBuf::from(s))
}

/// What a handle refers to.
pub(crate) enum Handle {
    Unet(UnetSegmenter),
    Sam2(Sam2Segmenter),
}

impl Handle {
    pub(crate) fn unet(&self) -> Result<&UnetSegmenter> {
        match self {
            Handle::Unet(u) => Ok(u),
            Handle::Sam2(_) => Err(Error::new(SegStatus::SEG_WRONG_SESSION_KIND, "this is a SAM2 session; use seg_run_sam2_points")),
        }
    }
    pub(crate) fn sam2(&self) -> Result<&Sam2Segmenter> {
        match self {
            Handle::Sam2(s) => Ok(s),
            Handle::Unet(_) => Err(Error::new(SegStatus::SEG_WRONG_SESSION_KIND, "this is a UNet session; use seg_run_unet")),
        }
    }
}

/// Live handles by id. Handles are ids, not addresses: a freed or made-up handle is detected
/// (`SEG_INVALID_HANDLE`) instead of dereferenced, and a call in flight keeps its `Arc`, so
/// `seg_free` on another thread never pulls the session out from under it.
fn registry() -> &'static Mutex<HashMap<usize, Arc<Handle>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<usize, Arc<Handle>>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// Ids start high and step by 16 so they never look like small integers or each other.
static NEXT_ID: AtomicUsize = AtomicUsize::new(0x5E60_0000);

pub(crate) fn register(handle: Handle) -> *mut SegSession {
    let id = NEXT_ID.fetch_add(16, Ordering::Relaxed);
    let (kind, provider) = match &handle {
        Handle::Unet(u) => ("UNet", u.provider().in_use.clone()),
        Handle::Sam2(s) => ("SAM2", s.provider().in_use.clone()),
    };
    registry().lock().unwrap_or_else(|p| p.into_inner()).insert(id, Arc::new(handle));
    crate::log::emit(SegLogLevel::SEG_LOG_INFO, &format!("{kind} session {id:#x} created; execution provider in use: {provider}"));
    id as *mut SegSession
}

pub(crate) fn lookup(session: *const SegSession) -> Result<Arc<Handle>> {
    if session.is_null() {
        return Err(Error::new(SegStatus::SEG_INVALID_HANDLE, "session handle is NULL"));
    }
    registry().lock().unwrap_or_else(|p| p.into_inner()).get(&(session as usize)).cloned().ok_or_else(|| {
        Error::new(SegStatus::SEG_INVALID_HANDLE, format!("{session:p} is not a live segrt session (already freed, or never created)"))
    })
}

pub(crate) fn unregister(session: *const SegSession) -> Result<Arc<Handle>> {
    registry().lock().unwrap_or_else(|p| p.into_inner()).remove(&(session as usize)).ok_or_else(|| {
        Error::new(SegStatus::SEG_INVALID_HANDLE, format!("{session:p} is not a live segrt session (double free, or never created)"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_seg_panic_with_its_message() {
        let status = guard(|| panic!("boom {}", 42));
        assert_eq!(status, SegStatus::SEG_PANIC);
        assert!(last_error().contains("boom 42"), "{}", last_error());
    }

    #[test]
    fn copy_out_truncates_and_reports_needed_size() {
        let mut buf = [0x7f as c_char; 4];
        let needed = unsafe { copy_out("hello", buf.as_mut_ptr(), buf.len()) };
        assert_eq!(needed, 6);
        let s = unsafe { CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(s.to_str().unwrap(), "hel");
        assert_eq!(unsafe { copy_out("hello", std::ptr::null_mut(), 0) }, 6);
    }
}
