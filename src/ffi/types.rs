//! `#[repr(C)]` types of the C ABI and their conversion into the library's own types.
//! No `bool` inside structs (it breaks .NET Framework marshalling): flags are `u32`.

use std::ffi::{c_char, CStr};
use std::path::PathBuf;

use crate::error::{Error, Result};

use super::versioned::{read_versioned, Versioned};
use crate::image::{check_size, plane_span, ImageView, MaskMut, PixelFormat};
use crate::options::{CacheMode, ChannelOrder, Options, Provider, ProviderPolicy, ResizeFilter, Sigmoid, ThresholdMode, TileMode};

use super::enums::{
    SegCacheMode, SegChannelOrder, SegProvider, SegProviderPolicy, SegResizeFilter, SegSigmoid, SegThresholdMode, SegTileMode,
};

/// A UTF-8 C string argument as a path.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
pub(crate) unsafe fn utf8_path(p: *const c_char, what: &str) -> Result<PathBuf> {
    utf8_str(p, what).map(PathBuf::from)
}

/// A UTF-8 C string argument.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
pub(crate) unsafe fn utf8_str(p: *const c_char, what: &str) -> Result<String> {
    if p.is_null() {
        return Err(Error::null(what));
    }
    let s = CStr::from_ptr(p)
        .to_str()
        .map_err(|_| Error::invalid(format!("{what} is not valid UTF-8 (segrt takes UTF-8 strings and paths on every platform)")))?;
    if s.is_empty() {
        return Err(Error::invalid(format!("{what} is empty")));
    }
    Ok(s.to_string())
}

/// Default limit on the pixels of one image (`SegOptions::max_pixels`): refuses absurd sizes
/// before anything is allocated.
pub const SEG_DEFAULT_MAX_PIXELS: u64 = 100_000_000;

/// An opaque session handle. Create with `seg_create*`, release with `seg_free`.
pub struct SegSession {
    _private: [u8; 0],
}

/// Session options. Declare the size, then take the defaults:
/// `SegOptions o = { .struct_size = sizeof o }; seg_options_default(&o);` (see "Versioned structs" in the docs).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegOptions {
    /// `sizeof(SegOptions)` as the caller was compiled with.
    pub struct_size: u32,
    /// A `SegProvider` value (default CPU).
    pub provider: i32,
    /// GPU index for GPU providers (default 0).
    pub device_id: i32,
    /// A `SegProviderPolicy` value (default REQUIRE: fail rather than silently run on the CPU).
    pub provider_policy: i32,
    /// ONNX Runtime intra-op threads: 0 (default) = the process-wide ONNX Runtime thread pool shared
    /// by every session (a thread per physical core); N = a pool of N threads of each session's own.
    /// At most 4 x the machine's logical cores.
    pub intra_threads: i32,
    /// Model input width/height for models with dynamic axes; 0 = the image size rounded to `size_multiple`.
    pub input_width: i32,
    pub input_height: i32,
    /// Dynamic axes are rounded to a multiple of this (default 32).
    pub size_multiple: i32,
    /// A `SegResizeFilter` value (default BILINEAR).
    pub resize_filter: i32,
    /// A `SegChannelOrder` value for 3-channel models (default RGB).
    pub channel_order: i32,
    /// Input normalisation: `(pixel * scale - mean[c]) / std[c]` (defaults 1/255, 0, 1). Left at
    /// all three defaults, a normalisation the model's metadata states is used instead; see
    /// `seg_session_info` "normalisation".
    pub scale: f32,
    pub mean: [f32; 3],
    pub std: [f32; 3],
    /// A `SegSigmoid` value (default AUTO).
    pub sigmoid: i32,
    /// A `SegThresholdMode` value (default FIXED).
    pub threshold_mode: i32,
    /// Threshold for FIXED mode, in [0, 1] (default 0.5).
    pub threshold: f32,
    /// Remove foreground regions smaller than this many pixels (0 = off).
    pub min_area: u32,
    /// Morphological closing with a k x k square (0 = off).
    pub close_kernel: u32,
    /// Non-zero: fill holes inside foreground regions.
    pub fill_holes: u32,
    /// Must be 0 (explicit padding: segrt never copies undefined bytes into a caller's struct).
    pub reserved0: u32,
    /// Refuse images with more pixels than this (default 100 000 000).
    pub max_pixels: u64,
    /// Absolute UTF-8 path of the ONNX Runtime library, or NULL for the default search.
    /// Only read during `seg_create*`.
    pub ort_path: *const c_char,
    /// A `SegTileMode` value (default OFF: the whole image is resized to the model's input size).
    pub tile_mode: i32,
    /// Tile size in image pixels for models with dynamic height/width; 0 = `input_width/height`
    /// when set, else 512. A model's fixed input size always wins.
    pub tile_width: i32,
    pub tile_height: i32,
    /// Pixels shared by neighbouring tiles, where their scores are blended (default 64).
    pub tile_overlap: i32,
    /// Tiles per ONNX Runtime run when the model's batch axis is dynamic (default 4; 1..=64).
    pub tile_batch: i32,
    /// Most ONNX Runtime sessions the handle keeps for concurrent calls; calls beyond wait their
    /// turn in order. 0 (default) = one per physical core. See `seg_session_info` "pool".
    pub max_sessions: i32,
    /// Model files and in-memory models larger than this are refused before they are read
    /// (`SEG_MODEL_INVALID`); 0 = default 2 GiB (ONNX's protobuf limit).
    pub max_model_bytes: u64,
    /// Memory budget of one call's own buffers (input tensors, score maps, tiles); a call that would
    /// need more is refused with `SEG_OUT_OF_MEMORY` before anything is allocated. 0 = default 8 GiB.
    pub max_memory_bytes: u64,
    /// UTF-8 name of the UNet output to read when the model has several, or NULL for the only
    /// segmentation map (a float output with the input's spatial size). Only read during `seg_create*`.
    pub output_name: *const c_char,
    /// A `SegCacheMode` value (default OFF): cache ONNX Runtime's optimised model so later starts
    /// skip its graph optimiser. Only read during `seg_create*`.
    pub cache_mode: i32,
    /// Must be 0 (explicit padding).
    pub reserved1: u32,
    /// UTF-8 folder of the cache for `SEG_CACHE_DIR` (created if missing); must be NULL otherwise.
    /// Only read during `seg_create*`.
    pub cache_dir: *const c_char,
}

