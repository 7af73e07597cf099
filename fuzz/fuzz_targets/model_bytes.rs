//! Model bytes into seg_create_from_memory and seg_create_sam2_from_memory: truncated, corrupted
//! and mutated ONNX files (seed the corpus with models/). Failures must be statuses; a crash inside
//! ONNX Runtime's own parser would be reported upstream.
#![no_main]

#[path = "../harness/model_bytes.rs"]
mod harness;
#[path = "../harness/paths.rs"]
mod paths;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::run(data));
