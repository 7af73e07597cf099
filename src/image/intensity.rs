//! The intensity stage: how a pixel's stored value becomes the value the model's own
//! scale/mean/std then sees. It runs before that normalisation, in this order, each step a formula:
//!
//! 1. **Used bits** (integer formats): an unsigned value must lie in `0 ..= 2^bits - 1`, a signed one
//!    in `-2^(bits-1) ..= 2^(bits-1) - 1`; a value outside is an error (never silently masked).
//!    `bits` 0 = all bits of the format. Float pixels must be finite (NaN/Inf: an error).
//! 2. **Rescale** (DICOM modality LUT): `v = stored * slope + intercept`.
//! 3. **Range** `[low, high]` in rescaled units: a fixed window, the image's min..max, or the
//!    image's percentiles (numpy's default linear interpolation), or none.
//! 4. **Output range**: `v' = clamp((v - low) / (high - low), 0, 1) * (out_high - out_low) + out_low`.
//!    With range none, `v' = v`. When `high == low` (a flat image under min-max or percentiles)
//!    every pixel maps to `out_low`.
//!
//! Finite pixels never become NaN or Inf: settings that could (a window without a finite width, an
//! output range beyond float32) are refused when set, a rescale that overflows at an image's extreme
//! values is refused for that image.
//!
//! A session without settings keeps 8-bit images exactly as before (no stage at all) and maps
//! 16-bit and float images by [`Intensity::default`]: per-image min-max to 0..255, so the model's
//! scale/mean/std and every SAM convention apply unchanged.
//!
//! This module knows nothing of C; `ffi` converts `SegIntensity` into an [`Intensity`].

use std::sync::RwLock;

use crate::error::{Error, Result};
use crate::image::{ImageView, Sample};

/// Which values map onto the output range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// No mapping: the (rescaled) values pass through (float models that take raw HU).
    None,
    /// A fixed window `[low, high]` of rescaled values (MONAI's `a_min`, `a_max`).
    Window { low: f64, high: f64 },
    /// The image's own minimum and maximum (over all its channels).
    MinMax,
    /// The image's `low` and `high` percentiles (0..100, over all its channels).
    Percentiles { low: f64, high: f64 },
}

/// The intensity stage's settings (see the module documentation for the formulas).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Intensity {
    /// Used bits of an integer format; 0 = all. Values outside are refused.
    pub bits: u32,
    pub slope: f64,
    pub intercept: f64,
    pub range: Range,
    pub out_low: f64,
    pub out_high: f64,
}

impl Default for Intensity {
    /// Per-image min-max to 0..255: keeps a 16-bit or float image's contrast and feeds the model's
    /// normalisation the range it expects from 8-bit pixels.
    fn default() -> Self {
        Intensity { bits: 0, slope: 1.0, intercept: 0.0, range: Range::MinMax, out_low: 0.0, out_high: 255.0 }
    }
}

/// A window given as centre and width (DICOM WindowCenter/WindowWidth): `[c - w/2, c + w/2]`.
pub fn window(centre: f64, width: f64) -> Range {
    Range::Window { low: centre - width / 2.0, high: centre + width / 2.0 }
}

/// Named CT windows (centre, width) in HU, with their sources (see the images guide).
pub const CT_PRESETS: &[(&str, f64, f64)] = &[
    // MedSAM's default CT window and the one its users quote for soft tissue.
    ("soft-tissue", 40.0, 400.0),
    // Lung W1500/L-600: the common radiology setting (MedSAM's users quote L-160).
    ("lung", -600.0, 1500.0),
    // Bone W1800/L400.
    ("bone", 400.0, 1800.0),
    // Brain W80/L40, as quoted by MedSAM's users.
    ("brain", 40.0, 80.0),
];

