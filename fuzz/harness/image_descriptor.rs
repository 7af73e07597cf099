//! Image descriptors + buffers into seg_run_unet: any width/height/stride/format/planes a host
//! might pass. The harness only hands segrt memory that covers what the descriptor claims (a
//! descriptor claiming more is the host's bug, not segrt's); everything else must come back as a
//! status, never a crash or an out-of-bounds read.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/) and the randomized smoke test in CI
//! (tests/fuzz_smoke.rs), which also replays fuzz/regressions/.
use std::ptr;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use segrt::ffi::*;

use crate::paths::{check, with_cancel_at, Handle};

#[derive(Arbitrary, Debug)]
pub struct Input {
    pub width: i32,
    pub height: i32,
    pub stride: i32,
    pub format: i32,
    pub planar: bool,
    pub mask_width_delta: i8,
    pub mask_stride: i16,
    pub want_probability: bool,
    pub fill: u8,
    /// Cancel the run: before it starts (0) or at its n-th progress report.
    pub cancel_at: Option<u8>,
}

/// Bigger images are refused by the session's pixel limit before any pixel is read.
const MAX_PIXELS: u64 = 1 << 14;
/// Spans the harness is willing to allocate (a short, wide-stride image can span a lot).
const MAX_SPAN: i64 = 8 << 20;

fn session() -> &'static Handle {
    static S: OnceLock<Handle> = OnceLock::new();
    S.get_or_init(|| {
        // SAFETY: all-zero is a valid SegOptions (integers, floats, nullable pointers).
        let mut o: SegOptions = unsafe { std::mem::zeroed() };
        o.struct_size = std::mem::size_of::<SegOptions>() as u32;
        assert_eq!(unsafe { seg_options_default(&mut o) } as i32, 0);
        o.max_pixels = MAX_PIXELS;
        o.intra_threads = 1;
        // Dynamic axes run at 32x32 whatever the image size: fast executions.
        (o.input_width, o.input_height) = (32, 32);
        let path = crate::paths::model_cstr("test/unet_dynamic.onnx");
        let mut s = ptr::null_mut();
        assert_eq!(unsafe { seg_create(path.as_ptr(), &o, &mut s) } as i32, 0, "fuzz session");
        Handle(s)
    })
}

pub fn run(input: Input) {
    let s = session();
    // Bytes per pixel of each format (of one plane for the planar ones: 5, 8, 11, 14).
    let bpp: i64 = match input.format {
        0 | 5 => 1,
        1 | 3 => 3,
        2 | 4 => 4,
        6 | 8 | 9 | 11 => 2,
        7 | 10 => 6,
        12 | 14 => 4,
        13 => 12,
        _ => 12, // unknown formats: segrt must refuse them before reading
    };
    let (w, h) = (input.width as i64, input.height as i64);
    // The memory this descriptor claims, if it is a sane one.
    let row = w.max(0) * bpp;
    let abs_stride = if input.stride == 0 { row } else { (input.stride as i64).abs() };
    let claimed = if w > 0 && h > 0 && w * h <= MAX_PIXELS as i64 && abs_stride >= row {
        (h - 1) * abs_stride + row
    } else {
        0 // segrt must reject it (size, limit or stride) without reading
    };
    if claimed > MAX_SPAN {
        return;
    }
    let planes = if input.planar || matches!(input.format, 5 | 8 | 11 | 14) { 3 } else { 1 };
    let buffers: Vec<Vec<u8>> = (0..planes).map(|_| vec![input.fill; claimed.max(1) as usize]).collect();
    // A negative stride means the top row is the last in memory.
    let top = |b: &Vec<u8>| unsafe { b.as_ptr().add(if input.stride < 0 && claimed > 0 { (claimed - row) as usize } else { 0 }) };
    let image = SegImage {
        data: top(&buffers[0]),
        width: input.width,
        height: input.height,
        stride: input.stride,
        format: input.format,
        plane1: if planes == 3 { top(&buffers[1]) } else { ptr::null() },
        plane2: if planes == 3 { top(&buffers[2]) } else { ptr::null() },
    };
    // The mask: right-sized or off by a little; a stride that may be wrong.
    let mw = (w + input.mask_width_delta as i64).clamp(0, 1 << 14);
    let mh = h.clamp(0, 1 << 14);
    let ms = input.mask_stride as i64;
    let mask_len = (mh.max(1) * mw.max(ms).max(1)) as usize;
    let mut mask = vec![0x5Au8; mask_len];
    let out = SegMask { data: mask.as_mut_ptr(), width: mw as i32, height: mh as i32, stride: ms as i32 };
    let mut prob = if input.want_probability { vec![0f32; (w.max(0) * h.max(0)).min(MAX_PIXELS as i64) as usize] } else { Vec::new() };
    let prob_ptr = if input.want_probability { prob.as_mut_ptr() } else { ptr::null_mut() };
    let status = with_cancel_at(input.cancel_at, |control| unsafe {
        seg_run_unet(s.0, &image, &out, prob_ptr, prob.len(), ptr::null_mut(), control)
    });
    check(status, "seg_run_unet");
    if status == SegStatus::SEG_CANCELLED {
        assert!(mask.iter().all(|v| *v == 0x5A), "a cancelled seg_run_unet wrote into its mask");
    }
}
