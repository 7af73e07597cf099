//! From a decoder's logits to candidate objects: the masks as row runs, their counts for the
//! stability score, the small-region clean-up, boxes and non-maximum suppression.

use crate::image::bilinear::{spans, taps, verdict, Span, Tap, Verdict};

/// A horizontal run of mask pixels: row `y`, columns `x0..x1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub y: u32,
    pub x0: u32,
    pub x1: u32,
}

/// Scans the bilinear upsampling of `plane` (`sw x sh`) to `w x h` without building it: counts the
/// pixels above each of `thresholds`, and with `runs` collects the runs above `thresholds[0]`.
/// Spans of output pixels whose four source values agree (`bilinear::verdict`) are decided at once.
pub(super) fn scan(
    plane: &[f32],
    (sw, sh): (usize, usize),
    (w, h): (usize, usize),
    thresholds: &[f32],
    mut runs: Option<&mut Vec<Run>>,
) -> Vec<u64> {
    let (xs, ys) = (taps(sw, w), taps(sh, h));
    let spans = spans(&xs);
    let n = thresholds.len();
    let mut counts = vec![0u64; n];
    let mut values = vec![0f32; w];
    let mut row_pair = (usize::MAX, usize::MAX);
    // verdicts[i * spans.len() + k]: span k against thresholds[i], for the current source row pair.
    let mut verdicts = vec![Verdict::Below; n * spans.len()];
    for (y, ty) in ys.iter().enumerate() {
        let (j0, j1, h0, h1) = (ty.i0, ty.i1, 1.0 - ty.w1, ty.w1);
        let (r0, r1) = (&plane[j0 * sw..(j0 + 1) * sw], &plane[j1 * sw..(j1 + 1) * sw]);
        if row_pair != (j0, j1) {
            for (row, t) in verdicts.chunks_exact_mut(spans.len()).zip(thresholds) {
                for (v, span) in row.iter_mut().zip(&spans) {
                    *v = verdict(r0, r1, span, *t);
                }
            }
            row_pair = (j0, j1);
        }
        let mut run_start: Option<usize> = None;
        let push = |x: usize, on: bool, run_start: &mut Option<usize>, runs: &mut Option<&mut Vec<Run>>| {
            if let Some(rs) = runs.as_deref_mut() {
                match (on, *run_start) {
                    (true, None) => *run_start = Some(x),
                    (false, Some(s)) => {
                        rs.push(Run { y: y as u32, x0: s as u32, x1: x as u32 });
                        *run_start = None;
                    }
                    _ => {}
                }
            }
        };
        for (k, &Span { x0: xa, x1: xb, .. }) in spans.iter().enumerate() {
            let verdict_at = |i: usize| verdicts[i * spans.len() + k];
            if (0..n).any(|i| verdict_at(i) == Verdict::Mixed) {
                for (x, v) in values.iter_mut().enumerate().take(xb).skip(xa) {
                    let Tap { i0, i1, w1 } = xs[x];
                    let w0 = 1.0 - w1;
                    *v = h0 * (w0 * r0[i0] + w1 * r0[i1]) + h1 * (w0 * r1[i0] + w1 * r1[i1]);
                }
            }
            for (i, (c, t)) in counts.iter_mut().zip(thresholds).enumerate() {
                match verdict_at(i) {
                    Verdict::Above => *c += (xb - xa) as u64,
                    Verdict::Mixed => *c += values[xa..xb].iter().filter(|v| **v > *t).count() as u64,
                    Verdict::Below => {}
                }
            }
            if runs.is_some() {
                match verdict_at(0) {
                    Verdict::Above => push(xa, true, &mut run_start, &mut runs),
                    Verdict::Below => push(xa, false, &mut run_start, &mut runs),
                    Verdict::Mixed => {
                        for (x, v) in values.iter().enumerate().take(xb).skip(xa) {
                            push(x, *v > thresholds[0], &mut run_start, &mut runs);
                        }
                    }
                }
            }
        }
        push(w, false, &mut run_start, &mut runs);
    }
    counts
}

/// The predictor's mask clean-up (`SAM2Transforms.postprocess_masks` with `max_hole_area` =
/// `max_sprinkle_area` = `area`): 8-connected regions of `logit <= 0` of at most `area` pixels
/// become 10.0, regions of `logit > 0` of at most `area` pixels become -10.0 (both found on the
/// logits as given).
pub(super) fn remove_small_regions(plane: &mut [f32], (w, h): (usize, usize), area: usize) {
    let fg: Vec<bool> = plane.iter().map(|v| *v > 0.0).collect();
    let mut seen = vec![false; w * h];
    let mut stack = Vec::new();
    let mut region = Vec::new();
    for start in 0..w * h {
        if seen[start] {
            continue;
        }
        let want = fg[start];
        seen[start] = true;
        stack.push(start);
        region.clear();
        while let Some(p) = stack.pop() {
            region.push(p);
            let (x, y) = ((p % w) as isize, (p / w) as isize);
            for dy in -1..=1isize {
                for dx in -1..=1isize {
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
                        continue;
                    }
                    let q = ny as usize * w + nx as usize;
                    if !seen[q] && fg[q] == want {
                        seen[q] = true;
                        stack.push(q);
                    }
                }
            }
        }
        if region.len() <= area {
            let v = if want { -10.0 } else { 10.0 };
            for p in &region {
                plane[*p] = v;
            }
        }
    }
}

