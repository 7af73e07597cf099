//! Options structs into seg_create: every field arbitrary, including struct_size (older and newer
//! callers), enum values and NaN floats. The harness gives segrt a buffer larger than any
//! struct_size it claims up to, so segrt must never read past what it knows.
#![no_main]

#[path = "../harness/options_struct.rs"]
mod harness;
#[path = "../harness/paths.rs"]
mod paths;

libfuzzer_sys::fuzz_target!(|input: harness::Input| harness::run(input));