impl Intensity {
    /// Checks the settings alone (no image): finite numbers, a positive window, ordered percentiles.
    pub fn validate(&self) -> Result<()> {
        let finite = |v: f64, what: &str| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(Error::invalid(format!("intensity {what} is {v}: it must be a finite number")))
            }
        };
        if self.bits > 16 {
            return Err(Error::invalid(format!("intensity bits is {}: at most 16 (0 = all bits of the format)", self.bits)));
        }
        finite(self.slope, "slope")?;
        finite(self.intercept, "intercept")?;
        if self.slope == 0.0 {
            return Err(Error::invalid("intensity slope is 0: every pixel would have the same value"));
        }
        finite(self.out_low, "out_low")?;
        finite(self.out_high, "out_high")?;
        // The stage's output reaches the model as float32.
        if self.range != Range::None && self.out_low.abs().max(self.out_high.abs()) > f32::MAX as f64 {
            return Err(Error::invalid(format!(
                "intensity output range {}..{} lies beyond float32's range (the model takes float32)",
                self.out_low, self.out_high
            )));
        }
        match self.range {
            Range::None | Range::MinMax => {}
            Range::Window { low, high } => check_window(low, high)?,
            Range::Percentiles { low, high } => {
                if !(0.0..=100.0).contains(&low) || !(0.0..=100.0).contains(&high) || high <= low {
                    return Err(Error::invalid(format!(
                        "intensity percentiles {low}..{high}: both must lie in 0..100 and high must be above low"
                    )));
                }
            }
        }
        if self.range != Range::None && self.out_high == self.out_low {
            return Err(Error::invalid(format!("intensity output range {}..{} is empty", self.out_low, self.out_high)));
        }
        Ok(())
    }

    /// A hash of the settings: part of the key under which an image's encoding is cached.
    pub fn key(&self) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let (tag, a, b) = match self.range {
            Range::None => (0u8, 0.0, 0.0),
            Range::Window { low, high } => (1, low, high),
            Range::MinMax => (2, 0.0, 0.0),
            Range::Percentiles { low, high } => (3, low, high),
        };
        h.update(&self.bits.to_le_bytes());
        h.update(&[tag]);
        for v in [self.slope, self.intercept, a, b, self.out_low, self.out_high] {
            h.update(&v.to_bits().to_le_bytes());
        }
        h.digest()
    }

    /// Resolves the settings for one image: checks its values (used bits, finite floats) and turns a
    /// per-image range into numbers, so that every tile of the image maps alike.
    pub fn resolve(&self, image: &ImageView<'_>) -> Result<Mapping> {
        self.validate()?;
        let sample = image.format().sample();
        let mut values = Vec::new();
        let needs_values = matches!(self.range, Range::Percentiles { .. });
        if needs_values {
            // All at once: growing by doubling would hold up to twice the samples (what the budget counts).
            let n = image.width() * image.height() * image.format().colours();
            values.try_reserve_exact(n).map_err(|_| crate::alloc::out_of_memory((n * 4) as u64, "the percentile samples"))?;
        }
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut row = Vec::new();
        let limits = self.limits(sample);
        for c in 0..image.format().colours() {
            for y in 0..image.height() {
                image.colour_row_into(c, y, &mut row);
                for (x, &v) in row.iter().enumerate() {
                    if !v.is_finite() {
                        return Err(Error::invalid(format!("pixel ({x}, {y}) is {v}: float pixels must be finite (no NaN or Inf)")));
                    }
                    if let Some((lo, hi)) = limits {
                        if v < lo || v > hi {
                            return Err(Error::invalid(format!(
                                "pixel ({x}, {y}) is {v}, outside the {} used bits ({lo}..{hi}): set the bits the image really uses, or 0 for all",
                                self.bits
                            )));
                        }
                    }
                    min = min.min(v as f64);
                    max = max.max(v as f64);
                }
                if needs_values {
                    values.extend_from_slice(&row);
                }
            }
        }
        check_rescaled(self, min, max)?;
        let rescale = |v: f64| v * self.slope + self.intercept;
        let ordered = |a: f64, b: f64| if a <= b { (a, b) } else { (b, a) };
        let (low, high) = match self.range {
            Range::None => return Ok(Mapping { slope: self.slope, intercept: self.intercept, window: None, out: (0.0, 0.0) }),
            Range::Window { low, high } => (low, high),
            Range::MinMax => ordered(rescale(min), rescale(max)),
            Range::Percentiles { low, high } => {
                values.sort_unstable_by(f32::total_cmp);
                ordered(rescale(percentile(&values, low)), rescale(percentile(&values, high)))
            }
        };
        if !(high - low).is_finite() {
            return Err(Error::invalid(format!(
                "the image's rescaled range {}..{} is wider than a float64 holds: check the slope and intercept",
                short(low),
                short(high)
            )));
        }
        Ok(Mapping { slope: self.slope, intercept: self.intercept, window: Some((low, high)), out: (self.out_low, self.out_high) })
    }

    /// The accepted stored values of an integer format under `bits` (None: no check).
    fn limits(&self, sample: Sample) -> Option<(f32, f32)> {
        if self.bits == 0 {
            return None;
        }
        let b = self.bits as i32;
        match sample {
            Sample::U8 if b < 8 => Some((0.0, ((1 << b) - 1) as f32)),
            Sample::U16 => Some((0.0, ((1i64 << b) - 1) as f32)),
            Sample::I16 => Some((-(1i64 << (b - 1)) as f32, ((1i64 << (b - 1)) - 1) as f32)),
            _ => None,
        }
    }
}

