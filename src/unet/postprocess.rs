//! UNet model output -> mask at the image's own size, written into the caller's buffer: the output
//! layout, sigmoid, threshold (fixed or Otsu) for binary models, argmax for multi-class models, then
//! the clean-up.

use crate::alloc;
use crate::error::{Error, Result};
use crate::image::resize::{resize_f32, resize_f32_into, resize_u8};
use crate::image::tensor::Layout;
use crate::image::upsample::{logit, sigmoid, threshold_into, upsampled_mask};
use crate::image::MaskMut;
use crate::options::{Options, ResizeFilter, Sigmoid, ThresholdMode};

use super::cleanup::{clean_binary, remove_small_regions};

/// A model output brought to planar (class-major) order: `classes` maps of `width * height`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreMaps {
    pub classes: usize,
    pub width: usize,
    pub height: usize,
    pub data: Vec<f32>,
}

impl ScoreMaps {
    /// Interprets an output tensor of shape `[1,H,W]`, `[1,K,H,W]` or `[1,H,W,K]`.
    /// The layout whose spatial size matches the model input `(mw, mh)` wins; otherwise the input's layout.
    pub fn from_output(shape: &[i64], data: Vec<f32>, input_layout: Layout, (mw, mh): (usize, usize)) -> Result<Self> {
        let dims: Vec<usize> = shape.iter().map(|d| *d as usize).collect();
        let bad = || Error::unsupported_model(format!("cannot read output of shape {shape:?} as a segmentation map"));
        if dims.first() != Some(&1) || data.len() != dims.iter().product::<usize>() {
            return Err(bad());
        }
        let (classes, height, width, channels_last) = match dims.len() {
            3 => (1, dims[1], dims[2], false),
            4 => {
                let channels_last = match ((dims[2], dims[3]) == (mh, mw), (dims[1], dims[2]) == (mh, mw)) {
                    (true, false) => false,
                    (false, true) => true,
                    _ => input_layout == Layout::Nhwc,
                };
                if channels_last {
                    (dims[3], dims[1], dims[2], true)
                } else {
                    (dims[1], dims[2], dims[3], false)
                }
            }
            _ => return Err(bad()),
        };
        if classes == 0 || width == 0 || height == 0 || classes > 1024 {
            return Err(bad());
        }
        let data = if channels_last {
            let plane = width * height;
            let mut planar = alloc::vec_of(data.len(), 0f32, "the output in planar order")?;
            for (i, px) in data.chunks_exact(classes).enumerate() {
                for (c, v) in px.iter().enumerate() {
                    planar[c * plane + i] = *v;
                }
            }
            planar
        } else {
            data // already planar: taken as it is
        };
        Ok(ScoreMaps { classes, width, height, data })
    }
}

/// What the mask holds, beside its pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MaskSummary {
    /// 1 for binary models, else the number of classes.
    pub classes: usize,
    /// The threshold actually applied (Otsu's value when Otsu is on); `NaN` for multi-class.
    pub threshold: f32,
    /// Pixels of the mask that are not 0.
    pub foreground: u64,
}

/// Turns score maps into the mask at the mask's size (binary models: 0/255; multi-class models: the
/// class index). `probability` (at least width x height, row-major) receives the foreground
/// probability (multi-class: of the chosen class) when given.
pub fn scores_to_mask(maps: ScoreMaps, mask: &mut MaskMut<'_>, probability: Option<&mut [f32]>, options: &Options) -> Result<MaskSummary> {
    if maps.classes == 1 {
        binary_mask(maps, mask, probability, options)
    } else {
        class_mask(maps, mask, probability, options)
    }
}

