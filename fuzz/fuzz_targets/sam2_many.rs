//! Many prompts into seg_sam2_segment_prompts: any prompts, record sizes, counts, masks and info
//! sizes (see fuzz/harness/sam2_many.rs).
#![no_main]

#[path = "../harness/sam2_many.rs"]
mod harness;
#[path = "../harness/paths.rs"]
mod paths;

libfuzzer_sys::fuzz_target!(|input: harness::Input| harness::run(input));
