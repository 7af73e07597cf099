//! Image descriptors + buffers into seg_run_unet: any width/height/stride/format/planes a host
//! might pass, with any pixel values (16-bit and float ones included: NaN, infinities, values above
//! the used bits) under any `SegIntensity` a host might set (`seg_set_intensity`: any size, range,
//! bits, rescale, window, percentiles and output range, sane windows often). The harness only hands
//! segrt memory that covers what the descriptor claims (a descriptor claiming more is the host's bug,
//! not segrt's); everything else must come back as a status, never a crash or an out-of-bounds read.
//!
//! Shared by the cargo-fuzz target (fuzz/fuzz_targets/) and the randomized smoke test in CI
//! (tests/fuzz_smoke.rs), which also replays fuzz/regressions/.
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// The intensity stage set before the run; None: back to segrt's default (NULL).
    pub intensity: Option<Intensity>,
    /// A small, sane shape instead of `width`/`height`/`stride`/`format` (columns, rows, stride kind),
    /// with a mask that fits. Random i32 sizes are nearly all refused before a pixel is read; this is
    /// how runs reach the pixel formats and the intensity stage.
    pub shape: Option<(u8, u8, u8)>,
    /// Bytes repeated over the pixel buffers (empty: `fill` everywhere), so 16-bit and float values vary.
    pub pattern: Vec<u8>,
}

/// Runs that got a mask from a 16-bit or float image (the smoke test reports it).
pub static WIDE_OK: AtomicUsize = AtomicUsize::new(0);

/// A `SegIntensity` as a host might fill it: every field free, plus a sane window often enough that
/// images get mapped rather than refused.
#[derive(Arbitrary, Debug)]
pub struct Intensity {
    /// `% 8`: 1: struct_size 0 (refused); 2: 8 bytes short; 3: 8 bytes longer with a tail of `tail` bytes
    /// (refused unless 0); else `sizeof(SegIntensity)`.
    pub size_kind: u8,
    pub tail: u8,
    pub bits: u8,
    pub range: i32,
    pub reserved: u32,
    pub slope: f64,
    pub intercept: f64,
    pub low: f64,
    pub high: f64,
    pub percentile_low: f64,
    pub percentile_high: f64,
    pub out_low: f64,
    pub out_high: f64,
    /// Keep segrt's defaults for the fields after `range` and set this window (low, width - 1).
    pub sane_window: Option<(i16, u16)>,
}

/// A SegIntensity followed by bytes a longer (newer) struct would carry.
#[repr(C)]
struct Longer {
    intensity: SegIntensity,
    tail: [u8; 8],
}

fn set_intensity(s: &Handle, i: Option<&Intensity>) {
    let Some(i) = i else {
        check(unsafe { seg_set_intensity(s.0, ptr::null()) }, "seg_set_intensity(NULL)");
        return;
    };
    let size = std::mem::size_of::<SegIntensity>() as u32;
    // SAFETY: all-zero is a valid SegIntensity (integers and floats).
    let mut l = Longer { intensity: unsafe { std::mem::zeroed() }, tail: [i.tail; 8] };
    l.intensity.struct_size = size;
    assert_eq!(unsafe { seg_intensity_default(&mut l.intensity) } as i32, 0);
    let v = &mut l.intensity;
    v.bits = u32::from(i.bits % 20);
    v.range = if i.range.unsigned_abs() < 8 { i.range } else { i.range % 4 };
    v.reserved = if i.reserved % 4 == 0 { i.reserved } else { 0 };
    if let Some((low, width)) = i.sane_window {
        v.range = 1; // SEG_INTENSITY_WINDOW
        v.low = f64::from(low);
        v.high = f64::from(low) + f64::from(width) + 1.0;
    } else {
        (v.slope, v.intercept, v.low, v.high) = (i.slope, i.intercept, i.low, i.high);
        (v.percentile_low, v.percentile_high, v.out_low, v.out_high) = (i.percentile_low, i.percentile_high, i.out_low, i.out_high);
    }
    v.struct_size = match i.size_kind % 8 {
        1 => 0,
        2 => size - 8,
        3 => size + 8,
        _ => size,
    };
    let status = check(unsafe { seg_set_intensity(s.0, &l.intensity) }, "seg_set_intensity");
    if status != SegStatus::SEG_OK {
        assert_eq!(status, SegStatus::SEG_INVALID_ARGUMENT, "a bad SegIntensity is an invalid argument");
    }
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

pub fn run(mut input: Input) {
    let s = session();
    if let Some((cols, rows, kind)) = input.shape {
        input.format = input.format.rem_euclid(15);
        input.width = 1 + i32::from(cols % 48);
        input.height = 1 + i32::from(rows % 48);
        // 0: packed; else a row plus `kind / 4` bytes (not always a whole number of values), negated
        // for a bottom-up buffer: set below, once the size of the format's values is known.
        input.stride = i32::from(kind);
        // A mask that fits, so the run gets as far as the pixels.
        (input.mask_width_delta, input.mask_stride) = (0, 0);
    }
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
    if let Some((_, _, kind)) = input.shape {
        let row = i64::from(input.width) * bpp;
        let stride = if kind % 4 == 0 { 0 } else { row + i64::from(kind / 4) };
        input.stride = (if kind % 2 == 1 && !matches!(input.format, 5 | 8 | 11 | 14) { -stride } else { stride }) as i32;
    }
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
    let buffers: Vec<Vec<u8>> = (0..planes)
        .map(|p| {
            let len = claimed.max(1) as usize;
            if input.pattern.is_empty() {
                vec![input.fill; len]
            } else {
                (0..len).map(|k| input.pattern[(k + p) % input.pattern.len()]).collect()
            }
        })
        .collect();
    set_intensity(s, input.intensity.as_ref());
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
    if status == SegStatus::SEG_OK && (6..=14).contains(&input.format) {
        WIDE_OK.fetch_add(1, Ordering::Relaxed);
    }
    if status == SegStatus::SEG_CANCELLED {
        assert!(mask.iter().all(|v| *v == 0x5A), "a cancelled seg_run_unet wrote into its mask");
    }
}
