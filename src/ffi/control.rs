//! Call controls: cancellation and progress of the calls that can take long (the `control`
//! parameter of `seg_run_unet`, `seg_sam2_set_image`, `seg_run_sam2_points`, `seg_sam2_everything`
//! and the `seg_track_*` calls that run models).

use std::ffi::c_void;
use std::sync::Arc;

use crate::control::{CallControl, Stage};

use super::enums::{SegStage, SegStatus};
use super::handles::{Handle, SegCallControl};
use super::prologue::{create, on, release};

/// Progress of a call: `stage` a `SegStage` value, `fraction` done in [0, 1], `user_data` as given to
/// `seg_control_set_progress`. Return non-zero to go on, 0 to cancel the call (as
/// `seg_control_cancel`). Called on the thread running the call, between its steps; it may call
/// `seg_control_cancel` itself, but must not unwind (throw) into segrt.
pub type SegProgressCallback = Option<unsafe extern "C" fn(stage: i32, fraction: f32, user_data: *mut c_void) -> i32>;

/// Creates a call control: pass it as the `control` of long calls to cancel them from another
/// thread (`seg_control_cancel`) or to receive their progress (`seg_control_set_progress`). One
/// control may serve several calls at once: cancelling stops them all. Release it with
/// `seg_control_free`. Thread safety: every `seg_control_*` function may be called from any thread.
///
/// # Safety
/// `out_control` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn seg_control_create(out_control: *mut *mut SegCallControl) -> SegStatus {
    // SAFETY: `out_control` NULL or writable (the contract).
    unsafe { create(out_control, || Ok(()), |()| Ok(Handle::Control(Arc::new(CallControl::new())))) }
}

/// Cancels every call running under `control`, and every later one until `seg_control_reset`: segrt's
/// own loops stop at their next step and ONNX Runtime's runs in flight are terminated. A cancelled
/// call returns `SEG_CANCELLED`, writes none of its outputs and leaves the session (and a track) as it
/// was before the call. Returns at once; the calls return on their threads shortly after.
///
/// # Safety
/// Any value may be passed as `control`.
#[no_mangle]
pub unsafe extern "C" fn seg_control_cancel(control: *mut SegCallControl) -> SegStatus {
    on(control, |control: &Arc<CallControl>| {
        control.cancel();
        Ok(())
    })
}

/// Makes a cancelled control usable for new calls (e.g. when the user starts the next job).
///
/// # Safety
/// Any value may be passed as `control`.
#[no_mangle]
pub unsafe extern "C" fn seg_control_reset(control: *mut SegCallControl) -> SegStatus {
    on(control, |control: &Arc<CallControl>| {
        control.reset();
        Ok(())
    })
}

/// Installs (or with a NULL `callback` removes) the progress callback of the calls run under
/// `control`. `user_data` is passed back untouched.
///
/// # Safety
/// `callback` must be NULL or a function that stays callable while calls run under `control`.
#[no_mangle]
pub unsafe extern "C" fn seg_control_set_progress(
    control: *mut SegCallControl,
    callback: SegProgressCallback,
    user_data: *mut c_void,
) -> SegStatus {
    on(control, |control: &Arc<CallControl>| {
        control.set_progress(callback.map(|cb| {
            // The pointer is only handed back to the host's own callback.
            let user_data = user_data as usize;
            // SAFETY: the host's callback, called as `SegProgressCallback` documents, with its own user_data.
            Arc::new(move |stage: Stage, fraction: f32| unsafe {
                cb(SegStage::from(stage) as i32, fraction, user_data as *mut c_void) != 0
            }) as crate::control::ProgressFn
        }));
        Ok(())
    })
}

/// Releases a control. `seg_control_free(NULL)` is a no-op; calls running under it finish normally.
///
/// # Safety
/// Any value may be passed.
#[no_mangle]
pub unsafe extern "C" fn seg_control_free(control: *mut SegCallControl) -> SegStatus {
    release(control, |h| matches!(h, Handle::Control(_)), "a call control (seg_control_create)")
}
