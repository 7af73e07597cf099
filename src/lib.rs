//! segrt: a native segmentation runtime (UNet and SAM2) over ONNX Runtime, with a C ABI.
//!
//! The pipelines are plain Rust modules that know nothing of C: `unet/` and `sam2/`, over the image
//! operations both share (`image/`) and ONNX Runtime sessions (`engine/`, `runtime`). Everything
//! `extern "C"`, and the C ABI's own vocabulary, lives in [`ffi`].

// Every unsafe operation sits in its own block with a `// SAFETY:` comment saying why it holds.
#![warn(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

pub mod alloc;
pub mod contours;
pub mod control;
pub mod engine;
pub mod error;
pub mod ffi;
pub mod image;
pub mod log;
pub mod options;
pub mod runtime;
pub mod sam2;
pub mod session_core;
#[cfg(test)]
mod test_random;
pub mod unet;

pub use error::{Error, ErrorKind, Result};
pub use image::{ImageView, MaskMut, PixelFormat};
pub use options::Options;
pub use unet::UnetSegmenter;
