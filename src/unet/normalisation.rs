//! Which pixel normalisation a UNet model gets, and why: the caller's, else one the model's ONNX
//! metadata states, else segrt's default.
//!
//! A pixel value `v` (0..255, after resizing, in the model's channel order) becomes
//! `(v * scale - mean[c]) / std[c]`; the default is `scale` 1/255, `mean` 0, `std` 1 (`v / 255`).
//!
//! Precedence:
//! 1. **The caller**: `Options::explicit_normalisation`, or any of scale/mean/std differing from
//!    the defaults (C hosts cannot say "explicit", so values left at the defaults mean "not set").
//! 2. **The model's metadata** (ONNX `metadata_props`), in this order:
//!    - segrt's keys: `segrt.scale` (a number, or a fraction such as `1/255`), `segrt.mean` and
//!      `segrt.std` (three comma-separated numbers each); a key left out keeps its default;
//!    - ONNX's image metadata (onnx/onnx `docs/MetadataProps.md`): `Image.NominalPixelRange` =
//!      `NominalRange_0_255` (v), `Normalized_0_1` (v/255), `Normalized_1_1` (v/127.5 - 1) or
//!      `NominalRange_16_235` (16 + v*219/255).
//! 3. **The default** (`v / 255`).
//!
//! Metadata a model states but segrt cannot read (not three numbers, a zero std, an unknown range)
//! refuses the model rather than run it with a normalisation it did not ask for.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::options::Options;

/// Metadata keys of segrt's own convention.
pub const SCALE_KEY: &str = "segrt.scale";
pub const MEAN_KEY: &str = "segrt.mean";
pub const STD_KEY: &str = "segrt.std";
/// ONNX's standard image metadata key for the pixel range a model expects.
pub const NOMINAL_RANGE_KEY: &str = "Image.NominalPixelRange";

/// Where the normalisation in use came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Default,
    ModelMetadata,
    Caller,
}

/// The normalisation a session uses, and why (`seg_session_info` / `segrt info`: "normalisation").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub scale: f32,
    pub mean: [f32; 3],
    pub std: [f32; 3],
    pub source: Source,
    /// One sentence: which setting or metadata key gave these values.
    pub why: String,
    /// How a pixel becomes a tensor value.
    pub formula: &'static str,
}

const FORMULA: &str = "(v * scale - mean[c]) / std[c], v = the pixel value 0..255";

/// Whether the options carry the caller's own normalisation (see the module's precedence).
pub fn set_by_caller(options: &Options) -> bool {
    let d = Options::default();
    options.explicit_normalisation || options.scale != d.scale || options.mean != d.mean || options.std != d.std
}