/// A number for a message: as written for everyday values, in exponent form for huge or tiny ones
/// (Rust writes 1e300 out in 301 digits).
pub fn short(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e16).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A window `[low, high]` the stage can use: both ends finite, `high > low`, and a width a float64
/// holds (a wider one would divide by infinity).
pub fn check_window(low: f64, high: f64) -> Result<()> {
    let (l, h) = (short(low), short(high));
    for (v, what) in [(low, "low"), (high, "high")] {
        if !v.is_finite() {
            return Err(Error::invalid(format!("intensity window {what} is {v}: it must be a finite number")));
        }
    }
    if high <= low {
        return Err(Error::invalid(format!("intensity window {l}..{h} has zero or negative width: high must be above low")));
    }
    if !(high - low).is_finite() {
        return Err(Error::invalid(format!("intensity window {l}..{h}: its width overflows a float64")));
    }
    Ok(())
}

/// Refuses a rescale that overflows for the image's extreme stored values (`min`, `max`): the stage
/// is monotonic, so every other value lies between, and finite pixels never become NaN or Inf.
fn check_rescaled(intensity: &Intensity, min: f64, max: f64) -> Result<()> {
    // Values that pass through unmapped reach the model as float32; mapped ones only need a float64.
    let limit = if intensity.range == Range::None { f32::MAX as f64 } else { f64::MAX };
    for stored in [min, max] {
        let v = stored * intensity.slope + intensity.intercept;
        if !v.is_finite() || v.abs() > limit {
            return Err(Error::invalid(format!(
                "pixel value {} rescaled (* {} + {}) is {}: the rescale overflows {}; check the slope and intercept",
                short(stored),
                short(intensity.slope),
                short(intensity.intercept),
                short(v),
                if intensity.range == Range::None { "float32, which the model takes" } else { "a float64" }
            )));
        }
    }
    Ok(())
}

/// numpy's `percentile` with its default linear interpolation, of sorted values.
pub fn percentile(sorted: &[f32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let pos = p / 100.0 * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos - pos.floor());
    let a = sorted[i] as f64;
    let b = sorted[(i + 1).min(sorted.len() - 1)] as f64;
    a + (b - a) * frac
}

/// The stage resolved for one image: a pointwise function of the stored value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mapping {
    pub slope: f64,
    pub intercept: f64,
    /// `(low, high)` in rescaled units; None = values pass through after the rescale.
    pub window: Option<(f64, f64)>,
    /// `(out_low, out_high)`.
    pub out: (f64, f64),
}

impl Mapping {
    /// `v' = clamp((v*slope + intercept - low) / (high - low), 0, 1) * (out_high - out_low) + out_low`.
    #[inline]
    pub fn apply(&self, stored: f32) -> f32 {
        let v = stored as f64 * self.slope + self.intercept;
        match self.window {
            None => v as f32,
            Some((low, high)) => {
                let t = if high > low { ((v - low) / (high - low)).clamp(0.0, 1.0) } else { 0.0 };
                (t * (self.out.1 - self.out.0) + self.out.0) as f32
            }
        }
    }
}

/// A session's intensity setting, changed from any thread at any time; each call takes a snapshot
/// at its start. `None` = no setting: 8-bit images untouched, others by [`Intensity::default`].
#[derive(Debug, Default)]
pub struct IntensitySetting(RwLock<Option<Intensity>>);

impl IntensitySetting {
    pub fn get(&self) -> Option<Intensity> {
        *self.0.read().unwrap_or_else(|e| e.into_inner())
    }
    /// Checks and stores `value` (None = back to no setting).
    pub fn set(&self, value: Option<Intensity>) -> Result<()> {
        if let Some(v) = &value {
            v.validate()?;
        }
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = value;
        Ok(())
    }
}

/// The mapping for `image` under `setting`: None only for an 8-bit image without a setting (the
/// unchanged 8-bit path).
pub fn mapping_for(setting: Option<&Intensity>, image: &ImageView<'_>) -> Result<Option<Mapping>> {
    match setting {
        Some(i) => i.resolve(image).map(Some),
        None if image.format().sample() != Sample::U8 => Intensity::default().resolve(image).map(Some),
        None => Ok(None),
    }
}

