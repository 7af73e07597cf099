//! Model bytes into seg_create_from_memory and seg_create_sam2_from_memory: truncated, corrupted
//! and mutated ONNX files (seed the corpus with models/). Failures must be statuses; a crash inside
//! ONNX Runtime's own parser would be reported upstream.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/) and the randomized smoke test in CI
//! (tests/fuzz_smoke.rs), which also replays fuzz/regressions/.
use std::ptr;

use segrt::ffi::*;

use crate::paths::check;

pub fn run(data: &[u8]) {
    let mut s = ptr::null_mut();
    let status = unsafe { seg_create_from_memory(data.as_ptr(), data.len(), ptr::null(), &mut s) };
    if check(status, "seg_create_from_memory") == SegStatus::SEG_OK {
        check(unsafe { seg_free(s) }, "seg_free");
    }
    // The same bytes as both halves of a SAM2 pair exercise the convention detection.
    let mut s = ptr::null_mut();
    let status = unsafe { seg_create_sam2_from_memory(data.as_ptr(), data.len(), data.as_ptr(), data.len(), ptr::null(), &mut s) };
    if check(status, "seg_create_sam2_from_memory") == SegStatus::SEG_OK {
        check(unsafe { seg_free(s) }, "seg_free");
    }
}