/// A borrowed image. The pixels are only read, and only during the call.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegImage {
    /// First byte of row 0 (the top row). For PLANAR_RGB8: the R plane.
    pub data: *const u8,
    pub width: i32,
    pub height: i32,
    /// Bytes from the start of one row to the next; 0 = tightly packed. Negative for bottom-up
    /// buffers (then `data` still points at the top row). For PLANAR_RGB8: the stride of each plane.
    pub stride: i32,
    /// A `SegPixelFormat` value.
    pub format: i32,
    /// PLANAR_RGB8 only: the G and B planes (NULL otherwise).
    pub plane1: *const u8,
    pub plane2: *const u8,
}

/// A caller-owned 8-bit output mask; it must have the input image's width and height.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegMask {
    pub data: *mut u8,
    pub width: i32,
    pub height: i32,
    /// Bytes per row; 0 = `width`.
    pub stride: i32,
}

/// What one run measured. Set `struct_size = sizeof(SegRunInfo)`; segrt writes no more than that.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegRunInfo {
    pub struct_size: u32,
    /// 1 for binary models (mask 0/255), else the number of classes (mask = class index).
    pub num_classes: i32,
    /// Size the model ran at.
    pub model_width: i32,
    pub model_height: i32,
    pub preprocess_ms: f64,
    pub inference_ms: f64,
    pub postprocess_ms: f64,
    /// Threshold applied (Otsu's value in OTSU mode); NaN for multi-class models.
    pub threshold: f32,
    /// Tiles the image was cut into (0: not tiled, the whole image was resized).
    pub tiles: u32,
    /// Pixels of the mask that are not 0.
    pub foreground_pixels: u64,
}

// SAFETY (each impl): repr(C) structs whose first field is the caller's `u32` struct_size; one
// published layout each (ABI 1).
unsafe impl Versioned for SegOptions {
    const NAME: &'static str = "SegOptions";
}
unsafe impl Versioned for SegRunInfo {
    const NAME: &'static str = "SegRunInfo";
}

