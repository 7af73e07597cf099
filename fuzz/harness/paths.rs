//! Where the harnesses find the repository's models, whether built from fuzz/ (cargo fuzz) or from
//! the repository root (tests/fuzz_smoke.rs). Not every target uses both helpers.
#![allow(dead_code)]
use std::ffi::CString;
use std::path::{Path, PathBuf};

pub fn model_path(relative: &str) -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = if here.join("models").is_dir() { here.to_path_buf() } else { here.join("..") };
    root.join("models").join(relative)
}

pub fn model_cstr(relative: &str) -> CString {
    CString::new(model_path(relative).to_str().expect("UTF-8 path")).expect("no NUL")
}
