//! `SegIntensity`: how 16-bit, signed and float pixels (and, when set, 8-bit ones) become the values
//! the model's normalisation sees; `seg_intensity_default`, `seg_intensity_set_window` and
//! `seg_set_intensity`. The formulas live in `image::intensity`.

use crate::error::{Error, ErrorKind, Result};
use crate::image::intensity::{check_window, short, Intensity, Range};

use super::boundary::guard;
use super::enums::SegStatus;
use super::handles::{lookup, Handle};
use super::session::SegSession;
use super::versioned::{fill_defaults, out_size, read_versioned, write_versioned, Versioned};

/// Which values of an image map onto `out_low..out_high`.
#[repr(i32)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegIntensityRange {
    /// No mapping: values (after the rescale) pass through unchanged (float models that take raw HU).
    SEG_INTENSITY_NONE = 0,
    /// The fixed window `low..high` (rescaled units); values outside are clipped.
    SEG_INTENSITY_WINDOW = 1,
    /// The image's own minimum..maximum, over all its channels (HALCON's per-image min-max).
    SEG_INTENSITY_MIN_MAX = 2,
    /// The image's `percentile_low`..`percentile_high` percentiles (numpy's linear interpolation),
    /// over all its channels; values outside are clipped.
    SEG_INTENSITY_PERCENTILES = 3,
}

/// The intensity stage, applied to each image before the model's scale/mean/std:
///
/// 1. values above the used `bits` are refused (`SEG_INVALID_ARGUMENT`); float NaN/Inf too;
/// 2. `v = stored * slope + intercept` (DICOM RescaleSlope/RescaleIntercept);
/// 3. `[low, high]` from `range`;
/// 4. `v' = clamp((v - low) / (high - low), 0, 1) * (out_high - out_low) + out_low`
///    (`SEG_INTENSITY_NONE`: `v' = v`; a flat image under MIN_MAX or PERCENTILES maps to `out_low`).
///
/// Finite pixels never become NaN or Inf: a rescale that overflows a double at the image's smallest or
/// largest value (with `SEG_INTENSITY_NONE`: float32, what the model takes) is refused by the call
/// (`SEG_INVALID_ARGUMENT`), as is a min-max or percentile range whose width overflows a double.
///
/// Start from `seg_intensity_default` (per-image min-max -> 0..255, the stage 16-bit and float
/// images get when none is set): `SegIntensity i = { .struct_size = sizeof i }; seg_intensity_default(&i);`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegIntensity {
    /// `sizeof(SegIntensity)` as the caller was compiled with.
    pub struct_size: u32,
    /// Used bits of a 16-bit (or 8-bit) integer format, e.g. 12 for a Mono12 camera; 0 = all (default).
    /// An unsigned value above `2^bits - 1` (signed: outside `-2^(bits-1) .. 2^(bits-1) - 1`) is refused,
    /// never masked. Ignored for float formats. At most 16.
    pub bits: u32,
    /// A `SegIntensityRange` value (default `SEG_INTENSITY_MIN_MAX`).
    pub range: i32,
    /// Must be 0.
    pub reserved: u32,
    /// Modality rescale (default 1 and 0). Slope must not be 0.
    pub slope: f64,
    pub intercept: f64,
    /// `SEG_INTENSITY_WINDOW`: the window in rescaled units (finite, `high > low`, `high - low` finite;
    /// for centre/width use `seg_intensity_set_window`: low = c - w/2, high = c + w/2).
    pub low: f64,
    pub high: f64,
    /// `SEG_INTENSITY_PERCENTILES`: 0..100, low < high (default 0.5 and 99.5).
    pub percentile_low: f64,
    pub percentile_high: f64,
    /// The output range (default 0..255, so the model's own normalisation applies as to 8-bit pixels);
    /// within float32's range.
    pub out_low: f64,
    pub out_high: f64,
}

// SAFETY: repr(C), its first field the caller's `u32` struct_size; one published layout.
unsafe impl Versioned for SegIntensity {
    const NAME: &'static str = "SegIntensity";
}

impl SegIntensity {
    pub fn defaults() -> Self {
        let d = Intensity::default();
        SegIntensity {
            struct_size: std::mem::size_of::<SegIntensity>() as u32,
            bits: d.bits,
            range: SegIntensityRange::SEG_INTENSITY_MIN_MAX as i32,
            reserved: 0,
            slope: d.slope,
            intercept: d.intercept,
            low: 0.0,
            high: 0.0,
            percentile_low: 0.5,
            percentile_high: 99.5,
            out_low: d.out_low,
            out_high: d.out_high,
        }
    }

    /// The library's settings, checked.
    pub fn to_intensity(&self) -> Result<Intensity> {
        if self.reserved != 0 {
            return Err(Error::invalid("SegIntensity.reserved must be 0"));
        }
        let range = match self.range {
            r if r == SegIntensityRange::SEG_INTENSITY_NONE as i32 => Range::None,
            r if r == SegIntensityRange::SEG_INTENSITY_WINDOW as i32 => Range::Window { low: self.low, high: self.high },
            r if r == SegIntensityRange::SEG_INTENSITY_MIN_MAX as i32 => Range::MinMax,
            r if r == SegIntensityRange::SEG_INTENSITY_PERCENTILES as i32 => {
                Range::Percentiles { low: self.percentile_low, high: self.percentile_high }
            }
            r => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("unknown SegIntensityRange value {r} (expected SEG_INTENSITY_NONE=0, WINDOW=1, MIN_MAX=2, PERCENTILES=3)"),
                ))
            }
        };
        let i = Intensity {
            bits: self.bits,
            slope: self.slope,
            intercept: self.intercept,
            range,
            out_low: self.out_low,
            out_high: self.out_high,
        };
        i.validate().map_err(|e| e.context("SegIntensity"))?;
        Ok(i)
    }
}

/// Fills `*intensity` with the defaults: bits 0 (all), slope 1, intercept 0, range
/// `SEG_INTENSITY_MIN_MAX`, percentiles 0.5..99.5, output 0..255. Set `struct_size` first; only the
/// bytes it declares are written. Thread safety: any thread.
///
/// # Safety
/// `intensity` must be NULL or point to `intensity->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_intensity_default(intensity: *mut SegIntensity) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    guard(|| unsafe { fill_defaults(intensity, SegIntensity::defaults(), "intensity") })
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
    guard(|| {
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
    guard(|| {
        let handle = lookup(session)?;
        let value = if intensity.is_null() {
            None
        } else {
            // SAFETY: `struct_size` readable bytes (the contract).
            Some(unsafe { read_versioned(intensity, SegIntensity::defaults())? }.to_intensity()?)
        };
        match &*handle {
            Handle::Unet(u) => u.set_intensity(value),
            Handle::Sam2(s) => s.set_intensity(value),
            Handle::Video(v) => v.set_intensity(value),
            Handle::Track(_) | Handle::Control(_) => Err(handle.wrong_kind("a session (set a track's intensity on its video session)")),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_library_default() {
        assert_eq!(SegIntensity::defaults().to_intensity().unwrap(), Intensity::default());
        let bad = SegIntensity { range: 9, ..SegIntensity::defaults() };
        assert!(bad.to_intensity().unwrap_err().message.contains("SegIntensityRange value 9"));
        let narrow = SegIntensity { range: 1, low: 10.0, high: 10.0, ..SegIntensity::defaults() };
        assert!(narrow.to_intensity().unwrap_err().message.contains("zero or negative width"));
    }
}
