//! Everything a session can be told: execution provider, threads, pre- and post-processing.
//! The enums are shared with the C ABI (their integer values are part of it).

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::image::SEG_DEFAULT_MAX_PIXELS;

/// `TryFrom<i32>` for enums whose values arrive from C as plain integers (an out-of-range value
/// in a Rust enum would be undefined behaviour). The enums themselves are written out literally
/// so cbindgen and csbindgen can see them.
macro_rules! try_from_i32 {
    ($name:ident { $($variant:ident),+ $(,)? }) => {
        impl TryFrom<i32> for $name {
            type Error = Error;
            fn try_from(v: i32) -> Result<Self> {
                $(if v == $name::$variant as i32 { return Ok($name::$variant); })+
                Err(Error::invalid(format!(
                    concat!("unknown ", stringify!($name), " value {} (expected one of:", $(" ", stringify!($variant)),+, ")"),
                    v
                )))
            }
        }
    };
}

/// Which execution provider runs the model.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegProvider {
    SEG_PROVIDER_CPU = 0,
    /// NVIDIA CUDA (needs the onnxruntime-gpu build and CUDA 13 + cuDNN 9 libraries).
    SEG_PROVIDER_CUDA = 1,
    /// NVIDIA TensorRT (onnxruntime-gpu build plus the TensorRT libraries).
    SEG_PROVIDER_TENSORRT = 2,
    /// DirectML on any DirectX 12 GPU (Windows; the onnxruntime-directml build).
    SEG_PROVIDER_DIRECTML = 3,
    /// Intel OpenVINO (the onnxruntime-openvino build).
    SEG_PROVIDER_OPENVINO = 4,
}
try_from_i32!(SegProvider { SEG_PROVIDER_CPU, SEG_PROVIDER_CUDA, SEG_PROVIDER_TENSORRT, SEG_PROVIDER_DIRECTML, SEG_PROVIDER_OPENVINO });

impl SegProvider {
    pub const ALL: [SegProvider; 5] = [
        SegProvider::SEG_PROVIDER_CPU,
        SegProvider::SEG_PROVIDER_CUDA,
        SegProvider::SEG_PROVIDER_TENSORRT,
        SegProvider::SEG_PROVIDER_DIRECTML,
        SegProvider::SEG_PROVIDER_OPENVINO,
    ];

    /// The name ONNX Runtime lists in `GetAvailableProviders` for builds that include it.
    pub fn ort_name(self) -> &'static str {
        match self {
            SegProvider::SEG_PROVIDER_CPU => "CPUExecutionProvider",
            SegProvider::SEG_PROVIDER_CUDA => "CUDAExecutionProvider",
            SegProvider::SEG_PROVIDER_TENSORRT => "TensorrtExecutionProvider",
            SegProvider::SEG_PROVIDER_DIRECTML => "DmlExecutionProvider",
            SegProvider::SEG_PROVIDER_OPENVINO => "OpenVINOExecutionProvider",
        }
    }
}

/// What happens when the requested execution provider cannot be initialised.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegProviderPolicy {
    /// Session creation fails with ONNX Runtime's reason (`SEG_PROVIDER_UNAVAILABLE`).
    SEG_PROVIDER_REQUIRE = 0,
    /// The session runs on the CPU; the reason is recorded in `seg_session_info`.
    SEG_PROVIDER_FALLBACK = 1,
}
try_from_i32!(SegProviderPolicy { SEG_PROVIDER_REQUIRE, SEG_PROVIDER_FALLBACK });

/// Filter used to resize the image to the model's input size.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegResizeFilter {
    SEG_RESIZE_NEAREST = 0,
    SEG_RESIZE_BILINEAR = 1,
    SEG_RESIZE_BICUBIC = 2,
    SEG_RESIZE_LANCZOS3 = 3,
    /// Bilinear interpolation between the 2x2 nearest pixels, without antialiasing when shrinking:
    /// what OpenCV's `cv2.resize(..., INTER_LINEAR)` does. For models trained on images resized that
    /// way; several times cheaper than BILINEAR on large downscales. (The others filter like Pillow.)
    SEG_RESIZE_BILINEAR_NO_ANTIALIAS = 4,
}
try_from_i32!(SegResizeFilter {
    SEG_RESIZE_NEAREST,
    SEG_RESIZE_BILINEAR,
    SEG_RESIZE_BICUBIC,
    SEG_RESIZE_LANCZOS3,
    SEG_RESIZE_BILINEAR_NO_ANTIALIAS
});

/// Channel order a 3-channel model expects.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegChannelOrder {
    SEG_CHANNELS_RGB = 0,
    SEG_CHANNELS_BGR = 1,
}
try_from_i32!(SegChannelOrder { SEG_CHANNELS_RGB, SEG_CHANNELS_BGR });

/// Whether a 1-channel output is turned into probabilities with a sigmoid.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegSigmoid {
    /// Apply a sigmoid when the output holds values outside [0, 1] (logits).
    SEG_SIGMOID_AUTO = 0,
    SEG_SIGMOID_ON = 1,
    SEG_SIGMOID_OFF = 2,
}
try_from_i32!(SegSigmoid { SEG_SIGMOID_AUTO, SEG_SIGMOID_ON, SEG_SIGMOID_OFF });

/// How a 1-channel probability map becomes a binary mask.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegThresholdMode {
    /// `probability > threshold`.
    SEG_THRESHOLD_FIXED = 0,
    /// Otsu's threshold on the probability histogram of each image.
    SEG_THRESHOLD_OTSU = 1,
}
try_from_i32!(SegThresholdMode { SEG_THRESHOLD_FIXED, SEG_THRESHOLD_OTSU });

