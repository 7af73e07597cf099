//! Score maps to masks at the image's size: bilinear upsampling that thresholds as it goes, written
//! straight into the caller's mask. Shared by UNet (probabilities or logits) and SAM2 (logits, > 0).

use super::bilinear::{spans, taps_f64, verdict, Span, Verdict};
use super::MaskMut;

pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The inverse of the sigmoid: `sigmoid(x) > t` exactly when `x > logit(t)` (-inf at 0, +inf at 1).
pub fn logit(t: f32) -> f32 {
    (t / (1.0 - t)).ln()
}

/// Writes `values > threshold` (255 / 0) of a map at the mask's size; returns the foreground pixels.
pub fn threshold_into(values: &[f32], threshold: f32, mask: &mut MaskMut<'_>) -> u64 {
    let w = mask.width();
    let mut foreground = 0u64;
    for y in 0..mask.height() {
        for (o, v) in mask.row_mut(y).iter_mut().zip(&values[y * w..(y + 1) * w]) {
            let on = *v > threshold;
            *o = if on { 255 } else { 0 };
            foreground += on as u64;
        }
    }
    foreground
}

/// Writes the mask `bilinear_upsample(prob) > threshold` (255 / 0) at the mask's size without building
/// the upsampled map, and returns its foreground pixels; with `logits`, `prob` holds logits and the
/// mask is that of their sigmoid.
///
/// Spans of output pixels whose four source values agree (`bilinear::verdict`) are decided at once;
/// only spans on a boundary are interpolated. Where few are, pixel by pixel; where many are (a noisy
/// map: two thirds of the spans of the random-weight SAM2.1 decoder's logits), whole rows at once, in
/// a loop the compiler vectorises, from the two source rows interpolated across once per source row
/// pair (2.5x faster on those logits at 1920x1080). Needs `w >= sw` and `h >= sh`.
pub fn upsampled_mask(scores: &[f32], (sw, sh): (usize, usize), mask: &mut MaskMut<'_>, threshold: f32, logits: bool) -> u64 {
    let (w, h) = (mask.width(), mask.height());
    debug_assert!(w >= sw && h >= sh);
    let (xs, ys) = (taps_f64(sw, w), taps_f64(sh, h));
    let spans = spans(&xs);
    let fx: Vec<f32> = xs.iter().map(|t| t.w1).collect();
    let raw_threshold = if logits { logit(threshold) } else { threshold };
    let prob = |v: f32| if logits { sigmoid(v) } else { v };
    let mut foreground = 0u64;
    // For the current source row pair: each span's and each output column's verdict (255 / 0 /
    // MIXED), the template's foreground, the spans to interpolate; for a dense pair, the upper
    // source row (as probabilities) interpolated across at every output column and the lower one's
    // difference to it.
    let (mut verdicts, mut template, mut mixed) = (vec![0u8; spans.len()], vec![0u8; w], Vec::new());
    let mut template_foreground = 0u64;
    let (mut top, mut down, mut dense) = (Vec::new(), Vec::new(), false);
    let (mut p0, mut p1): (Vec<f32>, Vec<f32>) = (Vec::new(), Vec::new());
    let mut template_row = usize::MAX;
    for (y, ty) in ys.iter().enumerate() {
        let (r0, r1) = (&scores[ty.i0 * sw..(ty.i0 + 1) * sw], &scores[ty.i1 * sw..(ty.i1 + 1) * sw]);
        if template_row != ty.i0 {
            mixed.clear();
            for (k, (span, v)) in spans.iter().zip(verdicts.iter_mut()).enumerate() {
                let value = match verdict(r0, r1, span, raw_threshold) {
                    Verdict::Above => 255,
                    Verdict::Below => 0,
                    Verdict::Mixed => {
                        mixed.push(k);
                        MIXED
                    }
                };
                // Neighbouring rows mostly agree: rewrite only the spans whose verdict changed.
                if value != *v {
                    let len = (span.x1 - span.x0) as u64;
                    if *v == 255 {
                        template_foreground -= len;
                    }
                    if value == 255 {
                        template_foreground += len;
                    }
                    *v = value;
                    template[span.x0..span.x1].fill(value);
                }
            }
            template_row = ty.i0;
            dense = mixed.len() * DENSE_SPANS > spans.len();
            if dense {
                let (q0, q1) = if logits {
                    p0.clear();
                    p0.extend(r0.iter().map(|v| sigmoid(*v)));
                    p1.clear();
                    p1.extend(r1.iter().map(|v| sigmoid(*v)));
                    (&p0[..], &p1[..])
                } else {
                    (r0, r1)
                };
                top.resize(w, 0.0);
                down.resize(w, 0.0);
                across(&spans, &verdicts, &fx, (q0, q1), (&mut top, &mut down));
            }
        }
        let out = mask.row_mut(y);
        if dense {
            dense_row(out, &top, &down, ty.w1, threshold);
            foreground += count_foreground(out);
            continue;
        }
        out.copy_from_slice(&template);
        foreground += template_foreground;
        for &k in &mixed {
            let s = &spans[k];
            let (p00, p01, p10, p11) = (prob(r0[s.i0]), prob(r0[s.i1]), prob(r1[s.i0]), prob(r1[s.i1]));
            let (left, right) = (p00 + ty.w1 * (p10 - p00), p01 + ty.w1 * (p11 - p01));
            for (o, &fx) in out[s.x0..s.x1].iter_mut().zip(&fx[s.x0..s.x1]) {
                let on = left + fx * (right - left) > threshold;
                *o = if on { 255 } else { 0 };
                foreground += on as u64;
            }
        }
    }
    foreground
}

