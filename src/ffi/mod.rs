//! The C boundary: every `extern "C"` function of segrt and the C vocabulary (status codes, enums
//! with their integer values, `#[repr(C)]` structs), and nothing else. cbindgen and csbindgen read
//! only this folder.
//!
//! Conventions (the book's docs/src/guide/c-abi.md, "API conventions"): every fallible export returns
//! a `SegStatus`, catches panics, checks pointers before use and writes outputs only on success; the
//! message of the last failure on the calling thread is copied out by `seg_last_error`. Every export
//! is a literal function whose body is one call of `prologue` (see there how to write a new one).
//!
//! The files: the exports by what they work on (`runtime`, `control`, `session`, `external_data`:
//! models in memory with their side files, `sam2`, `video`, `track`, `intensity`, `reference`: teach
//! once, find in every image; `regions` and `objects`: outlines, figures and RLE of masks, on no
//! handle), the C types they take (`options`, with its OpenVINO fields read in `options_openvino`, `images`, `sam2_types`, `track_types`,
//! `intensity_types`, `reference_types`, `regions_types`, `enums`, `status`; each input struct read
//! and checked in its file; `regions_input`: a mask or label image read for the region exports), and the
//! machinery (`prologue`, `handles`: the opaque handles and their registry, `boundary`: panics,
//! last error, strings, `versioned`: the `struct_size` contract, `c_enum`, `track_lock`,
//! `track_outputs`).

// cbindgen writes the header in the order the modules are declared (rustfmt sorts each group):
// `status` before `enums`, `video` before `track`, as the header has always had them.
mod boundary;
mod c_enum;
pub mod control;
pub mod status;

pub mod enums;
pub mod external_data;
mod handles;
pub mod images;
pub mod intensity;
pub mod intensity_types;
pub mod objects;
pub mod options;
mod options_openvino;
mod prologue;
pub mod reference;
pub mod reference_types;
pub mod regions;
mod regions_input;
pub mod regions_types;
pub mod runtime;
pub mod sam2;
pub mod sam2_types;
pub mod session;
pub mod video;

pub mod track;
mod track_lock;
mod track_outputs;
pub mod track_types;
mod versioned;

pub use control::*;
pub use enums::*;
pub use external_data::*;
pub use handles::{SegCallControl, SegSession, SegTrack};
pub use images::*;
pub use intensity::*;
pub use intensity_types::*;
pub use objects::*;
pub use options::*;
pub use reference::*;
pub use reference_types::*;
pub use regions::*;
pub use regions_types::*;
pub use runtime::*;
pub use sam2::*;
pub use sam2_types::*;
pub use session::*;
pub use track::*;
pub use track_types::*;
pub use video::*;

/// Version of the C ABI: 1 is the layout frozen for the first release. A release may add functions,
/// fields appended to versioned structs, enum values and statuses; anything else (a signature, a
/// field moved or removed, a meaning changed) takes a new ABI version.
pub const SEG_ABI_VERSION: u32 = 1;
