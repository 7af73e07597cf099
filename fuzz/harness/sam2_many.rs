//! Many prompts into seg_sam2_segment_prompts: any number of prompts (0 to beyond the limit), each
//! with any points (NaN, infinity, outside the image, any labels, a NULL array), any box and any
//! has_box/reserved values, any record size, masks of any size, a NULL mask array, any info size,
//! on a batched decoder; cancelled at any progress report. Whatever is refused, nothing may panic.
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
pub struct OnePrompt {
    points: Vec<(f32, f32, i32)>,
    null_points: bool,
    bbox: (f32, f32, f32, f32),
    has_box: u32,
    reserved: u32,
}

#[derive(Arbitrary, Debug)]
pub struct Input {
    prompts: Vec<OnePrompt>,
    /// Claimed prompts beyond those given (0 mostly; a large claim must be refused before reading).
    extra_count: u8,
    huge_count: bool,
    /// Added to sizeof(SegSam2Prompt) (the record buffer holds 64 spare zero bytes per record), or,
    /// when `shrink`, taken from it.
    record_delta: u8,
    shrink: bool,
    /// Mask size: the image's, or off by these.
    mask_dw: i8,
    mask_dh: i8,
    null_masks: bool,
    want_scores: bool,
    info_struct_size: u8,
    cancel_at: Option<u8>,
}

const W: usize = 96;
const H: usize = 64;

/// Calls that returned SEG_OK (the smoke test reports it: the harness must reach the models).
pub static SUCCEEDED: AtomicUsize = AtomicUsize::new(0);

fn session() -> &'static Handle {
    static S: OnceLock<Handle> = OnceLock::new();
    S.get_or_init(|| {
        crate::paths::sam2_session("sam2/sam2_tiny_sam2onnx_encoder.onnx", "sam2/sam2_tiny_sam2onnx_batched_decoder.onnx", W, H)
    })
}

pub fn run(input: Input) {
    let s = session();
    let given: Vec<&OnePrompt> = input.prompts.iter().take(32).collect();
    let points: Vec<Vec<SegPoint>> =
        given.iter().map(|p| p.points.iter().take(16).map(|&(x, y, label)| SegPoint { x, y, label }).collect()).collect();
    let ours = std::mem::size_of::<SegSam2Prompt>();
    let delta = input.record_delta as usize % 65;
    let record = if input.shrink { ours.saturating_sub(delta) } else { ours + delta };
    let stride = record.max(1);
    // Records at the caller's stride, 8-byte aligned, zero beyond each record's known bytes.
    let mut bytes = vec![0u64; (given.len() * (stride + 64)).div_ceil(8) + 16];
    for (k, p) in given.iter().enumerate() {
        if record < ours {
            break;
        }
        let r = SegSam2Prompt {
            points: if p.null_points || points[k].is_empty() { ptr::null() } else { points[k].as_ptr() },
            n_points: points[k].len(),
            bbox: SegBox { x1: p.bbox.0, y1: p.bbox.1, x2: p.bbox.2, y2: p.bbox.3 },
            has_box: p.has_box % 3,
            reserved: if p.reserved % 8 == 0 { p.reserved } else { 0 },
        };
        unsafe { ptr::write_unaligned(bytes.as_mut_ptr().cast::<u8>().add(k * stride).cast::<SegSam2Prompt>(), r) };
    }
    // Only counts the buffers cover, unless the claim is one segrt must refuse before reading
    // (beyond 4096 prompts, or beyond the address space).
    let count = if input.huge_count {
        (usize::MAX / stride).saturating_add(1)
    } else {
        (given.len() + input.extra_count as usize % 2).min(bytes.len() * 8 / stride.max(1))
    };
    let (mw, mh) = ((W as i32 + input.mask_dw as i32 % 3).max(1), (H as i32 + input.mask_dh as i32 % 3).max(1));
    let mut buffers: Vec<Vec<u8>> = (0..count.min(64)).map(|_| vec![0u8; (mw * mh) as usize]).collect();
    let masks: Vec<SegMask> = buffers.iter_mut().map(|b| SegMask { data: b.as_mut_ptr(), width: mw, height: mh, stride: 0 }).collect();
    if count > masks.len() && !input.huge_count {
        return; // the harness has no masks for that many prompts
    }
    let mut scores = vec![0f32; count.min(64)];
    #[repr(C)]
    struct Padded {
        info: SegSam2PromptsInfo,
        tail: [u8; 256],
    }
    let mut padded: Padded = unsafe { std::mem::zeroed() };
    padded.info.struct_size = input.info_struct_size as u32;
    let info = if input.info_struct_size == 0 { ptr::null_mut() } else { &mut padded.info as *mut SegSam2PromptsInfo };
    let status = with_cancel_at(input.cancel_at, |control| unsafe {
        seg_sam2_segment_prompts(
            s.0,
            ptr::null(),
            bytes.as_ptr().cast(),
            record,
            count,
            if input.null_masks { ptr::null() } else { masks.as_ptr() },
            if input.want_scores { scores.as_mut_ptr() } else { ptr::null_mut() },
            info,
            control,
        )
    });
    if check(status, "seg_sam2_segment_prompts") == SegStatus::SEG_OK {
        SUCCEEDED.fetch_add(1, Ordering::Relaxed);
    }
}