/// A span verdict of the template row: on a boundary, to be interpolated.
const MIXED: u8 = 1;

/// Where more than one span in this many is on a boundary, rows are interpolated whole.
const DENSE_SPANS: usize = 8;

/// For every output column: the upper source row (of probabilities `q0`) interpolated across, and
/// the lower one's (`q1`) difference to it; where the span's verdict is known, +-infinity and 0, so
/// that `dense_row` gives the verdict there.
fn across(spans: &[Span], verdicts: &[u8], fx: &[f32], (q0, q1): (&[f32], &[f32]), (top, down): (&mut [f32], &mut [f32])) {
    for (s, &verdict) in spans.iter().zip(verdicts) {
        let (top, down) = (&mut top[s.x0..s.x1], &mut down[s.x0..s.x1]);
        if verdict != MIXED {
            top.fill(if verdict == 255 { f32::INFINITY } else { f32::NEG_INFINITY });
            down.fill(0.0);
            continue;
        }
        for ((t, d), &fx) in top.iter_mut().zip(down.iter_mut()).zip(&fx[s.x0..s.x1]) {
            let upper = q0[s.i0] + fx * (q0[s.i1] - q0[s.i0]);
            *t = upper;
            *d = q1[s.i0] + fx * (q1[s.i1] - q1[s.i0]) - upper;
        }
    }
}

/// One output row of a dense pair: `top + fy * down > threshold` at every column (a loop the
/// compiler vectorises).
fn dense_row(out: &mut [u8], top: &[f32], down: &[f32], fy: f32, threshold: f32) {
    let n = out.len();
    let (top, down) = (&top[..n], &down[..n]);
    for x in 0..n {
        out[x] = if top[x] + fy * down[x] > threshold { 255 } else { 0 };
    }
}

