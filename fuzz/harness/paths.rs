//! What the harnesses share: where they find the repository's models, whether built from fuzz/
//! (cargo fuzz) or from the repository root (tests/fuzz_smoke.rs), and a session handle they can keep
//! in a static. Not every target uses every item.
#![allow(dead_code)]
use std::ffi::CString;
use std::path::{Path, PathBuf};

use segrt::ffi::SegSession;

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
