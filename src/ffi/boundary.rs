//! Shared helpers of the C boundary: panic catching, the per-thread last error, and strings both
//! ways (UTF-8 arguments read, text copied into caller-owned buffers).

use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;

use super::enums::SegStatus;

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
        // A cancelled call did what its host asked: not an error.
        let level = if status == SegStatus::SEG_CANCELLED { LogLevel::Info } else { LogLevel::Error };
        let _ = catch_unwind(|| crate::log::emit(level, &format!("{}: {}", status.name(), last_error())));
    }
    status
}

/// `guard` without the log message, for release paths (`seg_free`): a host tearing down (a .NET
/// finalizer) must never receive a callback.
pub(crate) fn guard_quiet(body: impl FnOnce() -> Result<()>) -> SegStatus {
    #[cfg(feature = "fault-injection")]
    leak_injected_bytes();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SegStatus::SEG_OK,
        Ok(Err(e)) => {
            set_last_error(&e.message);
            SegStatus::from(e.kind)
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

/// Test builds only (`fault-injection`): every C-ABI call leaks `SEGRT_INJECT_LEAK_BYTES` bytes, written
/// to so that they are resident, for the test that `segrt soak`'s leak verdict catches a leak.
#[cfg(feature = "fault-injection")]
fn leak_injected_bytes() {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let n = *BYTES.get_or_init(|| std::env::var("SEGRT_INJECT_LEAK_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(0));
    if n > 0 {
        std::mem::forget(vec![0x5au8; n]);
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
        // SAFETY: `buf` holds `cap` writable bytes (the contract); n + 1 <= cap, and a caller's
        // buffer cannot overlap a Rust string.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
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
        // SAFETY: not NULL, so writable (the contract).
        unsafe { out_len.write(needed) };
    }
    if buf.is_null() && cap == 0 && !out_len.is_null() {
        return Ok(());
    }
    if buf.is_null() || cap < needed {
        return Err(Error::new(ErrorKind::BufferTooSmall, format!("the JSON needs {needed} bytes, the buffer has {cap}")));
    }
    // SAFETY: not NULL and `cap` bytes (the contract).
    unsafe { copy_out(json, buf, cap) };
    Ok(())
}

/// A required pointer argument as a reference (rustls-ffi's `try_ref_from_ptr!`): NULL is
/// `SEG_NULL_POINTER` naming `what`.
///
/// # Safety
/// `p` must be NULL or point to a valid `T` that outlives `'a`.
pub(crate) unsafe fn required<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    // SAFETY: NULL or valid for `'a` (the contract).
    unsafe { p.as_ref() }.ok_or_else(|| Error::null(what))
}

/// A caller's array of `len` values at `p` as a slice (NULL: an error unless `len` is 0). A length
/// whose bytes exceed the address space is refused before the slice is made: no buffer can hold it,
/// and a slice of it would be undefined behaviour.
///
/// # Safety
/// `p` must be NULL or point to `len` readable values that outlive `'a`.
pub(crate) unsafe fn caller_slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    check_array_len::<T>(p.is_null(), len, what)?;
    // SAFETY: not NULL, `len` readable values (the contract) whose bytes fit in isize (checked).
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// [`caller_slice`] for an output array.
///
/// # Safety
/// `p` must be NULL or point to `len` writable values that outlive `'a` and nothing else borrows.
pub(crate) unsafe fn caller_slice_mut<'a, T>(p: *mut T, len: usize, what: &str) -> Result<&'a mut [T]> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_array_len::<T>(p.is_null(), len, what)?;
    // SAFETY: not NULL, `len` writable values (the contract) whose bytes fit in isize (checked).
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

fn check_array_len<T>(null: bool, len: usize, what: &str) -> Result<()> {
    if null {
        return Err(Error::null(&format!("{what} (its length is {len})")));
    }
    let size = std::mem::size_of::<T>().max(1);
    if len > isize::MAX as usize / size {
        return Err(Error::invalid(format!("{what}: a length of {len} values of {size} bytes exceeds the address space")));
    }
    Ok(())
}

/// A UTF-8 C string argument as a path.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
pub(crate) unsafe fn utf8_path(p: *const c_char, what: &str) -> Result<PathBuf> {
    // SAFETY: forwarded from the caller.
    unsafe { utf8_str(p, what) }.map(PathBuf::from)
}

/// A UTF-8 C string argument.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
pub(crate) unsafe fn utf8_str(p: *const c_char, what: &str) -> Result<String> {
    if p.is_null() {
        return Err(Error::null(what));
    }
    // SAFETY: not NULL, so NUL-terminated (the contract).
    let s = unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Error::invalid(format!("{what} is not valid UTF-8 (segrt takes UTF-8 strings and paths on every platform)")))?;
    if s.is_empty() {
        return Err(Error::invalid(format!("{what} is empty")));
    }
    Ok(s.to_string())
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
    fn an_error_becomes_its_status_with_its_message() {
        let status = guard(|| Err(Error::new(ErrorKind::OutOfMemory, "no room")));
        assert_eq!(status, SegStatus::SEG_OUT_OF_MEMORY);
        assert_eq!(last_error(), "no room");
    }

    #[test]
    fn arrays_beyond_the_address_space_are_refused_before_a_slice_is_made() {
        let values = [1.0f32, 2.0];
        // SAFETY: `values` holds the 2 floats passed; the other cases are refused before any access.
        unsafe {
            assert_eq!(caller_slice(values.as_ptr(), 2, "values").unwrap(), &values);
            assert!(caller_slice(std::ptr::null::<f32>(), 0, "values").unwrap().is_empty());
            assert_eq!(caller_slice(std::ptr::null::<f32>(), 2, "values").unwrap_err().kind, ErrorKind::NullPointer);
            for len in [isize::MAX as usize / 4 + 1, usize::MAX / 4 + 1, usize::MAX] {
                let e = caller_slice(values.as_ptr(), len, "values").unwrap_err();
                assert!(e.message.contains("exceeds the address space"), "{len}: {}", e.message);
                let mut out = [0u8; 2];
                assert!(caller_slice_mut(out.as_mut_ptr(), usize::MAX, "out").is_err());
            }
        }
    }

    #[test]
    fn copy_out_truncates_and_reports_needed_size() {
        let mut buf = [0x7f as c_char; 4];
        // SAFETY: `buf` holds the `buf.len()` bytes passed.
        let needed = unsafe { copy_out("hello", buf.as_mut_ptr(), buf.len()) };
        assert_eq!(needed, 6);
        // SAFETY: copy_out ended the text with a NUL inside `buf`.
        let s = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(s.to_str().unwrap(), "hel");
        // SAFETY: NULL with a capacity of 0 is allowed.
        assert_eq!(unsafe { copy_out("hello", std::ptr::null_mut(), 0) }, 6);
    }
}
