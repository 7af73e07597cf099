//! What the harnesses share: where they find the repository's models, whether built from fuzz/
//! (cargo fuzz) or from the repository root (tests/fuzz_smoke.rs), and a session handle they can keep
//! in a static. Not every target uses every item.
#![allow(dead_code)]
use std::ffi::CString;
use std::path::{Path, PathBuf};

use segrt::ffi::{seg_create_sam2, seg_last_error, seg_sam2_set_image, SegImage, SegSession, SegStatus};

/// A session created once per process and used by every fuzz execution (any thread).
pub struct Handle(pub *mut SegSession);
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

pub fn model_path(relative: &str) -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = if here.join("models").is_dir() { here.to_path_buf() } else { here.join("..") };
    root.join("models").join(relative)
}

pub fn model_cstr(relative: &str) -> CString {
    CString::new(model_path(relative).to_str().expect("UTF-8 path")).expect("no NUL")
}

/// Fails the fuzz execution when segrt caught a panic of its own or broke an invariant: those are
/// bugs even though the host survives them (`guard` turns them into statuses). Any other status is a
/// correct answer to hostile input.
pub fn check(status: SegStatus, call: &str) -> SegStatus {
    if matches!(status, SegStatus::SEG_PANIC | SegStatus::SEG_INTERNAL) {
        let mut buf = vec![0 as std::ffi::c_char; 4096];
        unsafe { seg_last_error(buf.as_mut_ptr(), buf.len()) };
        let message = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        panic!("{call} returned {status:?}: {message}");
    }
    status
}

/// A SAM2 session (encoder and decoder under models/) with a `width` x `height` RGB pattern already
/// encoded, for harnesses that drive the decoder side.
pub fn sam2_session(encoder: &str, decoder: &str, width: usize, height: usize) -> Handle {
    let (enc, dec) = (model_cstr(encoder), model_cstr(decoder));
    let mut s = std::ptr::null_mut();
    assert_eq!(unsafe { seg_create_sam2(enc.as_ptr(), dec.as_ptr(), std::ptr::null(), &mut s) } as i32, 0, "fuzz session");
    let pixels: Vec<u8> = (0..width * height * 3).map(|i| (i * 7 % 251) as u8).collect();
    let image = SegImage {
        data: pixels.as_ptr(),
        width: width as i32,
        height: height as i32,
        stride: 0,
        format: 3,
        plane1: std::ptr::null(),
        plane2: std::ptr::null(),
    };
    assert_eq!(unsafe { seg_sam2_set_image(s, &image, std::ptr::null_mut(), std::ptr::null_mut()) } as i32, 0, "fuzz image");
    Handle(s)
}

/// Runs `call` under a call control that stops it at a moment the fuzz input chooses: `None` runs
/// without a control, `Some(0)` cancels before the call starts, `Some(n)` at the n-th progress
/// report (from inside the callback, as a host's Cancel button would). A cancelled call must obey
/// the same rules as any failed one (the harness checks its outputs) and never panic.
pub fn with_cancel_at<R>(at: Option<u8>, call: impl FnOnce(*mut segrt::ffi::SegCallControl) -> R) -> R {
    use segrt::ffi::{seg_control_cancel, seg_control_create, seg_control_free, seg_control_set_progress};
    use std::sync::atomic::{AtomicUsize, Ordering};
    unsafe extern "C" fn countdown(_stage: i32, _fraction: f32, user_data: *mut std::ffi::c_void) -> i32 {
        let left = unsafe { &*(user_data as *const AtomicUsize) };
        (left.fetch_sub(1, Ordering::SeqCst) > 1) as i32
    }
    let Some(at) = at else { return call(std::ptr::null_mut()) };
    let mut control = std::ptr::null_mut();
    assert_eq!(unsafe { seg_control_create(&mut control) } as i32, 0, "seg_control_create");
    let left = AtomicUsize::new(at as usize);
    if at == 0 {
        unsafe { seg_control_cancel(control) };
    } else {
        let data = &left as *const AtomicUsize as *mut std::ffi::c_void;
        assert_eq!(unsafe { seg_control_set_progress(control, Some(countdown), data) } as i32, 0, "seg_control_set_progress");
    }
    let result = call(control);
    unsafe { seg_control_free(control) };
    result
}