fn binary_mask(maps: ScoreMaps, mask: &mut MaskMut<'_>, probability: Option<&mut [f32]>, options: &Options) -> Result<MaskSummary> {
    let (size, (w, h)) = ((maps.width, maps.height), (mask.width(), mask.height()));
    let mut scores = maps.data;
    let logits = match options.sigmoid {
        Sigmoid::On => true,
        Sigmoid::Off => false,
        Sigmoid::Auto => scores.iter().any(|v| !(0.0..=1.0).contains(v)),
    };
    let filter = probability_filter(options);
    let upscale = w >= size.0 && h >= size.1 && size != (w, h);
    let (threshold, mut foreground) = if probability.is_none() && options.threshold_mode == ThresholdMode::Fixed && upscale {
        // Only the mask is wanted: threshold while upsampling instead of building the full-size
        // map, comparing logits with logit(threshold) so the sigmoid runs only on boundaries.
        let threshold = options.threshold;
        let foreground = match filter {
            ResizeFilter::Nearest => {
                let raw = if logits { logit(threshold) } else { threshold };
                let small = scores.iter().map(|p| if *p > raw { 255 } else { 0 }).collect();
                let full = resize_u8(small, size, 1, (w, h), ResizeFilter::Nearest)?;
                mask.copy_from(&full);
                mask.count_foreground()
            }
            _ => upsampled_mask(&scores, size, mask, threshold, logits),
        };
        (threshold, foreground)
    } else {
        if logits {
            scores.iter_mut().for_each(|v| *v = sigmoid(*v));
        }
        // The full-size probability map: in the caller's buffer when it wants it, else in ours.
        match probability {
            Some(p) => {
                let p = &mut p[..w * h];
                resize_f32_into(&scores, size, p, (w, h), filter)?;
                threshold_map(p, mask, options)
            }
            None if size == (w, h) => threshold_map(&scores, mask, options),
            None => threshold_map(&resize_f32(&scores, size, (w, h), filter)?, mask, options),
        }
    };
    if clean_binary(mask, options) {
        foreground = mask.count_foreground();
    }
    Ok(MaskSummary { classes: 1, threshold, foreground })
}

fn class_mask(maps: ScoreMaps, mask: &mut MaskMut<'_>, probability: Option<&mut [f32]>, options: &Options) -> Result<MaskSummary> {
    let (size, (w, h)) = ((maps.width, maps.height), (mask.width(), mask.height()));
    let plane = maps.width * maps.height;
    let mut labels = alloc::vec_of(plane, 0u8, "the class labels")?;
    let mut best = alloc::vec_of(plane, f32::NEG_INFINITY, "the class scores")?;
    for c in 0..maps.classes {
        for ((l, b), v) in labels.iter_mut().zip(best.iter_mut()).zip(&maps.data[c * plane..(c + 1) * plane]) {
            if *v > *b {
                *b = *v;
                *l = c.min(255) as u8;
            }
        }
    }
    if let Some(out) = probability {
        // softmax probability of the winning class: 1 / sum(exp(s_c - s_max))
        let mut p = alloc::vec_of(plane, 0f32, "the class probabilities")?;
        for (i, p) in p.iter_mut().enumerate() {
            let denom: f32 = (0..maps.classes).map(|c| (maps.data[c * plane + i] - best[i]).exp()).sum();
            *p = 1.0 / denom;
        }
        resize_f32_into(&p, size, out, (w, h), probability_filter(options))?;
    }
    // Labels are categories: never blend them.
    let full = resize_u8(labels, size, 1, (w, h), ResizeFilter::Nearest)?;
    mask.copy_from(&full);
    if options.min_area > 0 {
        remove_small_regions(mask, options.min_area);
    }
    Ok(MaskSummary { classes: maps.classes, threshold: f32::NAN, foreground: mask.count_foreground() })
}

/// Thresholds a full-size probability map into the mask: (threshold used, foreground pixels).
fn threshold_map(prob: &[f32], mask: &mut MaskMut<'_>, options: &Options) -> (f32, u64) {
    let threshold = match options.threshold_mode {
        ThresholdMode::Fixed => options.threshold,
        ThresholdMode::Otsu => otsu_threshold(prob),
    };
    (threshold, threshold_into(prob, threshold, mask))
}

/// Probabilities are upsampled bilinearly (then thresholded) unless nearest is asked for.
fn probability_filter(options: &Options) -> ResizeFilter {
    match options.resize_filter {
        ResizeFilter::Nearest => ResizeFilter::Nearest,
        _ => ResizeFilter::Bilinear,
    }
}

