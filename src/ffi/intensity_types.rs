//! The C types of the intensity stage (`intensity.rs`): `SegIntensity` (its range kind,
//! `SegIntensityRange`, is with the other C enums), read and checked into the library's `Intensity`
//! here. The formulas live in `image::intensity`.

use crate::error::{Error, Result};
use crate::image::intensity::{Intensity, Range};

use super::enums::SegIntensityRange;
use super::versioned::{read_versioned, versioned};

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

versioned!(SegIntensity);

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

    /// Reads a caller's settings (NULL = none: the default stage), honouring `struct_size`, and
    /// checks them.
    ///
    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegIntensity) -> Result<Option<Intensity>> {
        if p.is_null() {
            return Ok(None);
        }
        // SAFETY: forwarded from the caller.
        unsafe { read_versioned(p, SegIntensity::defaults())? }.to_intensity().map(Some)
    }

    /// The library's settings, checked.
    pub fn to_intensity(&self) -> Result<Intensity> {
        if self.reserved != 0 {
            return Err(Error::invalid("SegIntensity.reserved must be 0"));
        }
        let range = match SegIntensityRange::try_from(self.range)? {
            SegIntensityRange::SEG_INTENSITY_NONE => Range::None,
            SegIntensityRange::SEG_INTENSITY_WINDOW => Range::Window { low: self.low, high: self.high },
            SegIntensityRange::SEG_INTENSITY_MIN_MAX => Range::MinMax,
            SegIntensityRange::SEG_INTENSITY_PERCENTILES => Range::Percentiles { low: self.percentile_low, high: self.percentile_high },
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
