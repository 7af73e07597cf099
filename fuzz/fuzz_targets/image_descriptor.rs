//! Image descriptors + buffers into seg_run_unet: any width/height/stride/format/planes a host
//! might pass. The harness only hands segrt memory that covers what the descriptor claims (a
//! descriptor claiming more is the host's bug, not segrt's); everything else must come back as a
//! status, never a crash or an out-of-bounds read.
#![no_main]

#[path = "../harness/image_descriptor.rs"]
mod harness;
#[path = "../harness/paths.rs"]
mod paths;

libfuzzer_sys::fuzz_target!(|input: harness::Input| harness::run(input));