/// Otsu's threshold over a 256-bin histogram of values in [0, 1]; returns the bin's upper edge.
pub fn otsu_threshold(values: &[f32]) -> f32 {
    let mut hist = [0u64; 256];
    for v in values {
        hist[(v.clamp(0.0, 1.0) * 255.0).round() as usize] += 1;
    }
    let total: u64 = hist.iter().sum();
    let sum_all: f64 = hist.iter().enumerate().map(|(i, n)| i as f64 * *n as f64).sum();
    let (mut w0, mut sum0, mut best, mut best_t) = (0u64, 0f64, -1f64, 127usize);
    for (t, n) in hist.iter().enumerate() {
        w0 += n;
        sum0 += t as f64 * *n as f64;
        let w1 = total - w0;
        if w0 == 0 || w1 == 0 {
            continue;
        }
        let (m0, m1) = (sum0 / w0 as f64, (sum_all - sum0) / w1 as f64);
        let between = w0 as f64 * w1 as f64 * (m0 - m1) * (m0 - m1);
        if between > best {
            best = between;
            best_t = t;
        }
    }
    // values in bins <= best_t are background: threshold halfway to the next bin
    (best_t as f32 + 0.5) / 255.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn otsu_splits_two_modes() {
        let v: Vec<f32> = (0..1000).map(|i| if i % 2 == 0 { 0.2 } else { 0.8 }).collect();
        let t = otsu_threshold(&v);
        assert!(t > 0.2 && t < 0.8, "{t}");
    }

    #[test]
    fn nhwc_scores_become_planar() {
        // 1x2x1x2 (H=2, W=1, K=2): pixel0 = (1,2), pixel1 = (3,4)
        let m = ScoreMaps::from_output(&[1, 2, 1, 2], vec![1.0, 2.0, 3.0, 4.0], Layout::Nhwc, (1, 2)).unwrap();
        assert_eq!((m.classes, m.width, m.height), (2, 1, 2));
        assert_eq!(m.data, vec![1.0, 3.0, 2.0, 4.0]);
    }

    fn run(
        maps: &ScoreMaps,
        (w, h): (usize, usize),
        options: &Options,
        want_probability: bool,
    ) -> (Vec<u8>, Option<Vec<f32>>, MaskSummary) {
        let mut mask = vec![0u8; w * h];
        let mut prob = vec![0f32; w * h];
        let summary = scores_to_mask(
            maps.clone(),
            &mut MaskMut::new(&mut mask, w, h, 0).unwrap(),
            want_probability.then_some(prob.as_mut_slice()),
            options,
        )
        .unwrap();
        assert_eq!(summary.foreground, mask.iter().filter(|v| **v != 0).count() as u64);
        (mask, want_probability.then_some(prob), summary)
    }

    #[test]
    fn mask_does_not_depend_on_asking_for_the_probability() {
        let data: Vec<f32> = (0..32 * 24).map(|i| ((i % 32) as f32 - 15.3) * 0.71 + ((i / 32) as f32 - 11.4) * 0.29).collect();
        let maps = ScoreMaps { classes: 1, width: 32, height: 24, data };
        for filter in [ResizeFilter::Bilinear, ResizeFilter::Nearest] {
            let options = Options { resize_filter: filter, ..Options::default() };
            let (a, pa, _) = run(&maps, (301, 199), &options, false);
            let (b, pb, _) = run(&maps, (301, 199), &options, true);
            assert_eq!(a, b, "{filter:?}");
            assert!(pa.is_none() && pb.is_some());
        }
    }

    #[test]
    fn logits_get_a_sigmoid_and_threshold_at_half() {
        let maps = ScoreMaps { classes: 1, width: 2, height: 1, data: vec![-3.0, 3.0] };
        let (mask, prob, summary) = run(&maps, (2, 1), &Options::default(), true);
        assert_eq!(mask, vec![0, 255]);
        assert_eq!(summary.foreground, 1);
        assert!((prob.unwrap()[1] - 0.9526).abs() < 1e-3);
    }

    #[test]
    fn argmax_labels_and_their_probability() {
        // 3 classes on 2x1: pixel 0 -> class 2, pixel 1 -> class 0
        let maps = ScoreMaps { classes: 3, width: 2, height: 1, data: vec![0.0, 5.0, 1.0, 0.0, 3.0, 0.0] };
        let (mask, prob, summary) = run(&maps, (2, 1), &Options::default(), true);
        assert_eq!(mask, vec![2, 0]);
        assert_eq!((summary.classes, summary.foreground), (3, 1));
        assert!(summary.threshold.is_nan());
        let expected = 1.0 / (1.0 + (-3.0f32).exp() + (-2.0f32).exp());
        assert!((prob.unwrap()[0] - expected).abs() < 1e-5);
    }
}