/// torchvision's `nms` on boxes given as inclusive pixel indices: indices kept, best score first.
pub fn nms(boxes: &[[u32; 4]], scores: &[f32], threshold: f32) -> Vec<usize> {
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
    let b: Vec<[f32; 4]> = boxes.iter().map(|b| b.map(|v| v as f32)).collect();
    let area: Vec<f32> = b.iter().map(|b| (b[2] - b[0]) * (b[3] - b[1])).collect();
    let mut suppressed = vec![false; boxes.len()];
    let mut keep = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        if suppressed[i] {
            continue;
        }
        keep.push(i);
        for &j in &order[n + 1..] {
            if suppressed[j] {
                continue;
            }
            let (xx1, yy1) = (b[i][0].max(b[j][0]), b[i][1].max(b[j][1]));
            let (xx2, yy2) = (b[i][2].min(b[j][2]), b[i][3].min(b[j][3]));
            let inter = (xx2 - xx1).max(0.0) * (yy2 - yy1).max(0.0);
            let iou = inter / (area[i] + area[j] - inter);
            if f64::from(iou) > f64::from(threshold) {
                suppressed[j] = true;
            }
        }
    }
    keep
}

/// The box around runs (inclusive pixel indices), 0,0,0,0 when there are none.
pub(super) fn bbox_of(runs: &[Run]) -> [u32; 4] {
    if runs.is_empty() {
        return [0; 4];
    }
    let (mut x0, mut x1) = (u32::MAX, 0);
    for r in runs {
        x0 = x0.min(r.x0);
        x1 = x1.max(r.x1 - 1);
    }
    [x0, runs[0].y, x1, runs[runs.len() - 1].y]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::resize::resize_f32;
    use crate::options::ResizeFilter;
    use crate::sam2::EverythingObject;

    #[test]
    fn scan_counts_and_runs_equal_thresholding_the_upsampled_map() {
        let mut seed = 7u64;
        let mut noise = || crate::test_random::unit(&mut seed) * 8.0 - 4.0;
        for ((sw, sh), (w, h)) in [((16, 16), (64, 64)), ((37, 23), (300, 101)), ((64, 64), (50, 40)), ((8, 8), (8, 8))] {
            let plane: Vec<f32> = (0..sw * sh).map(|_| noise()).collect();
            let full = resize_f32(&plane, (sw, sh), (w, h), ResizeFilter::Bilinear).unwrap();
            let mut runs = Vec::new();
            let counts = scan(&plane, (sw, sh), (w, h), &[0.0, 1.0, -1.0], Some(&mut runs));
            let mask = EverythingObject {
                id: 1,
                bbox: [0; 4],
                area: 0,
                predicted_iou: 0.0,
                stability_score: 0.0,
                point: [0.0; 2],
                mask_index: 0,
                runs,
            }
            .mask(w, h);
            for (i, t) in [0.0f32, 1.0, -1.0].iter().enumerate() {
                let want = full.iter().filter(|v| **v > *t).count() as i64;
                let near = full.iter().filter(|v| (**v - t).abs() < 1e-4).count() as i64;
                // downscaling is not what resize_f32 does (it filters): compare only upscales
                if w >= sw && h >= sh {
                    assert!((counts[i] as i64 - want).abs() <= near, "{sw}x{sh}->{w}x{h} t {t}: {} vs {want}", counts[i]);
                }
            }
            assert_eq!(mask.iter().map(|v| *v as u64).sum::<u64>(), counts[0]);
        }
    }

    #[test]
    fn nms_keeps_the_best_and_drops_overlaps_above_the_threshold() {
        let boxes = [[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30], [0, 0, 10, 10]];
        let scores = [0.5, 0.9, 0.7, 0.9];
        // 1 (0.9) first, 3 ties with it and comes later (stable), overlapping 0.81 -> dropped
        assert_eq!(nms(&boxes, &scores, 0.7), vec![1, 2]);
        assert_eq!(nms(&boxes, &scores, 1.0), vec![1, 3, 2, 0]);
    }

    #[test]
    fn small_regions_are_filled_and_removed() {
        // 5x5: a 1-pixel hole inside a foreground block, and a 1-pixel speck
        let mut p = vec![-5f32; 25];
        for y in 0..3 {
            for x in 0..3 {
                p[y * 5 + x] = 5.0;
            }
        }
        p[6] = -5.0; // hole at (1,1)
        p[24] = 5.0; // speck at (4,4)
        remove_small_regions(&mut p, (5, 5), 1);
        assert_eq!(p[6], 10.0);
        assert_eq!(p[24], -10.0);
        assert_eq!(p[0], 5.0);
    }
}
