//! The C boundary: every `extern "C"` function of segrt and the C vocabulary (status codes, enums
//! with their integer values, `#[repr(C)]` structs), and nothing else. cbindgen and csbindgen read
//! only this folder.
//!
//! Conventions (see README "API conventions"): every fallible export returns a `SegStatus`,
//! catches panics, checks pointers before use and writes outputs only on success; the message of
//! the last failure on the calling thread is copied out by `seg_last_error`.

mod boundary;
pub mod control;
pub mod enums;
pub mod external_data;
mod handles;
pub mod images;
pub mod intensity;
pub mod options;
pub mod runtime;
pub mod sam2;
pub mod sam2_types;
pub mod session;
pub mod track;
pub mod track_types;
mod versioned;

pub use control::*;
pub use enums::*;
pub use external_data::*;
pub use images::*;
pub use intensity::*;
pub use options::*;
pub use runtime::*;
pub use sam2::*;
pub use sam2_types::*;
pub use session::*;
pub use track::*;
pub use track_types::*;

/// Version of the C ABI: 1 is the layout frozen for the first release. A release may add functions,
/// fields appended to versioned structs, enum values and statuses; anything else (a signature, a
/// field moved or removed, a meaning changed) takes a new ABI version.
pub const SEG_ABI_VERSION: u32 = 1;