impl SegOptions {
    pub fn defaults() -> Self {
        let o = Options::default();
        SegOptions {
            struct_size: std::mem::size_of::<SegOptions>() as u32,
            provider: SegProvider::from(o.provider) as i32,
            device_id: o.device_id,
            provider_policy: SegProviderPolicy::from(o.provider_policy) as i32,
            intra_threads: o.intra_threads as i32,
            input_width: 0,
            input_height: 0,
            size_multiple: o.size_multiple as i32,
            resize_filter: SegResizeFilter::from(o.resize_filter) as i32,
            channel_order: SegChannelOrder::from(o.channel_order) as i32,
            scale: o.scale,
            mean: o.mean,
            std: o.std,
            sigmoid: SegSigmoid::from(o.sigmoid) as i32,
            threshold_mode: SegThresholdMode::from(o.threshold_mode) as i32,
            threshold: o.threshold,
            min_area: o.min_area as u32,
            close_kernel: o.close_kernel as u32,
            fill_holes: o.fill_holes as u32,
            reserved0: 0,
            max_pixels: o.max_pixels,
            ort_path: std::ptr::null(),
            tile_mode: SegTileMode::from(o.tile_mode) as i32,
            tile_width: 0,
            tile_height: 0,
            tile_overlap: o.tile_overlap as i32,
            tile_batch: o.tile_batch as i32,
            max_sessions: 0,
            max_model_bytes: 0,
            max_memory_bytes: 0,
            output_name: std::ptr::null(),
            cache_mode: SegCacheMode::SEG_CACHE_OFF as i32,
            reserved1: 0,
            cache_dir: std::ptr::null(),
        }
    }

    /// Reads a caller's options (NULL = defaults), honouring `struct_size`.
    ///
    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegOptions) -> Result<Options> {
        if p.is_null() {
            return Ok(Options::default());
        }
        read_versioned(p, SegOptions::defaults())?.options()
    }

    fn options(&self) -> Result<Options> {
        let defaults = Options::default();
        if self.reserved0 != 0 || self.reserved1 != 0 {
            return Err(Error::invalid(
                "SegOptions.reserved0/reserved1 are not 0: the host sets a field this segrt does not have; ship the segrt library of the host's release",
            ));
        }
        let non_negative = |v: i32, what: &str| -> Result<usize> {
            usize::try_from(v).map_err(|_| Error::invalid(format!("SegOptions.{what} is {v}, it must not be negative")))
        };
        let input_size = match (self.input_width, self.input_height) {
            (0, 0) => None,
            (w, h) => Some((non_negative(w, "input_width")?, non_negative(h, "input_height")?)),
        };
        let tile_size = match (self.tile_width, self.tile_height) {
            (0, 0) => None,
            (w, h) => Some((non_negative(w, "tile_width")?, non_negative(h, "tile_height")?)),
        };
        let options = Options {
            ort_path: if self.ort_path.is_null() { None } else { Some(unsafe { utf8_path(self.ort_path, "SegOptions.ort_path")? }) },
            provider: Provider::try_from(self.provider)?,
            device_id: self.device_id,
            provider_policy: ProviderPolicy::try_from(self.provider_policy)?,
            intra_threads: non_negative(self.intra_threads, "intra_threads")?,
            input_size,
            size_multiple: non_negative(self.size_multiple, "size_multiple")?,
            resize_filter: ResizeFilter::try_from(self.resize_filter)?,
            channel_order: ChannelOrder::try_from(self.channel_order)?,
            scale: self.scale,
            mean: self.mean,
            std: self.std,
            // C hosts cannot mark the defaults as their choice: left at the defaults, a
            // normalisation in the model's metadata applies (see `unet::normalisation`).
            explicit_normalisation: false,
            sigmoid: Sigmoid::try_from(self.sigmoid)?,
            threshold_mode: ThresholdMode::try_from(self.threshold_mode)?,
            threshold: self.threshold,
            min_area: self.min_area as usize,
            close_kernel: self.close_kernel as usize,
            fill_holes: self.fill_holes != 0,
            max_pixels: self.max_pixels,
            tile_mode: TileMode::try_from(self.tile_mode)?,
            tile_size,
            tile_overlap: non_negative(self.tile_overlap, "tile_overlap")?,
            tile_batch: non_negative(self.tile_batch, "tile_batch")?,
            max_sessions: non_negative(self.max_sessions, "max_sessions")?,
            max_model_bytes: if self.max_model_bytes == 0 { defaults.max_model_bytes } else { self.max_model_bytes },
            max_memory_bytes: if self.max_memory_bytes == 0 { defaults.max_memory_bytes } else { self.max_memory_bytes },
            output_name: if self.output_name.is_null() {
                None
            } else {
                Some(unsafe { utf8_str(self.output_name, "SegOptions.output_name")? })
            },
            cache: self.cache()?,
        };
        // Messages name the C fields: the library's own validation speaks of options.
        options.validate().map_err(|e| e.context("SegOptions"))?;
        Ok(options)
    }
}

