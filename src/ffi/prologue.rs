//! The one prologue of every export. Each `#[no_mangle] pub unsafe extern "C" fn` stays a literal
//! function (cbindgen and csbindgen read only those) whose body is a single call of one of these,
//! with the export's own work as a closure:
//!
//! - [`run`]: an export on no handle (versions, the runtime, defaults, window helpers): a panic is
//!   caught, an error becomes the returned status and the thread's last error, and is logged.
//! - [`on`]: an export on a handle: `run`, then the handle looked up (`SegSession`, `SegTrack` or
//!   `SegCallControl`, one id space) and taken as the kind the closure asks for (`&UnetSegmenter`,
//!   `&Sam2Segmenter`, `&Arc<VideoModel>`, `&Mutex<Tracker>`, `&Arc<CallControl>`, or `&Handle` for
//!   any): a handle of another kind is `SEG_WRONG_SESSION_KIND` with a hint.
//! - [`on_controlled`]: [`on`] for the calls that take a `SegCallControl` (NULL: none): the control
//!   is looked up first and covers the whole call, the handle's lookup included.
//! - [`create`]: an export that creates a handle: `run`, the arguments read by the first closure,
//!   the out pointer checked (`SEG_NULL_POINTER` naming it), the object made by the second closure,
//!   registered, and its handle written.
//! - [`release`]: a `*_free`: NULL is a no-op, a handle of another kind is refused and left alive,
//!   and nothing is logged (a host tearing down, a .NET finalizer, must never receive a callback).
//!
//! A new export: pick the entry by what it works on, declare the kind in the closure's argument,
//! then null-check and read its own arguments inside. Outputs are written last, only on success.

use std::sync::Arc;

use crate::control::CallControl;
use crate::error::{Error, Result};

use super::boundary::{guard, guard_quiet};
use super::enums::SegStatus;
use super::handles::{lookup, register, unregister, Handle, Kind, Opaque, SegCallControl};

/// An export on no handle (see the module documentation).
pub(crate) fn run(body: impl FnOnce() -> Result<()>) -> SegStatus {
    guard(body)
}

/// An export on the handle `handle`, taken as `K` (see the module documentation).
pub(crate) fn on<P: Opaque, K: Kind>(handle: *const P, body: impl FnOnce(&K) -> Result<()>) -> SegStatus {
    guard(|| with_handle(handle, body))
}

/// An export on the handle `handle`, taken as `K`, under the call control `control` (NULL: none).
pub(crate) fn on_controlled<P: Opaque, K: Kind>(
    handle: *const P,
    control: *mut SegCallControl,
    body: impl FnOnce(&K) -> Result<()>,
) -> SegStatus {
    guard(|| {
        let control = call_control(control)?;
        crate::control::scope(control, || with_handle(handle, body))
    })
}

/// The control of a long call (NULL: none).
fn call_control(control: *mut SegCallControl) -> Result<Option<Arc<CallControl>>> {
    if control.is_null() {
        return Ok(None);
    }
    Ok(Some(lookup(control)?.get::<Arc<CallControl>>()?.clone()))
}

fn with_handle<P: Opaque, K: Kind>(handle: *const P, body: impl FnOnce(&K) -> Result<()>) -> Result<()> {
    let handle: Arc<Handle> = lookup(handle)?;
    body(K::of(&handle).ok_or_else(|| handle.wrong_kind(K::WANTED))?)
}

/// An export that creates a handle of type `P` into `*out`: `args` reads and checks the export's
/// arguments, then `out` is checked, then `make` builds what the handle refers to.
///
/// # Safety
/// `out` must be NULL or writable.
pub(crate) unsafe fn create<P: Opaque, A>(
    out: *mut *mut P,
    args: impl FnOnce() -> Result<A>,
    make: impl FnOnce(A) -> Result<Handle>,
) -> SegStatus {
    guard(|| {
        let args = args()?;
        if out.is_null() {
            return Err(Error::null(P::OUT));
        }
        let handle = register::<P>(make(args)?);
        // SAFETY: not NULL, so writable (this function's contract).
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// A `*_free` export: releases `handle` when `accepts` its kind (`wanted` names the right one).
pub(crate) fn release<P: Opaque>(handle: *mut P, accepts: fn(&Handle) -> bool, wanted: &str) -> SegStatus {
    if handle.is_null() {
        return SegStatus::SEG_OK;
    }
    guard_quiet(|| unregister(handle, accepts, wanted).map(drop))
}
