//! Segment-everything options and output buffers into seg_sam2_everything (fuzz/harness/sam2_everything.rs).
#![no_main]

#[path = "../harness/sam2_everything.rs"]
mod harness;
#[path = "../harness/paths.rs"]
mod paths;

libfuzzer_sys::fuzz_target!(|input: harness::Input| harness::run(input));