/// Whether `image` goes through the stage under `setting`: every image but an 8-bit one without a
/// setting.
pub fn applies(setting: Option<&Intensity>, image: &ImageView<'_>) -> bool {
    setting.is_some() || image.format().sample() != Sample::U8
}

/// Bytes [`Intensity::resolve`] holds while it runs on `image`: the percentile samples (a float per
/// value of every colour); nothing for the other ranges.
pub fn resolve_bytes(setting: Option<&Intensity>, image: &ImageView<'_>) -> u64 {
    match setting.map(|i| i.range) {
        Some(Range::Percentiles { .. }) => (image.width() * image.height() * image.format().colours() * 4) as u64,
        _ => 0,
    }
}

/// Bytes the mapped path of the tensor builder (`Preprocessor::fill_mapped`) holds at its peak for
/// an image of `(w, h)` with `source_colours` colours, fed to a model of `model_channels` channels and
/// resized to `target` (None: not resized): a float plane per colour it maps (one for a gray image
/// or a 1-channel model, else three) and one resized plane.
pub fn mapped_bytes((w, h): (usize, usize), source_colours: usize, model_channels: usize, target: Option<(usize, usize)>) -> u64 {
    let planes = if model_channels == 1 || source_colours == 1 { 1 } else { 3 };
    let resized = target.filter(|t| *t != (w, h)).map_or(0, |(tw, th)| tw * th);
    ((planes * w * h + resized) * 4) as u64
}