impl SegOptions {
    fn cache(&self) -> Result<CacheMode> {
        let mode = SegCacheMode::from_c(self.cache_mode).map_err(|e| e.context("SegOptions.cache_mode"))?;
        match mode {
            SegCacheMode::SEG_CACHE_DIR => {
                if self.cache_dir.is_null() {
                    return Err(Error::invalid("SegOptions.cache_mode is SEG_CACHE_DIR but SegOptions.cache_dir is NULL: give the cache folder"));
                }
                Ok(CacheMode::Dir(unsafe { utf8_path(self.cache_dir, "SegOptions.cache_dir")? }))
            }
            _ if !self.cache_dir.is_null() => Err(Error::invalid(
                "SegOptions.cache_dir is set but SegOptions.cache_mode is not SEG_CACHE_DIR: set cache_mode = SEG_CACHE_DIR to use that folder",
            )),
            SegCacheMode::SEG_CACHE_OFF => Ok(CacheMode::Off),
            SegCacheMode::SEG_CACHE_BESIDE_MODEL => Ok(CacheMode::BesideModel),
        }
    }
}

impl SegImage {
    /// Validates the descriptor (sizes, limit, stride, format, pointers) before any pixel is read.
    ///
    /// # Safety
    /// The pointers must cover the rows the descriptor describes, for the lifetime `'a`.
    pub(crate) unsafe fn view<'a>(&self, max_pixels: u64) -> Result<ImageView<'a>> {
        let (w, h) = check_size(self.width as i64, self.height as i64, max_pixels)?;
        let format = PixelFormat::try_from(self.format)?;
        let stride = if self.stride == 0 { (w * format.bytes_per_pixel()) as isize } else { self.stride as isize };
        let (lowest, span) = plane_span(w, h, format.bytes_per_pixel(), stride)?;
        let plane = |p: *const u8, what: &str| -> Result<&'a [u8]> {
            if p.is_null() {
                return Err(Error::null(what));
            }
            Ok(std::slice::from_raw_parts(p.offset(lowest), span))
        };
        if format.is_planar() {
            ImageView::planar(
                plane(self.data, "image data (R plane)")?,
                plane(self.plane1, "image plane1 (G plane)")?,
                plane(self.plane2, "image plane2 (B plane)")?,
                w,
                h,
                stride,
            )
        } else {
            ImageView::new(plane(self.data, "image data")?, w, h, stride, format)
        }
    }
}

impl SegMask {
    /// The caller's mask buffer as described (its size is checked against the image by the pipeline).
    ///
    /// # Safety
    /// `data` must point to `height` rows of `stride` writable bytes.
    pub(crate) unsafe fn target<'a>(&self) -> Result<MaskMut<'a>> {
        if self.data.is_null() {
            return Err(Error::null("mask data"));
        }
        let (w, h) = check_size(self.width as i64, self.height as i64, u64::MAX).map_err(|e| e.context("mask"))?;
        let stride = if self.stride == 0 { w } else { usize::try_from(self.stride).unwrap_or(0) };
        if stride < w {
            return Err(Error::invalid(format!("mask stride {} is smaller than its width {w}", self.stride)));
        }
        let len = stride
            .checked_mul(h - 1)
            .and_then(|v| v.checked_add(w))
            .filter(|v| *v <= isize::MAX as usize)
            .ok_or_else(|| Error::invalid("mask stride x height overflows the address space"))?;
        MaskMut::new(std::slice::from_raw_parts_mut(self.data, len), w, h, stride)
    }
}

