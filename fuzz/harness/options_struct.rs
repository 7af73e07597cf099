//! Options structs into seg_create: every field arbitrary, including struct_size (older and newer
//! callers), enum values and NaN floats. The harness gives segrt a buffer larger than any
//! struct_size it claims up to, so segrt must never read past what it knows.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/) and the randomized smoke test in CI
//! (tests/fuzz_smoke.rs), which also replays fuzz/regressions/.
use std::ptr;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use segrt::ffi::*;

use crate::paths::check;

#[derive(Arbitrary, Debug)]
pub struct Input {
    struct_size: u32,
    provider: i32,
    device_id: i32,
    provider_policy: i32,
    intra_threads: u8,
    input_width: i16,
    input_height: i16,
    size_multiple: i32,
    resize_filter: i32,
    channel_order: i32,
    scale: f32,
    mean: [f32; 3],
    std: [f32; 3],
    sigmoid: i32,
    threshold_mode: i32,
    threshold: f32,
    min_area: u32,
    close_kernel: u32,
    fill_holes: u32,
    max_pixels: u64,
    tile_mode: i32,
    tile_width: i16,
    tile_height: i16,
    tile_overlap: i16,
    tile_batch: i32,
    run_after: bool,
}

fn model() -> &'static Vec<u8> {
    static M: OnceLock<Vec<u8>> = OnceLock::new();
    M.get_or_init(|| std::fs::read(crate::paths::model_path("test/unet_dynamic.onnx")).unwrap())
}

pub fn run(i: Input) {
    // A SegOptions inside a larger zeroed buffer: struct_size may claim more than SegOptions.
    #[repr(C)]
    struct Padded {
        options: SegOptions,
        tail: [u64; 64],
    }
    let mut p: Padded = unsafe { std::mem::zeroed() };
    let o = &mut p.options;
    o.struct_size = i.struct_size.min(std::mem::size_of::<Padded>() as u32);
    o.provider = i.provider;
    o.device_id = i.device_id;
    o.provider_policy = i.provider_policy;
    o.intra_threads = i.intra_threads as i32 % 4; // thread pools of hundreds of threads only slow the fuzzer
    o.input_width = i.input_width as i32 % 512;
    o.input_height = i.input_height as i32 % 512;
    o.size_multiple = i.size_multiple;
    o.resize_filter = i.resize_filter;
    o.channel_order = i.channel_order;
    o.scale = i.scale;
    o.mean = i.mean;
    o.std = i.std;
    o.sigmoid = i.sigmoid;
    o.threshold_mode = i.threshold_mode;
    o.threshold = i.threshold;
    o.min_area = i.min_area;
    o.close_kernel = i.close_kernel;
    o.fill_holes = i.fill_holes;
    o.max_pixels = i.max_pixels;
    o.ort_path = ptr::null();
    // Tiles are kept small so a run stays fast; any value may still be invalid.
    o.tile_mode = i.tile_mode;
    let tile = |v: i16| match v as i32 % 96 {
        n if n > 0 => n.max(16),
        n => n,
    };
    o.tile_width = tile(i.tile_width);
    o.tile_height = tile(i.tile_height);
    o.tile_overlap = i.tile_overlap as i32 % 64;
    // Up to 64 tiles per run is valid, and ONNX Runtime's activations for a batch that large reach
    // gigabytes (an input found 4.5 GB, past libFuzzer's 4 GB limit): valid batches stay small here,
    // invalid ones (<= 0, > 64) are kept to be refused.
    o.tile_batch = match i.tile_batch {
        b @ 9..=64 => b % 8 + 1,
        b => b,
    };
    let m = model();
    let mut s = ptr::null_mut();
    if check(unsafe { seg_create_from_memory(m.as_ptr(), m.len(), &p.options, &mut s) }, "seg_create_from_memory") != SegStatus::SEG_OK {
        return;
    }
    if i.run_after {
        let (w, h) = (40usize, 30usize);
        let pixels = vec![100u8; w * h * 3];
        let image = SegImage {
            data: pixels.as_ptr(),
            width: w as i32,
            height: h as i32,
            stride: 0,
            format: 1,
            plane1: ptr::null(),
            plane2: ptr::null(),
        };
        let mut mask = vec![0u8; w * h];
        let out = SegMask { data: mask.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
        check(unsafe { seg_run_unet(s, &image, &out, ptr::null_mut(), 0, ptr::null_mut(), ptr::null_mut()) }, "seg_run_unet");
    }
    check(unsafe { seg_free(s) }, "seg_free");
}
