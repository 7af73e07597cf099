//! Model output -> mask at the image's own size: layout, sigmoid, threshold (fixed or Otsu),
//! argmax for multi-class models, and clean-up (closing, hole filling, small-region removal).

use crate::error::{Error, Result};
use crate::model::Layout;
use crate::options::{Options, SegResizeFilter, SegSigmoid, SegThresholdMode};
use crate::resize::{resize_f32, resize_u8};

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
    pub fn from_output(shape: &[i64], data: &[f32], input_layout: Layout, (mw, mh): (usize, usize)) -> Result<Self> {
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
            let mut planar = vec![0f32; data.len()];
            for (i, px) in data.chunks_exact(classes).enumerate() {
                for (c, v) in px.iter().enumerate() {
                    planar[c * plane + i] = *v;
                }
            }
            planar
        } else {
            data.to_vec()
        };
        Ok(ScoreMaps { classes, width, height, data })
    }
}

/// The result at the image's size.
#[derive(Debug, Clone, PartialEq)]
pub struct Segmentation {
    pub width: usize,
    pub height: usize,
    /// Binary models: 0 or 255. Multi-class models: the class index (0 = background).
    pub mask: Vec<u8>,
    /// Binary models: foreground probability; multi-class: probability of the chosen class.
    pub probability: Option<Vec<f32>>,
    /// 1 for binary models, else the number of classes.
    pub classes: usize,
    /// The threshold actually applied (Otsu's value when Otsu is on); `NaN` for multi-class.
    pub threshold: f32,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The inverse of the sigmoid: `sigmoid(x) > t` exactly when `x > logit(t)` (-inf at 0, +inf at 1).
fn logit(t: f32) -> f32 {
    (t / (1.0 - t)).ln()
}

/// Turns score maps into a mask of size `(w, h)`.
pub fn segment(maps: ScoreMaps, (w, h): (usize, usize), options: &Options, want_probability: bool) -> Result<Segmentation> {
    let size = (maps.width, maps.height);
    if maps.classes == 1 {
        let mut prob = maps.data;
        let logits = match options.sigmoid {
            SegSigmoid::SEG_SIGMOID_ON => true,
            SegSigmoid::SEG_SIGMOID_OFF => false,
            SegSigmoid::SEG_SIGMOID_AUTO => prob.iter().any(|v| !(0.0..=1.0).contains(v)),
        };
        let filter = probability_filter(options);
        let upscale = w >= size.0 && h >= size.1 && size != (w, h);
        if !want_probability && options.threshold_mode == SegThresholdMode::SEG_THRESHOLD_FIXED && upscale {
            // Only the mask is wanted: threshold while upsampling instead of building the full-size
            // map, comparing logits with logit(threshold) so the sigmoid runs only on boundaries.
            let threshold = options.threshold;
            let mut mask = match filter {
                SegResizeFilter::SEG_RESIZE_NEAREST => {
                    let raw = if logits { logit(threshold) } else { threshold };
                    let small = prob.iter().map(|p| if *p > raw { 255 } else { 0 }).collect();
                    resize_u8(small, size, 1, (w, h), SegResizeFilter::SEG_RESIZE_NEAREST)?
                }
                _ => upsampled_mask(&prob, size, (w, h), threshold, logits),
            };
            clean_binary(&mut mask, w, h, options);
            return Ok(Segmentation { width: w, height: h, mask, probability: None, classes: 1, threshold });
        }
        if logits {
            prob.iter_mut().for_each(|v| *v = sigmoid(*v));
        }
        let prob = if size == (w, h) { prob } else { resize_f32(&prob, size, (w, h), filter)? };
        let threshold = match options.threshold_mode {
            SegThresholdMode::SEG_THRESHOLD_FIXED => options.threshold,
            SegThresholdMode::SEG_THRESHOLD_OTSU => otsu_threshold(&prob),
        };
        let mut mask: Vec<u8> = prob.iter().map(|p| if *p > threshold { 255 } else { 0 }).collect();
        clean_binary(&mut mask, w, h, options);
        Ok(Segmentation { width: w, height: h, mask, probability: want_probability.then_some(prob), classes: 1, threshold })
    } else {
        let plane = maps.width * maps.height;
        let mut labels = vec![0u8; plane];
        let mut best = vec![f32::NEG_INFINITY; plane];
        for c in 0..maps.classes {
            for ((l, b), v) in labels.iter_mut().zip(best.iter_mut()).zip(&maps.data[c * plane..(c + 1) * plane]) {
                if *v > *b {
                    *b = *v;
                    *l = c.min(255) as u8;
                }
            }
        }
        let probability = if want_probability {
            // softmax probability of the winning class: 1 / sum(exp(s_c - s_max))
            let mut p = vec![0f32; plane];
            for (i, p) in p.iter_mut().enumerate() {
                let denom: f32 = (0..maps.classes).map(|c| (maps.data[c * plane + i] - best[i]).exp()).sum();
                *p = 1.0 / denom;
            }
            Some(resize_f32(&p, size, (w, h), probability_filter(options))?)
        } else {
            None
        };
        // Labels are categories: never blend them.
        let mut mask = resize_u8(labels, size, 1, (w, h), SegResizeFilter::SEG_RESIZE_NEAREST)?;
        if options.min_area > 0 {
            remove_small_regions(&mut mask, w, h, options.min_area);
        }
        Ok(Segmentation { width: w, height: h, mask, probability, classes: maps.classes, threshold: f32::NAN })
    }
}

/// For each output pixel along an axis of `n` -> `m` pixels (`m >= n`): the source pixel on its left
/// and the weight of the one after it. Pixel centres map onto pixel centres, and positions beyond
/// the outer centres take the edge pixel: bilinear upsampling as Pillow and `fast_image_resize` do it.
fn bilinear_taps(n: usize, m: usize) -> Vec<(usize, f32)> {
    (0..m)
        .map(|i| {
            let u = ((i as f64 + 0.5) * n as f64 / m as f64 - 0.5).max(0.0);
            let i0 = (u.floor() as usize).min(n - 1);
            (i0, if i0 + 1 < n { (u - i0 as f64) as f32 } else { 0.0 })
        })
        .collect()
}

/// The mask `bilinear_upsample(prob) > threshold` at `(w, h)` without building the upsampled map;
/// with `logits`, `prob` holds logits and the mask is that of their sigmoid.
///
/// A bilinear value lies between the four source values around it, so where all four are above the
/// threshold (or none is) a whole span of output pixels is decided at once; only spans on a boundary
/// are interpolated pixel by pixel. Needs `w >= sw` and `h >= sh`.
pub fn upsampled_mask(scores: &[f32], (sw, sh): (usize, usize), (w, h): (usize, usize), threshold: f32, logits: bool) -> Vec<u8> {
    const MIXED: u8 = 1;
    let (xs, ys) = (bilinear_taps(sw, w), bilinear_taps(sh, h));
    // Output columns [spans[i], spans[i + 1]) have source column i on their left.
    let mut spans = vec![0usize; sw + 1];
    for (x, (i0, _)) in xs.iter().enumerate() {
        spans[i0 + 1] = x + 1;
    }
    for i in 1..=sw {
        spans[i] = spans[i].max(spans[i - 1]);
    }
    let mut mask = Vec::with_capacity(w * h);
    // For the current source row pair: each cell's and each output column's verdict (255 / 0 /
    // MIXED), and the cells to interpolate.
    let (mut verdicts, mut template, mut mixed) = (vec![0u8; sw], vec![0u8; w], Vec::new());
    let raw_threshold = if logits { logit(threshold) } else { threshold };
    let above = |row: &[f32]| -> Vec<u8> { row.iter().map(|v| (*v > raw_threshold) as u8).collect() };
    let prob = |v: f32| if logits { sigmoid(v) } else { v };
    let mut template_row = usize::MAX;
    for &(j0, fy) in &ys {
        let j1 = (j0 + 1).min(sh - 1);
        let (r0, r1) = (&scores[j0 * sw..(j0 + 1) * sw], &scores[j1 * sw..(j1 + 1) * sw]);
        if template_row != j0 {
            // Corners above the threshold per cell: 4 -> 255, 0 -> 0, else MIXED.
            let (a0, a1) = (above(r0), above(r1));
            let column = |a: &[u8], i: usize| a[i] + a[(i + 1).min(sw - 1)];
            mixed.clear();
            for (i, v) in verdicts.iter_mut().enumerate() {
                let verdict = match column(&a0, i) + column(&a1, i) {
                    4 => 255,
                    0 => 0,
                    _ => MIXED,
                };
                if verdict == MIXED {
                    mixed.push(i);
                }
                // Neighbouring rows mostly agree: rewrite only the spans whose verdict changed.
                if verdict != *v {
                    *v = verdict;
                    template[spans[i]..spans[i + 1]].fill(verdict);
                }
            }
            template_row = j0;
        }
        let start = mask.len();
        mask.extend_from_slice(&template);
        let out = &mut mask[start..];
        for &i in &mixed {
            let i1 = (i + 1).min(sw - 1);
            let (p00, p01, p10, p11) = (prob(r0[i]), prob(r0[i1]), prob(r1[i]), prob(r1[i1]));
            let (left, right) = (p00 + fy * (p10 - p00), p01 + fy * (p11 - p01));
            for (o, &(_, fx)) in out[spans[i]..spans[i + 1]].iter_mut().zip(&xs[spans[i]..spans[i + 1]]) {
                *o = if left + fx * (right - left) > threshold { 255 } else { 0 };
            }
        }
    }
    mask
}

/// Probabilities are upsampled bilinearly (then thresholded) unless nearest is asked for.
fn probability_filter(options: &Options) -> SegResizeFilter {
    match options.resize_filter {
        SegResizeFilter::SEG_RESIZE_NEAREST => SegResizeFilter::SEG_RESIZE_NEAREST,
        _ => SegResizeFilter::SEG_RESIZE_BILINEAR,
    }
}

/// Closing, then hole filling, then small-region removal, as the options ask.
pub fn clean_binary(mask: &mut [u8], w: usize, h: usize, options: &Options) {
    if options.close_kernel > 1 {
        close(mask, w, h, options.close_kernel);
    }
    if options.fill_holes {
        fill_holes(mask, w, h);
    }
    if options.min_area > 0 {
        remove_small_regions(mask, w, h, options.min_area);
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

/// Sliding-window max (dilate) or min (erode) of width `k` along rows then columns, via run counts.
fn square_filter(mask: &mut [u8], w: usize, h: usize, k: usize, dilate: bool) {
    let (before, after) = (k / 2, k - 1 - k / 2);
    // Outside the image counts as background for dilation and foreground for erosion,
    // so closing never eats into regions touching the border.
    let hit = |v: u8| (v != 0) == dilate;
    let line = |get: &dyn Fn(usize) -> u8, n: usize, out: &mut Vec<u8>| {
        out.clear();
        // prefix[i] = number of hits in [0, i)
        let mut prefix = Vec::with_capacity(n + 1);
        prefix.push(0usize);
        for i in 0..n {
            prefix.push(prefix[i] + hit(get(i)) as usize);
        }
        for i in 0..n {
            let lo = i.saturating_sub(before);
            let hi = (i + after + 1).min(n);
            let any = prefix[hi] - prefix[lo] > 0;
            out.push(if any == dilate { 255 } else { 0 });
        }
    };
    let mut buf = Vec::new();
    for y in 0..h {
        let row = &mask[y * w..(y + 1) * w].to_vec();
        line(&|x| row[x], w, &mut buf);
        mask[y * w..(y + 1) * w].copy_from_slice(&buf);
    }
    for x in 0..w {
        let col: Vec<u8> = (0..h).map(|y| mask[y * w + x]).collect();
        line(&|y| col[y], h, &mut buf);
        for (y, v) in buf.iter().enumerate() {
            mask[y * w + x] = *v;
        }
    }
}

/// Morphological closing with a `k x k` square: fills gaps and dents narrower than `k`.
pub fn close(mask: &mut [u8], w: usize, h: usize, k: usize) {
    square_filter(mask, w, h, k, true);
    square_filter(mask, w, h, k, false);
}

/// Sets to 255 every background pixel that is not 4-connected to the image border.
pub fn fill_holes(mask: &mut [u8], w: usize, h: usize) {
    let mut outside = vec![false; w * h];
    let mut stack: Vec<usize> = Vec::new();
    let seed = |i: usize, stack: &mut Vec<usize>, outside: &mut Vec<bool>| {
        if mask[i] == 0 && !outside[i] {
            outside[i] = true;
            stack.push(i);
        }
    };
    for x in 0..w {
        seed(x, &mut stack, &mut outside);
        seed((h - 1) * w + x, &mut stack, &mut outside);
    }
    for y in 0..h {
        seed(y * w, &mut stack, &mut outside);
        seed(y * w + w - 1, &mut stack, &mut outside);
    }
    while let Some(i) = stack.pop() {
        let (x, y) = (i % w, i / w);
        if x > 0 {
            seed(i - 1, &mut stack, &mut outside);
        }
        if x + 1 < w {
            seed(i + 1, &mut stack, &mut outside);
        }
        if y > 0 {
            seed(i - w, &mut stack, &mut outside);
        }
        if y + 1 < h {
            seed(i + w, &mut stack, &mut outside);
        }
    }
    for (m, o) in mask.iter_mut().zip(&outside) {
        if *m == 0 && !o {
            *m = 255;
        }
    }
}

/// Sets to 0 every 8-connected region of equal non-zero value with fewer than `min_area` pixels.
pub fn remove_small_regions(mask: &mut [u8], w: usize, h: usize, min_area: usize) {
    let mut seen = vec![false; w * h];
    let mut region = Vec::new();
    let mut stack = Vec::new();
    for start in 0..w * h {
        if mask[start] == 0 || seen[start] {
            continue;
        }
        let label = mask[start];
        region.clear();
        seen[start] = true;
        stack.push(start);
        while let Some(i) = stack.pop() {
            region.push(i);
            let (x, y) = ((i % w) as isize, (i / w) as isize);
            for (dx, dy) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
                    continue;
                }
                let j = ny as usize * w + nx as usize;
                if !seen[j] && mask[j] == label {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        if region.len() < min_area {
            region.iter().for_each(|i| mask[*i] = 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(rows: &[&str]) -> (Vec<u8>, usize, usize) {
        let w = rows[0].len();
        (rows.concat().bytes().map(|b| if b == b'#' { 255 } else { 0 }).collect(), w, rows.len())
    }

    #[test]
    fn fill_holes_fills_only_enclosed_background() {
        let (mut m, w, h) = grid(&["#####.", "#...#.", "#####.", "......"]);
        fill_holes(&mut m, w, h);
        assert_eq!(m, grid(&["#####.", "#####.", "#####.", "......"]).0);
    }

    #[test]
    fn small_regions_go_large_stay() {
        let (mut m, w, h) = grid(&["#....", ".....", "..###", "..###"]);
        remove_small_regions(&mut m, w, h, 2);
        assert_eq!(m, grid(&[".....", ".....", "..###", "..###"]).0);
    }

    #[test]
    fn closing_bridges_a_one_pixel_gap() {
        let (mut m, w, h) = grid(&["......", "......", "##.###", "##.###", "......", "......"]);
        close(&mut m, w, h, 3);
        assert_eq!(m, grid(&["......", "......", "######", "######", "......", "......"]).0);
    }

    #[test]
    fn otsu_splits_two_modes() {
        let v: Vec<f32> = (0..1000).map(|i| if i % 2 == 0 { 0.2 } else { 0.8 }).collect();
        let t = otsu_threshold(&v);
        assert!(t > 0.2 && t < 0.8, "{t}");
    }

    #[test]
    fn nhwc_scores_become_planar() {
        // 1x2x1x2 (H=2, W=1, K=2): pixel0 = (1,2), pixel1 = (3,4)
        let m = ScoreMaps::from_output(&[1, 2, 1, 2], &[1.0, 2.0, 3.0, 4.0], Layout::Nhwc, (1, 2)).unwrap();
        assert_eq!((m.classes, m.width, m.height), (2, 1, 2));
        assert_eq!(m.data, vec![1.0, 3.0, 2.0, 4.0]);
    }

    #[test]
    fn upsampled_mask_equals_thresholding_the_upsampled_map() {
        // A smooth random field with many boundaries, upsampled by integer and odd factors.
        let mut seed = 12345u64;
        let mut noise = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        for ((sw, sh), (w, h)) in
            [((16, 16), (64, 64)), ((37, 23), (1000, 333)), ((5, 7), (5, 700)), ((64, 48), (1920, 1080)), ((1, 3), (10, 10))]
        {
            let prob: Vec<f32> = (0..sw * sh).map(|_| noise()).collect();
            let full = resize_f32(&prob, (sw, sh), (w, h), SegResizeFilter::SEG_RESIZE_BILINEAR).unwrap();
            let expected: Vec<u8> = full.iter().map(|p| if *p > 0.5 { 255 } else { 0 }).collect();
            let got = upsampled_mask(&prob, (sw, sh), (w, h), 0.5, false);
            let differ = got.iter().zip(&expected).filter(|(a, b)| a != b).count();
            // Only pixels within float rounding of the threshold may differ.
            let near: usize = full.iter().filter(|p| (**p - 0.5).abs() < 1e-5).count();
            assert!(differ <= near, "{sw}x{sh} -> {w}x{h}: {differ} pixels differ, {near} within 1e-5 of the threshold");
        }
    }

    #[test]
    fn upsampled_mask_of_logits_equals_that_of_their_sigmoid() {
        let logits: Vec<f32> = (0..40 * 30).map(|i| ((i % 40) as f32 - 19.7) * 0.9 + ((i / 40) as f32 * 0.37).sin() * 6.0).collect();
        let prob: Vec<f32> = logits.iter().map(|v| sigmoid(*v)).collect();
        for t in [0.0, 0.3, 0.5, 0.9, 1.0] {
            assert_eq!(
                upsampled_mask(&logits, (40, 30), (613, 411), t, true),
                upsampled_mask(&prob, (40, 30), (613, 411), t, false),
                "threshold {t}"
            );
        }
    }

    #[test]
    fn mask_does_not_depend_on_asking_for_the_probability() {
        let data: Vec<f32> = (0..32 * 24).map(|i| ((i % 32) as f32 - 15.3) * 0.71 + ((i / 32) as f32 - 11.4) * 0.29).collect();
        let maps = ScoreMaps { classes: 1, width: 32, height: 24, data };
        for filter in [SegResizeFilter::SEG_RESIZE_BILINEAR, SegResizeFilter::SEG_RESIZE_NEAREST] {
            let options = Options { resize_filter: filter, ..Options::default() };
            let a = segment(maps.clone(), (301, 199), &options, false).unwrap();
            let b = segment(maps.clone(), (301, 199), &options, true).unwrap();
            assert_eq!(a.mask, b.mask, "{filter:?}");
            assert!(a.probability.is_none() && b.probability.is_some());
        }
    }

    #[test]
    fn logits_get_a_sigmoid_and_threshold_at_half() {
        let maps = ScoreMaps { classes: 1, width: 2, height: 1, data: vec![-3.0, 3.0] };
        let s = segment(maps, (2, 1), &Options::default(), true).unwrap();
        assert_eq!(s.mask, vec![0, 255]);
        assert!((s.probability.unwrap()[1] - 0.9526).abs() < 1e-3);
    }
}