/// Decides the normalisation for a model whose metadata `lookup` reads (key -> value).
pub fn decide(options: &Options, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Decision> {
    let decision = |scale, mean, std, source, why: String| Decision { scale, mean, std, source, why, formula: FORMULA };
    if set_by_caller(options) {
        return Ok(decision(
            options.scale,
            options.mean,
            options.std,
            Source::Caller,
            "set by the caller (values off the defaults, or marked explicit: segrt unet --scale/--mean/--std)".into(),
        ));
    }
    let d = Options::default();
    let bad = |key: &str, value: &str, why: String| {
        Error::unsupported_model(format!(
            "the model's metadata {key} = '{value}' cannot be used: {why}; fix the model's metadata, or set the \
             normalisation yourself (scale, mean, std; segrt unet --scale --mean --std)"
        ))
    };
    let own: Vec<(&str, String)> = [SCALE_KEY, MEAN_KEY, STD_KEY].into_iter().filter_map(|k| lookup(k).map(|v| (k, v))).collect();
    if !own.is_empty() {
        let (mut scale, mut mean, mut std) = (d.scale, d.mean, d.std);
        for (key, value) in &own {
            match *key {
                SCALE_KEY => scale = parse_scale(value).map_err(|e| bad(key, value, e))?,
                MEAN_KEY => mean = parse_three(value, false).map_err(|e| bad(key, value, e))?,
                _ => std = parse_three(value, true).map_err(|e| bad(key, value, e))?,
            }
        }
        let keys: Vec<&str> = own.iter().map(|(k, _)| *k).collect();
        let mut why = format!("the model's metadata ({})", keys.join(", "));
        if lookup(NOMINAL_RANGE_KEY).is_some() {
            why.push_str(&format!("; its {NOMINAL_RANGE_KEY} is not used: segrt's keys come first"));
        }
        return Ok(decision(scale, mean, std, Source::ModelMetadata, why));
    }
    if let Some(value) = lookup(NOMINAL_RANGE_KEY) {
        let (scale, mean, std) = match value.trim() {
            "NominalRange_0_255" => (1.0, [0.0; 3], [1.0; 3]),
            "Normalized_0_1" => (1.0 / 255.0, [0.0; 3], [1.0; 3]),
            "Normalized_1_1" => (1.0 / 255.0, [0.5; 3], [0.5; 3]),
            "NominalRange_16_235" => (219.0 / 255.0, [-16.0; 3], [1.0; 3]),
            _ => {
                return Err(bad(
                    NOMINAL_RANGE_KEY,
                    &value,
                    "expected NominalRange_0_255, Normalized_0_1, Normalized_1_1 or NominalRange_16_235".into(),
                ))
            }
        };
        return Ok(decision(scale, mean, std, Source::ModelMetadata, format!("the model's metadata ({NOMINAL_RANGE_KEY} = {value})")));
    }
    Ok(decision(d.scale, d.mean, d.std, Source::Default, "segrt's default (v / 255): the model's metadata states none".into()))
}

/// A scale: a finite, non-zero number, or a fraction `A/B` (`1/255`).
pub fn parse_scale(text: &str) -> std::result::Result<f32, String> {
    let number = |s: &str| s.trim().parse::<f64>().map_err(|_| format!("'{}' is not a number", s.trim()));
    let v = match text.split_once('/') {
        Some((a, b)) => number(a)? / number(b)?,
        None => number(text)?,
    };
    let v = v as f32;
    if !v.is_finite() || v == 0.0 {
        return Err(format!("the scale must be a finite, non-zero number (got {v})"));
    }
    Ok(v)
}

/// Three comma-separated finite numbers (R,G,B in the model's channel order); with `non_zero`,
/// none may be 0 (a std divides).
pub fn parse_three(text: &str, non_zero: bool) -> std::result::Result<[f32; 3], String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let [r, g, b] = parts.as_slice() else {
        return Err(format!("expected three comma-separated numbers R,G,B, got {}", parts.len()));
    };
    let mut out = [0f32; 3];
    for (slot, part) in out.iter_mut().zip([r, g, b]) {
        let v: f32 = part.parse().map_err(|_| format!("'{part}' is not a number"))?;
        if !v.is_finite() {
            return Err(format!("'{part}' is not a finite number"));
        }
        if non_zero && v == 0.0 {
            return Err("a standard deviation of 0 would divide by zero".into());
        }
        *slot = v;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |key| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    const IMAGENET: &[(&str, &str)] = &[(MEAN_KEY, "0.485, 0.456, 0.406"), (STD_KEY, "0.229,0.224,0.225")];

    #[test]
    fn numbers_are_parsed_strictly() {
        assert_eq!(parse_three("0.485,0.456,0.406", true).unwrap(), [0.485, 0.456, 0.406]);
        assert_eq!(parse_three(" 1 , -2,3e-1 ", false).unwrap(), [1.0, -2.0, 0.3]);
        assert!(parse_three("1,2", false).unwrap_err().contains("three"));
        assert!(parse_three("1,2,3,4", false).unwrap_err().contains("got 4"));
        assert!(parse_three("1,x,3", false).unwrap_err().contains("'x' is not a number"));
        assert!(parse_three("1,NaN,3", false).unwrap_err().contains("finite"));
        assert!(parse_three("1,inf,3", false).unwrap_err().contains("finite"));
        assert!(parse_three("0.2,0,0.2", true).unwrap_err().contains("divide by zero"));
        assert_eq!(parse_three("0,0,0", false).unwrap(), [0.0; 3]);
        assert_eq!(parse_scale("1/255").unwrap(), 1.0 / 255.0);
        assert_eq!(parse_scale(" 0.5 ").unwrap(), 0.5);
        assert!(parse_scale("0").unwrap_err().contains("non-zero"));
        assert!(parse_scale("1/0").unwrap_err().contains("finite"));
        assert!(parse_scale("abc").unwrap_err().contains("not a number"));
    }

    #[test]
    fn the_default_applies_when_nobody_states_one() {
        let d = decide(&Options::default(), &meta(&[])).unwrap();
        assert_eq!((d.source, d.scale, d.mean, d.std), (Source::Default, 1.0 / 255.0, [0.0; 3], [1.0; 3]));
    }

    #[test]
    fn model_metadata_applies_when_the_caller_sets_nothing() {
        let d = decide(&Options::default(), &meta(IMAGENET)).unwrap();
        assert_eq!((d.source, d.scale, d.mean, d.std), (Source::ModelMetadata, 1.0 / 255.0, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]));
        assert!(d.why.contains("segrt.mean, segrt.std"), "{}", d.why);
        let d = decide(&Options::default(), &meta(&[(SCALE_KEY, "1")])).unwrap();
        assert_eq!((d.scale, d.mean, d.std), (1.0, [0.0; 3], [1.0; 3]));
        let d = decide(&Options::default(), &meta(&[(NOMINAL_RANGE_KEY, "Normalized_1_1")])).unwrap();
        assert_eq!((d.source, d.scale, d.mean, d.std), (Source::ModelMetadata, 1.0 / 255.0, [0.5; 3], [0.5; 3]));
        assert!(d.why.contains("Normalized_1_1"), "{}", d.why);
        let d = decide(&Options::default(), &meta(&[(NOMINAL_RANGE_KEY, "NominalRange_0_255")])).unwrap();
        assert_eq!(d.scale, 1.0);
        // segrt's keys come before ONNX's range, and the report says so.
        let d = decide(&Options::default(), &meta(&[(NOMINAL_RANGE_KEY, "Normalized_1_1"), (MEAN_KEY, "0.1,0.2,0.3")])).unwrap();
        assert_eq!((d.mean, d.std), ([0.1, 0.2, 0.3], [1.0; 3]));
        assert!(d.why.contains("not used"), "{}", d.why);
    }

    #[test]
    fn the_callers_setting_wins_over_the_model() {
        // Any value off the defaults is the caller's, as a C host sets it.
        let options = Options { mean: [0.5; 3], ..Options::default() };
        let d = decide(&options, &meta(IMAGENET)).unwrap();
        assert_eq!((d.source, d.mean, d.std), (Source::Caller, [0.5; 3], [1.0; 3]));
        let options = Options { scale: 1.0, ..Options::default() };
        assert_eq!(decide(&options, &meta(IMAGENET)).unwrap().source, Source::Caller);
        // The defaults themselves, when the caller says they are its choice (the CLI's flags).
        let options = Options { explicit_normalisation: true, ..Options::default() };
        let d = decide(&options, &meta(IMAGENET)).unwrap();
        assert_eq!((d.source, d.mean), (Source::Caller, [0.0; 3]));
        // A caller's setting also wins over metadata segrt could not read.
        assert_eq!(decide(&options, &meta(&[(STD_KEY, "0,0,0")])).unwrap().source, Source::Caller);
    }

    #[test]
    fn unreadable_metadata_refuses_the_model() {
        for (pairs, needle) in [
            (&[(STD_KEY, "0.2,0,0.2")][..], "segrt.std = '0.2,0,0.2'"),
            (&[(MEAN_KEY, "0.5")][..], "three comma-separated"),
            (&[(SCALE_KEY, "x")][..], "segrt.scale"),
            (&[(NOMINAL_RANGE_KEY, "Normalized_0_2")][..], "Normalized_0_1"),
        ] {
            let e = decide(&Options::default(), &meta(pairs)).unwrap_err();
            assert!(e.message.contains(needle) && e.message.contains("set the normalisation yourself"), "{}", e.message);
        }
    }
}