/// Packed R,G,B bytes of `image` through `mapping`, each value rounded and clamped to 0..255 (gray
/// replicated): for consumers of 8-bit pixels (the video tracker). Meant for an output range of 0..255.
pub fn mapped_rgb8(image: &ImageView<'_>, mapping: &Mapping) -> Result<Vec<u8>> {
    let (w, h) = (image.width(), image.height());
    let mut out = crate::alloc::vec_of(w * h * 3, 0u8, "packed RGB pixels")?;
    let mut row = Vec::new();
    for c in 0..3 {
        for y in 0..h {
            image.colour_row_into(c, y, &mut row);
            for (x, v) in row.iter().enumerate() {
                out[(y * w + x) * 3 + c] = mapping.apply(*v).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    Ok(out)
}

/// The stage in words and numbers, for `seg_session_info` and `segrt info`.
pub fn describe(setting: Option<&Intensity>) -> String {
    let Some(i) = setting else {
        return "default: 8-bit pixels unchanged; 16-bit and float pixels: per-image min-max -> 0..255".into();
    };
    let mut parts = Vec::new();
    if i.bits != 0 {
        parts.push(format!("{} used bits", i.bits));
    }
    if (i.slope, i.intercept) != (1.0, 0.0) {
        parts.push(format!("v * {} + {}", i.slope, i.intercept));
    }
    let out = format!("-> {}..{}", i.out_low, i.out_high);
    parts.push(match i.range {
        Range::None => "no range: values pass through".into(),
        Range::Window { low, high } => format!("window {low}..{high} (centre {}, width {}) {out}", (low + high) / 2.0, high - low),
        Range::MinMax => format!("per-image min-max {out}"),
        Range::Percentiles { low, high } => format!("per-image percentiles {low}..{high} {out}"),
    });
    parts.join(", ")
}

/// The cache key of `image` under `setting`: its content hash, combined with the settings when set.
pub fn image_key(image: &ImageView<'_>, setting: Option<&Intensity>) -> u64 {
    let hash = image.content_hash();
    match setting {
        None => hash,
        Some(i) => xxhash_rust::xxh3::xxh3_64(&[hash.to_le_bytes(), i.key().to_le_bytes()].concat()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::PixelFormat;

    fn gray16(values: &[u16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn window_maps_by_the_formula_and_clips() {
        let i = Intensity { range: window(40.0, 400.0), out_low: 0.0, out_high: 1.0, ..Intensity::default() };
        let data: Vec<u8> = [-1000i16, -160, 40, 240, 3000].iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = ImageView::new(&data, 5, 1, 0, PixelFormat::Gray16S).unwrap();
        let m = i.resolve(&view).unwrap();
        let got: Vec<f32> = [-1000.0, -160.0, 40.0, 240.0, 3000.0, -60.0].iter().map(|v| m.apply(*v)).collect();
        assert_eq!(got, vec![0.0, 0.0, 0.5, 1.0, 1.0, 0.25]);
    }

    #[test]
    fn rescale_comes_before_the_window() {
        // CT stored values with RescaleIntercept -1024: stored 1064 is HU 40, the window's centre.
        let i = Intensity { intercept: -1024.0, range: window(40.0, 400.0), ..Intensity::default() };
        let view = ImageView::new(&[0u8; 2], 1, 1, 0, PixelFormat::Gray16).unwrap();
        assert_eq!(i.resolve(&view).unwrap().apply(1064.0), 127.5);
    }

    #[test]
    fn min_max_and_percentiles_follow_the_image() {
        let data = gray16(&[100, 200, 300, 400, 500]);
        let view = ImageView::new(&data, 5, 1, 0, PixelFormat::Gray16).unwrap();
        let m = Intensity::default().resolve(&view).unwrap();
        assert_eq!(m.window, Some((100.0, 500.0)));
        assert_eq!((m.apply(100.0), m.apply(300.0), m.apply(500.0)), (0.0, 127.5, 255.0));
        let p = Intensity { range: Range::Percentiles { low: 10.0, high: 90.0 }, ..Intensity::default() }.resolve(&view).unwrap();
        // numpy.percentile([100..500], 10) = 140, (.., 90) = 460.
        assert_eq!(p.window, Some((140.0, 460.0)));
        let flat = gray16(&[7, 7]);
        let m = Intensity::default().resolve(&ImageView::new(&flat, 2, 1, 0, PixelFormat::Gray16).unwrap()).unwrap();
        assert_eq!(m.apply(7.0), 0.0);
    }

    #[test]
    fn none_passes_rescaled_values() {
        let i = Intensity { slope: 2.0, intercept: -1024.0, range: Range::None, ..Intensity::default() };
        let view = ImageView::new(&[0u8; 2], 1, 1, 0, PixelFormat::Gray16).unwrap();
        assert_eq!(i.resolve(&view).unwrap().apply(600.0), 176.0);
    }

    #[test]
    fn values_beyond_the_used_bits_nan_and_bad_settings_are_refused() {
        let data = gray16(&[4095, 4096]);
        let view = ImageView::new(&data, 2, 1, 0, PixelFormat::Gray16).unwrap();
        let e = Intensity { bits: 12, ..Intensity::default() }.resolve(&view).unwrap_err();
        assert!(e.message.contains("pixel (1, 0) is 4096"), "{}", e.message);
        assert!(Intensity { bits: 13, ..Intensity::default() }.resolve(&view).is_ok());
        let signed: Vec<u8> = [-2049i16].iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = ImageView::new(&signed, 1, 1, 0, PixelFormat::Gray16S).unwrap();
        assert!(Intensity { bits: 12, ..Intensity::default() }.resolve(&view).is_err());
        let nan: Vec<u8> = [1.0f32, f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = ImageView::new(&nan, 2, 1, 0, PixelFormat::Gray32F).unwrap();
        let e = Intensity::default().resolve(&view).unwrap_err();
        assert!(e.message.contains("NaN"), "{}", e.message);
        for bad in [
            Intensity { range: Range::Window { low: 5.0, high: 5.0 }, ..Intensity::default() },
            Intensity { range: window(40.0, -1.0), ..Intensity::default() },
            Intensity { range: Range::Percentiles { low: 99.0, high: 1.0 }, ..Intensity::default() },
            Intensity { slope: 0.0, ..Intensity::default() },
            Intensity { bits: 17, ..Intensity::default() },
            Intensity { out_low: 1.0, out_high: 1.0, ..Intensity::default() },
            Intensity { out_high: 1e300, ..Intensity::default() },
            Intensity { range: Range::Window { low: -1e308, high: 1e308 }, ..Intensity::default() },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn keys_differ_by_setting() {
        let data = gray16(&[1, 2]);
        let view = ImageView::new(&data, 2, 1, 0, PixelFormat::Gray16).unwrap();
        let a = Intensity { range: window(40.0, 400.0), ..Intensity::default() };
        let b = Intensity { range: window(40.0, 80.0), ..Intensity::default() };
        assert_ne!(image_key(&view, Some(&a)), image_key(&view, Some(&b)));
        assert_ne!(image_key(&view, Some(&a)), image_key(&view, None));
        assert_eq!(image_key(&view, Some(&a)), image_key(&view, Some(&a)));
    }
}
