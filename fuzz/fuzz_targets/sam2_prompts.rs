//! SAM2 prompts into seg_run_sam2_points: any number of points with any coordinates (NaN, infinity,
//! outside the image), any labels, boxes in any order, any flags, and output buffers of any size.
#![no_main]

#[path = "../harness/sam2_prompts.rs"]
mod harness;
#[path = "../harness/paths.rs"]
mod paths;

libfuzzer_sys::fuzz_target!(|input: harness::Input| harness::run(input));