/// Whether large images are segmented tile by tile at their own resolution.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegTileMode {
    /// The whole image is resized to the model's input size: one run per image.
    SEG_TILE_OFF = 0,
    /// Always tile: the image is cut into model-sized tiles at full resolution, no resizing.
    SEG_TILE_ON = 1,
    /// Tile when the image is more than twice the tile's width or height.
    SEG_TILE_AUTO = 2,
}
try_from_i32!(SegTileMode { SEG_TILE_OFF, SEG_TILE_ON, SEG_TILE_AUTO });

/// Session options with their defaults. `Options::default()` is what `seg_options_default` gives C hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Absolute path of the ONNX Runtime library to load (see `runtime` for the search order).
    pub ort_path: Option<PathBuf>,
    pub provider: SegProvider,
    pub device_id: i32,
    pub provider_policy: SegProviderPolicy,
    /// ONNX Runtime intra-op threads; 0 lets ONNX Runtime choose (one per physical core).
    pub intra_threads: usize,
    /// Model input size for models with dynamic height/width; `None` uses the image size
    /// rounded to `size_multiple`.
    pub input_size: Option<(usize, usize)>,
    pub size_multiple: usize,
    pub resize_filter: SegResizeFilter,
    pub channel_order: SegChannelOrder,
    /// Pixel values are mapped as `(v * scale - mean[c]) / std[c]`.
    pub scale: f32,
    pub mean: [f32; 3],
    pub std: [f32; 3],
    pub sigmoid: SegSigmoid,
    pub threshold_mode: SegThresholdMode,
    pub threshold: f32,
    /// Remove connected foreground regions smaller than this many pixels (0 = off).
    pub min_area: usize,
    /// Morphological closing with a k x k square (0 or 1 = off).
    pub close_kernel: usize,
    /// Fill background regions that do not touch the image border.
    pub fill_holes: bool,
    /// Images with more pixels are refused before anything is allocated.
    pub max_pixels: u64,
    pub tile_mode: SegTileMode,
    /// Tile size for models with dynamic height/width; `None` uses `input_size`, else 512x512.
    /// Fixed axes always win: a model trained at 256x256 gets 256x256 tiles.
    pub tile_size: Option<(usize, usize)>,
    /// Pixels shared by neighbouring tiles; their scores are blended across this band.
    pub tile_overlap: usize,
    /// Tiles per ONNX Runtime run when the model's batch axis is dynamic.
    pub tile_batch: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ort_path: None,
            provider: SegProvider::SEG_PROVIDER_CPU,
            device_id: 0,
            provider_policy: SegProviderPolicy::SEG_PROVIDER_REQUIRE,
            intra_threads: 0,
            input_size: None,
            size_multiple: 32,
            resize_filter: SegResizeFilter::SEG_RESIZE_BILINEAR,
            channel_order: SegChannelOrder::SEG_CHANNELS_RGB,
            scale: 1.0 / 255.0,
            mean: [0.0; 3],
            std: [1.0; 3],
            sigmoid: SegSigmoid::SEG_SIGMOID_AUTO,
            threshold_mode: SegThresholdMode::SEG_THRESHOLD_FIXED,
            threshold: 0.5,
            min_area: 0,
            close_kernel: 0,
            fill_holes: false,
            max_pixels: SEG_DEFAULT_MAX_PIXELS,
            tile_mode: SegTileMode::SEG_TILE_OFF,
            tile_size: None,
            tile_overlap: 64,
            tile_batch: 4,
        }
    }
}

impl Options {
    /// Rejects values that cannot work, with a message naming the field.
    pub fn validate(&self) -> Result<()> {
        if !(self.threshold.is_finite() && (0.0..=1.0).contains(&self.threshold)) {
            return Err(Error::invalid(format!("threshold {} must be within [0, 1]", self.threshold)));
        }
        if !self.scale.is_finite() || self.scale == 0.0 {
            return Err(Error::invalid(format!("scale {} must be finite and non-zero", self.scale)));
        }
        if self.mean.iter().any(|m| !m.is_finite()) || self.std.iter().any(|s| !s.is_finite() || *s == 0.0) {
            return Err(Error::invalid(format!("mean {:?} must be finite and std {:?} finite and non-zero", self.mean, self.std)));
        }
        if self.size_multiple == 0 || self.size_multiple > 4096 {
            return Err(Error::invalid(format!("size_multiple {} must be within 1..=4096", self.size_multiple)));
        }
        if let Some((w, h)) = self.input_size {
            if w == 0 || h == 0 || (w as u64) * (h as u64) > self.max_pixels {
                return Err(Error::invalid(format!("input size {w}x{h} must be positive and within max_pixels")));
            }
        }
        if self.close_kernel > 255 {
            return Err(Error::invalid(format!("close_kernel {} is larger than 255", self.close_kernel)));
        }
        if self.max_pixels == 0 {
            return Err(Error::invalid("max_pixels must be positive"));
        }
        if self.device_id < 0 {
            return Err(Error::invalid(format!("device_id {} must not be negative", self.device_id)));
        }
        if let Some((w, h)) = self.tile_size {
            if w == 0 || h == 0 || (w as u64) * (h as u64) > self.max_pixels {
                return Err(Error::invalid(format!("tile size {w}x{h} must be positive and within max_pixels")));
            }
        }
        if self.tile_overlap > 4096 {
            return Err(Error::invalid(format!("tile_overlap {} is larger than 4096", self.tile_overlap)));
        }
        if !(1..=64).contains(&self.tile_batch) {
            return Err(Error::invalid(format!("tile_batch {} must be within 1..=64", self.tile_batch)));
        }
        if self.intra_threads > 1024 {
            return Err(Error::invalid(format!("intra_threads {} is absurd", self.intra_threads)));
        }
        Ok(())
    }
}