/// A click in original image pixels. `label`: 1 = foreground (include), 0 = background (exclude).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegPoint {
    pub x: f32,
    pub y: f32,
    pub label: i32,
}

/// A box in original image pixels: top-left (x1, y1), bottom-right (x2, y2).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegBox {
    pub x1: f32,
    pub y1: f32,
    pub x2: f32,
    pub y2: f32,
}

/// `seg_run_sam2_points` flag: feed the session's previous chosen low-res logits back as the mask
/// input (refinement, as the reference predictor does). Ignored when the image changed or when the
/// call passes its own `mask_input`.
pub const SEG_SAM2_REFINE: u32 = 1;

/// Optional extra results of `seg_run_sam2_points`. Set `struct_size = sizeof(SegSam2Result)` and,
/// to receive them, the optional buffers (caller-owned; NULL = not wanted).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegSam2Result {
    pub struct_size: u32,
    /// Index of the chosen mask among the decoder's outputs (highest predicted IoU).
    pub chosen_index: i32,
    /// Masks the decoder returned (1, 3 or 4).
    pub num_masks: i32,
    /// Non-zero when the cached image embedding was reused (no encoder run).
    pub encoder_reused: u32,
    /// Predicted IoU of each mask (first `num_masks` valid).
    pub scores: [f32; 4],
    /// Pre-processing + encoder run (0 when the cached embedding was reused).
    pub encoder_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
    /// In: optional buffer of `all_masks_len` bytes receiving every mask (0/255), one after another,
    /// each width x height without padding. Needs `num_masks * width * height` bytes (at most 4x).
    pub all_masks: *mut u8,
    pub all_masks_len: usize,
    /// In: optional buffer of `low_res_len` floats receiving the chosen low-res logits.
    pub low_res_logits: *mut f32,
    pub low_res_len: usize,
    /// Out: size of the low-res logits.
    pub low_res_width: i32,
    pub low_res_height: i32,
}

/// Options of `seg_sam2_everything`, with the defaults and meaning of SAM2's automatic mask
/// generator (`SAM2AutomaticMaskGenerator`):
/// `SegEverythingOptions o = { .struct_size = sizeof o }; seg_everything_options_default(&o);`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegEverythingOptions {
    /// `sizeof(SegEverythingOptions)` as the caller was compiled with.
    pub struct_size: u32,
    /// Prompts along each side of the image: a grid of `points_per_side`² points (default 32; 1..=256).
    pub points_per_side: i32,
    /// Prompts per decoder run where the decoder takes a batch of prompts (default 64; 1..=4096).
    /// The result does not depend on it.
    pub points_per_batch: i32,
    /// Keep masks whose predicted IoU is above this (default 0.8; 0 = no filter; within [0, 1]).
    pub pred_iou_thresh: f32,
    /// Keep masks whose stability score is at least this (default 0.95; 0 = no filter; within [0, 1]).
    pub stability_score_thresh: f32,
    /// The stability score compares the mask at `mask_threshold` +- this (default 1.0).
    pub stability_score_offset: f32,
    /// Logit threshold of a mask pixel (default 0.0).
    pub mask_threshold: f32,
    /// Box IoU above which the lower-scored of two masks is dropped (default 0.7; within [0, 1]).
    pub box_nms_thresh: f32,
    /// 0 = off (default); else holes and specks of at most this many pixels at the decoder's mask
    /// resolution (256x256 for released models) are removed first, as SAM2's generator does.
    pub min_mask_region_area: i32,
    /// Must be 0: crop layers are not supported.
    pub crop_n_layers: i32,
}

/// One object found by `seg_sam2_everything`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegEverythingObject {
    /// Its value in the label image: objects are numbered 1, 2, ... by predicted IoU, best first.
    pub id: u32,
    /// Which of the decoder's multimask outputs the mask is (0..2).
    pub mask_index: i32,
    /// Box around the full mask, inclusive pixel indices; all 0 for an empty mask.
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
    /// Pixels of the full mask (also those painted over by smaller objects in the label image).
    pub area: u64,
    pub predicted_iou: f32,
    pub stability_score: f32,
    /// The prompt point that gave the mask, in image pixels.
    pub point_x: f32,
    pub point_y: f32,
}

