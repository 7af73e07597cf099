//! The C boundary: every `extern "C"` function of segrt and the C vocabulary (status codes, enums
//! with their integer values, `#[repr(C)]` structs), and nothing else. cbindgen and csbindgen read
//! only this folder.
//!
//! Conventions (see README "API conventions"): every fallible export returns a `SegStatus`,
//! catches panics, checks pointers before use and writes outputs only on success; the message of
//! the last failure on the calling thread is copied out by `seg_last_error`.

mod boundary;
pub mod enums;
mod handles;
pub mod runtime;
pub mod sam2;
pub mod session;
pub mod track;
pub mod types;

pub use enums::*;
pub use runtime::*;
pub use sam2::*;
pub use session::*;
pub use track::*;
pub use types::*;

/// Version of the C ABI. Bumped on any incompatible change of a function signature or struct layout.
pub const SEG_ABI_VERSION: u32 = 1;
