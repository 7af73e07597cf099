//! segrt: a native segmentation runtime (UNet today, SAM2 next) over ONNX Runtime, with a C ABI.
//!
//! The pipelines are plain Rust modules; everything `extern "C"` lives in [`ffi`].

pub mod engine;
pub mod error;
pub mod ffi;
pub mod image;
pub mod log;
pub mod model;
pub mod options;
pub mod postprocess;
pub mod preprocess;
pub mod resize;
pub mod runtime;
pub mod sam2;
pub mod unet;

pub use error::{Error, Result, SegStatus};
pub use image::{ImageView, SegPixelFormat};
pub use options::Options;
pub use unet::UnetSegmenter;

/// Version of the C ABI. Bumped on any incompatible change of a function signature or struct layout.
pub const SEG_ABI_VERSION: u32 = 1;