/// A caller-owned 16-bit label image: 0 = background, object k = k. It must have the image's size.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegLabelImage {
    pub data: *mut u16,
    pub width: i32,
    pub height: i32,
    /// Values (not bytes) from one row to the next; 0 = `width`.
    pub stride: i32,
}

/// What `seg_sam2_everything` counted and measured. Set `struct_size = sizeof(SegEverythingInfo)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegEverythingInfo {
    pub struct_size: u32,
    /// 1 when the decoder ran many prompts per run (an export with a prompt batch axis).
    pub batched: u32,
    /// Prompts per decoder run.
    pub batch: u32,
    pub prompts: u32,
    pub decoder_runs: u32,
    /// Masks decoded, then those left after the predicted-IoU, the stability and the NMS filters.
    pub masks_decoded: u32,
    pub after_iou: u32,
    pub after_stability: u32,
    pub after_nms: u32,
    /// Objects returned (`after_nms`, at most 65535) and those beyond 65535 left out (lowest IoU).
    pub objects: u32,
    pub dropped: u32,
    /// 1 when the cached image embedding was used (no encoder run).
    pub encoder_reused: u32,
    /// 1 when the result was the session's last one (same image and options): nothing ran.
    pub cached: u32,
    pub reserved: u32,
    pub encoder_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
}

impl SegEverythingOptions {
    pub fn defaults() -> Self {
        let o = crate::sam2::EverythingOptions::default();
        SegEverythingOptions {
            struct_size: std::mem::size_of::<SegEverythingOptions>() as u32,
            points_per_side: o.points_per_side as i32,
            points_per_batch: o.points_per_batch as i32,
            pred_iou_thresh: o.pred_iou_thresh,
            stability_score_thresh: o.stability_score_thresh,
            stability_score_offset: o.stability_score_offset,
            mask_threshold: o.mask_threshold,
            box_nms_thresh: o.box_nms_thresh,
            min_mask_region_area: o.min_mask_region_area as i32,
            crop_n_layers: o.crop_n_layers as i32,
        }
    }

    /// Reads a caller's options (NULL = defaults), honouring `struct_size`, and checks them.
    ///
    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegEverythingOptions) -> Result<crate::sam2::EverythingOptions> {
        let raw = read_versioned(p, SegEverythingOptions::defaults())?;
        let count = |v: i32, what: &str| -> Result<usize> {
            usize::try_from(v).map_err(|_| Error::invalid(format!("SegEverythingOptions.{what} is {v}, it must not be negative")))
        };
        let o = crate::sam2::EverythingOptions {
            points_per_side: count(raw.points_per_side, "points_per_side")?,
            points_per_batch: count(raw.points_per_batch, "points_per_batch")?,
            pred_iou_thresh: raw.pred_iou_thresh,
            stability_score_thresh: raw.stability_score_thresh,
            stability_score_offset: raw.stability_score_offset,
            mask_threshold: raw.mask_threshold,
            box_nms_thresh: raw.box_nms_thresh,
            min_mask_region_area: count(raw.min_mask_region_area, "min_mask_region_area")?,
            crop_n_layers: count(raw.crop_n_layers, "crop_n_layers")?,
        };
        o.validate().map_err(|e| e.context("SegEverythingOptions"))?;
        Ok(o)
    }
}

// SAFETY (each impl): as for SegOptions above.
unsafe impl Versioned for SegSam2Result {
    const NAME: &'static str = "SegSam2Result";
}
unsafe impl Versioned for SegEverythingOptions {
    const NAME: &'static str = "SegEverythingOptions";
}
unsafe impl Versioned for SegEverythingInfo {
    const NAME: &'static str = "SegEverythingInfo";
}

/// An opaque call control: cancellation and progress of the calls that can take long, given as their
/// last parameter `control` (NULL: the call cannot be cancelled and reports no progress). Create with
/// `seg_control_create`, release with `seg_control_free`.
pub struct SegCallControl {
    _private: [u8; 0],
}

/// An opaque track handle (a SAM2 video being tracked). Create with `seg_track_create`, release
/// with `seg_track_free`.
pub struct SegTrack {
    _private: [u8; 0],
}

