//! The C boundary: every `extern "C"` function of segrt, and nothing else.
//!
//! Conventions (see README "API conventions"): every fallible export returns a `SegStatus`,
//! catches panics, checks pointers before use and writes outputs only on success; the message of
//! the last failure on the calling thread is copied out by `seg_last_error`.

mod boundary;
pub mod runtime;
pub mod sam2;
pub mod session;
pub mod types;

pub use runtime::*;
pub use sam2::*;
pub use session::*;
pub use types::*;
