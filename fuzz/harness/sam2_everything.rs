//! Segment-everything options and output buffers into seg_sam2_everything: any option values (NaN,
//! infinities, negative or huge counts, any struct_size), label images of the wrong size or stride,
//! record buffers too small, and info structs of any size. Besides "no panic", it checks the ABI's
//! promise that a failed call writes nothing: the caller's label image and records keep their bytes.
//!
//! Runs on the geometric oracle pair (a disc at each prompt), whose decoder costs microseconds, and
//! keeps the grid small (points_per_side below 9) so an execution stays cheap.
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use segrt::ffi::*;

use crate::paths::{check, with_cancel_at, Handle};

/// The caller's label image.
#[derive(Arbitrary, Debug)]
enum Labels {
    None,
    Right,
    /// The right size with padded rows (stride = width + n).
    Padded(u8),
    WrongWidth(i8),
    WrongHeight(i8),
    /// A stride below the width (n + 1 values short).
    ShortStride(u8),
}

#[derive(Arbitrary, Debug)]
pub struct Input {
    /// Only the grid size changes: most such calls succeed and write results (or find the buffer
    /// too small), the path where "nothing written on failure" matters most.
    plain: bool,
    // Options: None keeps the default.
    null_options: bool,
    struct_size: Option<u8>,
    points_per_side: i8,
    points_per_batch: Option<i16>,
    pred_iou_thresh: Option<f32>,
    stability_score_thresh: Option<f32>,
    stability_score_offset: Option<f32>,
    mask_threshold: Option<f32>,
    box_nms_thresh: Option<f32>,
    min_mask_region_area: Option<i32>,
    crop_n_layers: Option<i32>,
    labels: Labels,
    objects_capacity: u8,
    null_objects: bool,
    want_count: bool,
    info_size: Option<u8>,
    /// Cancel the call: before it starts (0) or at its n-th progress report (prompt batches).
    cancel_at: Option<u8>,
}

const W: usize = 96;
const H: usize = 64;
const SENTINEL: u16 = 0xBEEF;

/// Calls that succeeded (and wrote results), for the smoke test's report.
pub static SUCCEEDED: AtomicUsize = AtomicUsize::new(0);

fn session() -> &'static Handle {
    static S: OnceLock<Handle> = OnceLock::new();
    S.get_or_init(|| crate::paths::sam2_session("sam2/sam2_oracle_encoder.onnx", "sam2/sam2_oracle_decoder.onnx", W, H))
}

pub fn run(input: Input) {
    let s = session();
    // The options inside a larger zeroed buffer: struct_size may claim more than the struct, and
    // segrt reads a longer struct's tail (it must be zero), so the bytes it claims must exist.
    #[repr(C)]
    struct Padded {
        options: SegEverythingOptions,
        tail: [u8; 256],
    }
    let mut padded: Padded = unsafe { std::mem::zeroed() };
    let options = &mut padded.options;
    options.struct_size = std::mem::size_of::<SegEverythingOptions>() as u32;
    assert_eq!(unsafe { seg_everything_options_default(&mut *options) } as i32, 0);
    // The oracle draws discs of radius 10, 20 and 30 low-res pixels, predicted IoU 0.5/0.9/0.7; on this
    // small image the r=20 disc (about 7.5 px) has a stability score of about 0.58, far below the
    // default 0.95: at 0.5 it is found, so calls that keep the other defaults write objects.
    options.stability_score_thresh = 0.5;
    options.points_per_side = (input.points_per_side as i32).rem_euclid(9) - (input.points_per_side < -100) as i32;
    if !input.plain {
        options.struct_size = input.struct_size.map_or(options.struct_size, u32::from);
        options.points_per_batch = input.points_per_batch.map_or(options.points_per_batch, i32::from);
        options.pred_iou_thresh = input.pred_iou_thresh.unwrap_or(options.pred_iou_thresh);
        options.stability_score_thresh = input.stability_score_thresh.unwrap_or(options.stability_score_thresh);
        options.stability_score_offset = input.stability_score_offset.unwrap_or(options.stability_score_offset);
        options.mask_threshold = input.mask_threshold.unwrap_or(options.mask_threshold);
        options.box_nms_thresh = input.box_nms_thresh.unwrap_or(options.box_nms_thresh);
        options.min_mask_region_area = input.min_mask_region_area.unwrap_or(options.min_mask_region_area);
        options.crop_n_layers = input.crop_n_layers.unwrap_or(options.crop_n_layers);
    }

    // A label buffer large enough for any stride tried, so a wrong size is refused, never overrun.
    let mut labels = vec![SENTINEL; (W + 64) * (H + 64)];
    let shape = |width: i32, height: i32, stride: i32| Some(SegLabelImage { data: ptr::null_mut(), width, height, stride });
    let (w, h) = (W as i32, H as i32);
    let label_image = match input.labels {
        Labels::None => None,
        Labels::Right => shape(w, h, 0),
        Labels::Padded(n) => shape(w, h, w + (n % 64) as i32),
        Labels::WrongWidth(d) => shape(w + if d == 0 { 1 } else { (d % 4) as i32 }, h, 0),
        Labels::WrongHeight(d) => shape(w, h + if d == 0 { 1 } else { (d % 4) as i32 }, 0),
        Labels::ShortStride(n) => shape(w, h, w - 1 - (n % 8) as i32),
    }
    .map(|l| SegLabelImage { data: labels.as_mut_ptr(), ..l });
    let sentinel_object = SegEverythingObject { id: 0xDEAD, ..Default::default() };
    // Small capacities: a grid of at most 8x8 prompts finds a few dozen objects at most.
    let mut objects = vec![sentinel_object; input.objects_capacity as usize % 24];
    let mut count = usize::MAX;
    let mut info_bytes = vec![0u8; 256]; // every size a u8 can claim: segrt reads a longer struct's tail
    if let Some(size) = input.info_size {
        info_bytes[..4].copy_from_slice(&(size as u32).to_ne_bytes());
    }
    let status = with_cancel_at(input.cancel_at, |control| unsafe {
        seg_sam2_everything(
            s.0,
            ptr::null(),
            if input.null_options { ptr::null() } else { &*options },
            label_image.as_ref().map_or(ptr::null(), |l| l as *const SegLabelImage),
            if input.null_objects { ptr::null_mut() } else { objects.as_mut_ptr() },
            std::mem::size_of::<SegEverythingObject>(),
            if input.null_objects { 0 } else { objects.len() },
            if input.want_count { &mut count } else { ptr::null_mut() },
            if input.info_size.is_some() { info_bytes.as_mut_ptr().cast::<SegEverythingInfo>() } else { ptr::null_mut() },
            control,
        )
    });
    check(status, "seg_sam2_everything");
    if status == SegStatus::SEG_OK {
        SUCCEEDED.fetch_add(1, Ordering::Relaxed);
    }
    if status != SegStatus::SEG_OK {
        assert!(labels.iter().all(|&v| v == SENTINEL), "a failed seg_sam2_everything ({status:?}) wrote into the label image");
        assert!(objects.iter().all(|o| o.id == 0xDEAD), "a failed seg_sam2_everything ({status:?}) wrote records");
    }
}