/// Options of `seg_track_create`: `SegTrackOptions o = { .struct_size = sizeof o }; seg_track_options_default(&o);`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegTrackOptions {
    /// `sizeof(SegTrackOptions)` as the caller was compiled with.
    pub struct_size: u32,
    /// Frames the video has, when known (0 = unknown: streaming, the default). SAM2 scales the
    /// distance of object pointers by `min(num_frames, 16) - 1`: give it for videos or volumes of
    /// fewer than 16 frames to match the official predictor exactly.
    pub num_frames: u32,
    /// The encoder outputs of this many most recent frames are kept (0 = every frame, as the official
    /// predictor does: memory grows with the video). Default 8: memory stays bounded; prompts and
    /// `seg_track_frame` reach only the frames still held.
    pub keep_frames: u32,
    pub reserved: u32,
}

/// One object on one frame: `seg_track_add_prompt`, `seg_track_frame` and `seg_track_next` fill
/// one record per object, in the order the objects were first prompted (the same order as the masks).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegTrackObject {
    /// The id the caller gave the object when prompting it.
    pub object_id: i32,
    /// 1 when SAM2 sees the object on this frame (its object score is above 0); 0 when it is hidden
    /// or gone (the mask is then empty).
    pub present: u32,
    /// 0 when the object has no prediction on this frame (prompted on a later frame, tracking not
    /// yet there): then `score` is 0 and the mask empty.
    pub has_output: u32,
    /// SAM2's object score logit (present when > 0).
    pub score: f32,
    /// Pixels of the mask.
    pub area: u64,
    /// Box around the mask, inclusive pixel indices; all 0 for an empty mask.
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
}

/// What one track call did. Set `struct_size = sizeof(SegTrackInfo)`; segrt writes no more than that.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegTrackInfo {
    pub struct_size: u32,
    /// Objects of the track (records filled).
    pub objects: u32,
    /// The frame the call was about (0-based, in the order frames were added).
    pub frame: i64,
    /// Milliseconds spent in this call, per stage.
    pub preprocess_ms: f64,
    pub image_encoder_ms: f64,
    pub memory_attention_ms: f64,
    pub mask_decoder_ms: f64,
    pub memory_encoder_ms: f64,
    pub postprocess_ms: f64,
}

/// The state of a track (`seg_track_state`). Set `struct_size = sizeof(SegTrackState)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegTrackState {
    pub struct_size: u32,
    /// Objects prompted so far.
    pub objects: u32,
    /// Frames added so far.
    pub frames: i64,
    /// Frame size (0 before the first frame).
    pub width: i32,
    pub height: i32,
    /// Frames whose encoder outputs are held, and per-frame object outputs held in the memory bank:
    /// both stay bounded with `keep_frames`.
    pub held_frames: u32,
    pub held_outputs: u32,
    /// The options the track was created with.
    pub num_frames: u32,
    pub keep_frames: u32,
    /// 1 once a frame was tracked: new objects can no longer be added (reset the track for that).
    pub tracking_started: u32,
    pub reserved: u32,
}

/// Default `SegTrackOptions::keep_frames`.
pub const SEG_TRACK_DEFAULT_KEEP_FRAMES: u32 = 8;

impl SegTrackOptions {
    pub fn defaults() -> Self {
        SegTrackOptions {
            struct_size: std::mem::size_of::<SegTrackOptions>() as u32,
            num_frames: 0,
            keep_frames: SEG_TRACK_DEFAULT_KEEP_FRAMES,
            reserved: 0,
        }
    }

    /// Reads a caller's options (NULL = defaults), honouring `struct_size`.
    ///
    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegTrackOptions) -> Result<crate::sam2::video::TrackerOptions> {
        let raw = read_versioned(p, SegTrackOptions::defaults())?;
        Ok(crate::sam2::video::TrackerOptions {
            num_frames: (raw.num_frames > 0).then_some(raw.num_frames as usize),
            keep_frames: (raw.keep_frames > 0).then_some(raw.keep_frames as usize),
        })
    }
}

// SAFETY (each impl): as for SegOptions above.
unsafe impl Versioned for SegTrackOptions {
    const NAME: &'static str = "SegTrackOptions";
}
unsafe impl Versioned for SegTrackInfo {
    const NAME: &'static str = "SegTrackInfo";
}
unsafe impl Versioned for SegTrackState {
    const NAME: &'static str = "SegTrackState";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes of a caller's options struct: the current layout, followed by what a newer header might add.
    #[repr(C)]
    struct NewerOptions {
        options: SegOptions,
        field_from_the_future: [u8; 64],
    }

