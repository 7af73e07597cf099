//! The diagnostics callback (`seg_set_log_callback`) through the C ABI: what reaches it, and that
//! `seg_free` never calls it (a .NET finalizer may be freeing the session).
//! One test in its own binary: the callback is process-wide.

mod common;

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::Mutex;

use common::*;
use segrt::ffi::SegLogLevel;
use segrt::ffi::SegStatus;
use segrt::ffi::*;
use segrt::ffi::{SegProvider, SegProviderPolicy};

static SEEN: Mutex<Vec<(i32, String, usize)>> = Mutex::new(Vec::new());

unsafe extern "C" fn collect(level: i32, message: *const c_char, user_data: *mut c_void) {
    let text = CStr::from_ptr(message).to_string_lossy().into_owned();
    SEEN.lock().unwrap().push((level, text, user_data as usize));
}

fn take() -> Vec<(i32, String, usize)> {
    std::mem::take(&mut *SEEN.lock().unwrap())
}

#[test]
fn log_callback_reports_runtime_sessions_fallbacks_and_failures_but_not_frees() {
    let tag = 0xC0FFEE_usize;
    assert_eq!(unsafe { seg_set_log_callback(Some(collect), tag as *mut c_void) }, SegStatus::SEG_OK);

    // A CUDA request with the fallback policy on this CPU-only ONNX Runtime: a warning with the reason.
    let mut o = default_options();
    o.provider = SegProvider::SEG_PROVIDER_CUDA as i32;
    o.provider_policy = SegProviderPolicy::SEG_PROVIDER_FALLBACK as i32;
    let session = create(&model("demo_unet.onnx"), Some(&o)).expect("fallback session");
    let seen = take();
    assert!(seen.iter().all(|(_, _, u)| *u == tag), "user_data passed back untouched: {seen:?}");
    let warn = seen.iter().find(|(l, _, _)| *l == SegLogLevel::SEG_LOG_WARN as i32).unwrap_or_else(|| panic!("no warning in {seen:?}"));
    assert!(warn.1.contains("CUDA:0 could not be initialised") && warn.1.contains("running on the CPU"), "{}", warn.1);
    let info =
        seen.iter().find(|(l, m, _)| *l == SegLogLevel::SEG_LOG_INFO as i32 && m.contains("session")).expect("session created message");
    assert!(info.1.contains("execution provider in use: CPU"), "{}", info.1);

    // A failed call: the error level with the same text as seg_last_error.
    let path = cstr("/no/such/model.onnx");
    let mut out: *mut SegSession = ptr::null_mut();
    assert_eq!(unsafe { seg_create(path.as_ptr(), ptr::null(), &mut out) }, SegStatus::SEG_MODEL_NOT_FOUND);
    let seen = take();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, SegLogLevel::SEG_LOG_ERROR as i32);
    assert!(seen[0].1.starts_with("SEG_MODEL_NOT_FOUND: ") && seen[0].1.ends_with(&last_error()), "{}", seen[0].1);

    // Freeing, even a double free, is silent.
    let raw = session.0;
    drop(session);
    assert_eq!(unsafe { seg_free(raw) }, SegStatus::SEG_INVALID_HANDLE);
    assert!(take().is_empty(), "seg_free must never call back");

    // Removed: nothing more arrives.
    assert_eq!(unsafe { seg_set_log_callback(None, ptr::null_mut()) }, SegStatus::SEG_OK);
    assert_eq!(unsafe { seg_create(path.as_ptr(), ptr::null(), &mut out) }, SegStatus::SEG_MODEL_NOT_FOUND);
    assert!(take().is_empty());
}
