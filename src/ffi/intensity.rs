//! The intensity stage's exports: `seg_intensity_default`, `seg_intensity_set_window` and
//! `seg_set_intensity` (how 16-bit, signed and float pixels, and when set 8-bit ones, become the
//! values the model's normalisation sees). Its C types are `intensity_types.rs`'s.

use crate::error::Error;
use crate::image::intensity::{check_window, short};

use super::enums::{SegIntensityRange, SegStatus};
use super::handles::{Handle, SegSession};
use super::intensity_types::SegIntensity;
use super::prologue::{on, run};
use super::versioned::{fill_defaults, out_size, read_versioned, write_versioned};

/// Fills `*intensity` with the defaults: bits 0 (all), slope 1, intercept 0, range
/// `SEG_INTENSITY_MIN_MAX`, percentiles 0.5..99.5, output 0..255. Set `struct_size` first; only the
/// bytes it declares are written. Thread safety: any thread.
///
/// # Safety
/// `intensity` must be NULL or point to `intensity->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_intensity_default(intensity: *mut SegIntensity) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    run(|| unsafe { fill_defaults(intensity, SegIntensity::defaults(), "intensity") })
}

/// Sets `*intensity` to the window given as centre and width (DICOM WindowCenter/WindowWidth):
/// `range = SEG_INTENSITY_WINDOW`, `low = centre - width/2`, `high = centre + width/2`; other fields
/// are kept. `SEG_INVALID_ARGUMENT` (nothing written) for a width that is not positive, a value
/// that is not finite, or a window `seg_set_intensity` would refuse: an end that overflows (`high` =
/// +Inf) or a width below the centre's precision (`low == high` once rounded). Thread safety: any thread.
///
/// # Safety
/// `intensity` must be NULL or point to `intensity->struct_size` readable and writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_intensity_set_window(intensity: *mut SegIntensity, centre: f64, width: f64) -> SegStatus {
    run(|| {
        if intensity.is_null() {
            return Err(Error::null("intensity"));
        }
        if !(centre.is_finite() && width.is_finite() && width > 0.0) {
            return Err(Error::invalid(format!("window centre {centre}, width {width}: the width must be positive and both finite")));
        }
        // SAFETY: `struct_size` readable bytes (the contract).
        let n = unsafe { out_size(intensity)? };
        // SAFETY: as above.
        let mut value = unsafe { read_versioned(intensity, SegIntensity::defaults())? };
        let (low, high) = (centre - width / 2.0, centre + width / 2.0);
        check_window(low, high).map_err(|e| e.context(format!("window centre {}, width {}", short(centre), short(width))))?;
        value.range = SegIntensityRange::SEG_INTENSITY_WINDOW as i32;
        (value.low, value.high) = (low, high);
        // SAFETY: `n` writable bytes, checked by `out_size`.
        unsafe { write_versioned(&value, intensity, n) };
        Ok(())
    })
}

/// Sets the intensity stage of `session` (UNet, SAM2 image or SAM2 video; for a video session it
/// applies to the frames every one of its tracks adds later). NULL = back to the default: 8-bit
/// images exactly as without the stage, 16-bit and float images by per-image min-max -> 0..255.
/// The settings are checked (`SEG_INVALID_ARGUMENT`, nothing changed) and copied; the caller keeps
/// `intensity`.
///
/// Thread safety: any thread, at any time; a call already running keeps the setting it started with.
/// A SAM2 session's cached image encoding serves only calls under the setting it was encoded with:
/// a call that passes its image again encodes it under the new setting; a call that passes NULL
/// (the image set last) after a change is refused (`SEG_INVALID_ARGUMENT`).
///
/// # Safety
/// `intensity` must be NULL or point to `intensity->struct_size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_set_intensity(session: *mut SegSession, intensity: *const SegIntensity) -> SegStatus {
    on(session, |handle: &Handle| {
        // SAFETY: NULL or `struct_size` readable bytes (the contract).
        let value = unsafe { SegIntensity::read(intensity)? };
        match handle {
            Handle::Unet(u) => u.core().set_intensity(value),
            Handle::Sam2(s) => s.core().set_intensity(value),
            Handle::Video(v) => v.core().set_intensity(value),
            Handle::Track(_) | Handle::Control(_) | Handle::Reference(_) => {
                Err(handle.wrong_kind("a session (set a track's intensity on its video session)"))
            }
        }
    })
}