    #[test]
    fn options_are_read_by_the_versioned_contract() {
        let mut raw = SegOptions::defaults();
        raw.tile_mode = SegTileMode::SEG_TILE_ON as i32;
        raw.max_sessions = 3;
        let o = unsafe { SegOptions::read(&raw) }.unwrap();
        assert_eq!((o.tile_mode, o.max_sessions), (TileMode::On, 3));

        // A newer host: the bytes this build does not know are accepted when zero...
        let mut newer = NewerOptions {
            options: SegOptions { struct_size: std::mem::size_of::<NewerOptions>() as u32, ..raw },
            field_from_the_future: [0; 64],
        };
        assert_eq!(unsafe { SegOptions::read(&newer.options) }.unwrap().max_sessions, 3);
        // ... and refused, naming the offset, when the host set one of them.
        newer.field_from_the_future[3] = 1;
        let e = unsafe { SegOptions::read(&newer.options) }.unwrap_err();
        let offset = std::mem::size_of::<SegOptions>() + 3;
        assert!(e.message.contains(&format!("byte {offset} is not zero")), "{}", e.message);

        // Smaller than the layout (an older pre-release header, or a size that cuts a field): refused.
        for size in [0, 8, 123, std::mem::size_of::<SegOptions>() as u32 - 1] {
            raw.struct_size = size;
            let e = unsafe { SegOptions::read(&raw) }.unwrap_err();
            assert!(e.message.contains(&format!("SegOptions.struct_size is {size}")), "{}", e.message);
        }
        // NULL: the defaults.
        assert_eq!(unsafe { SegOptions::read(std::ptr::null()) }.unwrap(), Options::default());
    }

    #[test]
    fn option_values_are_checked_and_messages_name_the_c_field() {
        let mut raw = SegOptions::defaults();
        raw.size_multiple = -1;
        assert!(unsafe { SegOptions::read(&raw) }.unwrap_err().message.contains("SegOptions.size_multiple is -1"));
        let mut raw = SegOptions::defaults();
        raw.threshold = 2.0;
        let e = unsafe { SegOptions::read(&raw) }.unwrap_err();
        assert!(e.message.starts_with("SegOptions: threshold 2"), "{}", e.message);
        let mut raw = SegOptions::defaults();
        raw.max_memory_bytes = 0; // 0 means the default, not "no memory"
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().max_memory_bytes, crate::options::DEFAULT_MAX_MEMORY_BYTES);
    }

    #[test]
    fn cache_options_are_read_and_checked() {
        let dir = c"/tmp/segrt cache";
        let mut raw = SegOptions::defaults();
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().cache, CacheMode::Off);
        raw.cache_mode = SegCacheMode::SEG_CACHE_DIR as i32;
        raw.cache_dir = dir.as_ptr();
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().cache, CacheMode::Dir("/tmp/segrt cache".into()));
        raw.cache_mode = SegCacheMode::SEG_CACHE_BESIDE_MODEL as i32;
        raw.cache_dir = std::ptr::null();
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().cache, CacheMode::BesideModel);

        let refused = |mode: i32, dir: *const c_char| unsafe {
            let raw = SegOptions { cache_mode: mode, cache_dir: dir, ..SegOptions::defaults() };
            SegOptions::read(&raw).unwrap_err()
        };
        let e = refused(7, std::ptr::null());
        assert!(e.message.contains("SegOptions.cache_mode") && e.message.contains("7"), "{}", e.message);
        let e = refused(SegCacheMode::SEG_CACHE_DIR as i32, std::ptr::null());
        assert!(e.message.contains("cache_dir is NULL"), "{}", e.message);
        let e = refused(SegCacheMode::SEG_CACHE_DIR as i32, c"".as_ptr());
        assert!(e.message.contains("cache_dir is empty"), "{}", e.message);
        let e = refused(SegCacheMode::SEG_CACHE_OFF as i32, dir.as_ptr());
        assert!(e.message.contains("not SEG_CACHE_DIR"), "{}", e.message);
    }
}
