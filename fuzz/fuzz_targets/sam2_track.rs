//! Sequences of SAM2 tracking calls on a fresh track (fuzz/harness/sam2_track.rs).
#![no_main]

#[path = "../harness/sam2_track.rs"]
mod harness;
#[path = "../harness/paths.rs"]
mod paths;

libfuzzer_sys::fuzz_target!(|input: harness::Input| harness::run(input));
