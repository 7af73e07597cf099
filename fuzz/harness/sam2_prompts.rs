//! SAM2 prompts into seg_run_sam2_points: any number of points with any coordinates (NaN, infinity,
//! outside the image), any labels, boxes in any order, any flags, and output buffers of any size.
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
    points: Vec<(f32, f32, i32)>,
    null_points: bool,
    bbox: Option<(f32, f32, f32, f32)>,
    flags: u32,
    want_result: bool,
    all_masks_len: u16,
    low_res_len: u16,
    result_struct_size: u8,
    /// A caller-owned refinement input: its length (right or wrong) and the value it holds.
    mask_input: Option<(u16, f32)>,
    /// Cancel the call: before it starts (0) or at its n-th progress report.
    cancel_at: Option<u8>,
}

const W: usize = 96;
const H: usize = 64;

fn session() -> &'static Handle {
    static S: OnceLock<Handle> = OnceLock::new();
    S.get_or_init(|| crate::paths::sam2_session("sam2/sam2_tiny_samexporter_encoder.onnx", "sam2/sam2_tiny_samexporter_decoder.onnx", W, H))
}

pub fn run(input: Input) {
    let s = session();
    let points: Vec<SegPoint> = input.points.iter().take(64).map(|&(x, y, label)| SegPoint { x, y, label }).collect();
    let bbox = input.bbox.map(|(x1, y1, x2, y2)| SegBox { x1, y1, x2, y2 });
    let mut mask = vec![0u8; W * H];
    let out = SegMask { data: mask.as_mut_ptr(), width: W as i32, height: H as i32, stride: 0 };
    let mut all = vec![0u8; input.all_masks_len as usize];
    let mut low = vec![0f32; input.low_res_len as usize];
    // The result inside a larger zeroed buffer: struct_size may claim more than SegSam2Result, and
    // segrt reads a longer struct's tail (it must be zero), so the bytes it claims must exist.
    #[repr(C)]
    struct Padded {
        result: SegSam2Result,
        tail: [u8; 256],
    }
    let mut padded: Padded = unsafe { std::mem::zeroed() };
    let result = &mut padded.result;
    result.struct_size = input.result_struct_size as u32;
    if !all.is_empty() {
        result.all_masks = all.as_mut_ptr();
        result.all_masks_len = all.len();
    }
    if !low.is_empty() {
        result.low_res_logits = low.as_mut_ptr();
        result.low_res_len = low.len();
    }
    let mask_input: Vec<f32> = input.mask_input.map_or(Vec::new(), |(len, v)| vec![v; len as usize]);
    let (input_ptr, input_len) = if input.mask_input.is_some() { (mask_input.as_ptr(), mask_input.len()) } else { (ptr::null(), 0) };
    let mut score = 0f32;
    let pts = if input.null_points { ptr::null() } else { points.as_ptr() };
    let status = with_cancel_at(input.cancel_at, |control| unsafe {
        seg_run_sam2_points(
            s.0,
            ptr::null(),
            pts,
            points.len(),
            bbox.as_ref().map_or(ptr::null(), |b| b as *const SegBox),
            input_ptr,
            input_len,
            input.flags,
            &out,
            &mut score,
            if input.want_result { &mut *result } else { ptr::null_mut() },
            control,
        )
    });
    check(status, "seg_run_sam2_points");
}