/// Pixels of a 0/255 row that are 255 (byte sums in blocks that cannot overflow: vectorised).
fn count_foreground(row: &[u8]) -> u64 {
    row.chunks(255).map(|c| c.iter().fold(0u8, |a, &v| a + (v >> 7)) as u64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::resize::resize_f32;
    use crate::options::ResizeFilter;

    #[test]
    fn upsampled_mask_equals_thresholding_the_upsampled_map() {
        // A smooth random field with many boundaries, upsampled by integer and odd factors.
        let mut seed = 12345u64;
        let mut noise = || crate::test_random::unit(&mut seed);
        let sizes = [((16, 16), (64, 64)), ((37, 23), (1000, 333)), ((5, 7), (5, 700)), ((64, 48), (1920, 1080)), ((1, 3), (10, 10))];
        // Noise puts most spans on a boundary (rows interpolated whole); a disc, few (span by span).
        let fields: [&mut dyn FnMut(usize, usize, usize, usize) -> f32; 2] = [&mut |_, _, _, _| noise(), &mut |x, y, sw, sh| {
            let (dx, dy) = (x as f32 - sw as f32 / 2.0, y as f32 - sh as f32 / 2.0);
            1.0 - (dx * dx + dy * dy).sqrt() / sw.max(sh) as f32
        }];
        for field in fields {
            for ((sw, sh), (w, h)) in sizes {
                let prob: Vec<f32> = (0..sw * sh).map(|i| field(i % sw, i / sw, sw, sh)).collect();
                let full = resize_f32(&prob, (sw, sh), (w, h), ResizeFilter::Bilinear).unwrap();
                let expected: Vec<u8> = full.iter().map(|p| if *p > 0.5 { 255 } else { 0 }).collect();
                let mut got = vec![0u8; w * h];
                let fg = upsampled_mask(&prob, (sw, sh), &mut MaskMut::new(&mut got, w, h, 0).unwrap(), 0.5, false);
                assert_eq!(fg, got.iter().filter(|v| **v != 0).count() as u64);
                let differ = got.iter().zip(&expected).filter(|(a, b)| a != b).count();
                // Only pixels within float rounding of the threshold may differ.
                let near: usize = full.iter().filter(|p| (**p - 0.5).abs() < 1e-5).count();
                assert!(differ <= near, "{sw}x{sh} -> {w}x{h}: {differ} pixels differ, {near} within 1e-5 of the threshold");
            }
        }
    }

    #[test]
    fn upsampled_mask_of_logits_equals_that_of_their_sigmoid() {
        // A smooth field (few spans on a boundary) and a rough one (most spans: rows interpolated whole).
        let smooth = |i: usize| ((i % 40) as f32 - 19.7) * 0.9 + ((i / 40) as f32 * 0.37).sin() * 6.0;
        let rough = |i: usize| ((i * 7919 % 113) as f32 - 56.0) * 0.05;
        for field in [&smooth as &dyn Fn(usize) -> f32, &rough] {
            let logits: Vec<f32> = (0..40 * 30).map(field).collect();
            let prob: Vec<f32> = logits.iter().map(|v| sigmoid(*v)).collect();
            for t in [0.0, 0.3, 0.5, 0.9, 1.0] {
                let run = |values: &[f32], logits: bool| {
                    let mut m = vec![0u8; 613 * 411];
                    upsampled_mask(values, (40, 30), &mut MaskMut::new(&mut m, 613, 411, 0).unwrap(), t, logits);
                    m
                };
                assert_eq!(run(&logits, true), run(&prob, false), "threshold {t}");
            }
        }
    }

    #[test]
    fn a_padded_caller_mask_gets_the_same_rows_and_its_padding_stays() {
        let scores: Vec<f32> = (0..6 * 5).map(|i| ((i % 6) as f32 - 2.5) * ((i / 6) as f32 - 1.7)).collect();
        let mut packed = vec![0u8; 37 * 23];
        let fg = upsampled_mask(&scores, (6, 5), &mut MaskMut::new(&mut packed, 37, 23, 0).unwrap(), 0.3, false);
        let mut padded = vec![7u8; 40 * 23];
        let fg2 = upsampled_mask(&scores, (6, 5), &mut MaskMut::new(&mut padded, 37, 23, 40).unwrap(), 0.3, false);
        assert_eq!(fg, fg2);
        for y in 0..23 {
            assert_eq!(&padded[y * 40..y * 40 + 37], &packed[y * 37..(y + 1) * 37]);
            assert_eq!(&padded[y * 40 + 37..(y + 1) * 40], &[7, 7, 7]);
        }
    }
}
