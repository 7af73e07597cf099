//! Bilinear interpolation with half-pixel centres (torch's `interpolate(align_corners=False)`,
//! Pillow, `fast_image_resize`), in the two pieces segrt's samplers share: the taps of each output
//! pixel along an axis, and spans of output pixels decided from the four source values around them.

/// One output pixel along an axis: the source pixels on its left and right (`i1 = i0` at the last
/// one) and the weight of the right one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tap {
    pub i0: usize,
    pub i1: usize,
    pub w1: f32,
}

/// The taps of `n_in` -> `n_out` pixels as torch computes them (`area_pixel_compute_source_index`
/// without a scale factor), in f32: source position `max((o + 0.5) * (n_in / n_out) - 0.5, 0)`.
/// The references of segment-everything and the tracker are torch; their results match its bits.
pub fn taps(n_in: usize, n_out: usize) -> Vec<Tap> {
    let scale = n_in as f32 / n_out as f32;
    (0..n_out)
        .map(|o| {
            let src = ((o as f32 + 0.5) * scale - 0.5).max(0.0);
            let i0 = (src.floor() as usize).min(n_in - 1);
            Tap { i0, i1: (i0 + 1).min(n_in - 1), w1: src - i0 as f32 }
        })
        .collect()
}

/// The same positions computed in f64, `(o + 0.5) * n_in / n_out - 0.5`, as Pillow and
/// `fast_image_resize` weigh their pixels: the mask upsampler's reference is Pillow's float resize.
pub fn taps_f64(n_in: usize, n_out: usize) -> Vec<Tap> {
    (0..n_out)
        .map(|o| {
            let src = ((o as f64 + 0.5) * n_in as f64 / n_out as f64 - 0.5).max(0.0);
            let i0 = (src.floor() as usize).min(n_in - 1);
            Tap { i0, i1: (i0 + 1).min(n_in - 1), w1: (src - i0 as f64) as f32 }
        })
        .collect()
}

/// `torch.nn.functional.interpolate(mode="bilinear", align_corners=False)` of one `sw x sh` map to
/// `w x h` in float32, enlarging or shrinking alike: each output pixel from the four source pixels
/// around its centre ([`taps`]), never an average over a wider footprint (no antialiasing, as
/// transformers' `post_process_masks` and the official predictors shrink masks).
pub fn interpolate_into(src: &[f32], (sw, sh): (usize, usize), dst: &mut [f32], (w, h): (usize, usize)) {
    let (ys, xs) = (taps(sh, h), taps(sw, w));
    let mut top = vec![0f32; sw];
    for (row, ty) in dst[..w * h].chunks_exact_mut(w).zip(&ys) {
        for (x, t) in top.iter_mut().enumerate() {
            *t = src[ty.i0 * sw + x] * (1.0 - ty.w1) + src[ty.i1 * sw + x] * ty.w1;
        }
        for (o, tx) in row.iter_mut().zip(&xs) {
            *o = top[tx.i0] * (1.0 - tx.w1) + top[tx.i1] * tx.w1;
        }
    }
}

/// [`interpolate_into`] into a map of its own.
pub fn interpolate(src: &[f32], from: (usize, usize), to: (usize, usize)) -> crate::error::Result<Vec<f32>> {
    let mut out = crate::alloc::vec_of(to.0 * to.1, 0f32, "a resized score map")?;
    interpolate_into(src, from, &mut out, to);
    Ok(out)
}

/// Output pixels `x0..x1` whose taps read the same two source pixels `i0`, `i1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub x0: usize,
    pub x1: usize,
    pub i0: usize,
    pub i1: usize,
}

/// The taps grouped into spans of consecutive output pixels with the same source pixels.
pub fn spans(taps: &[Tap]) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    for (x, t) in taps.iter().enumerate() {
        match spans.last_mut() {
            Some(s) if s.i0 == t.i0 => s.x1 = x + 1,
            _ => spans.push(Span { x0: x, x1: x + 1, i0: t.i0, i1: t.i1 }),
        }
    }
    spans
}

/// What the four source values around a span say about `value > t` for every pixel of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Above,
    Below,
    /// Some above, some not: the span's pixels must be interpolated one by one.
    Mixed,
}

/// The verdict of `span` between source rows `r0` and `r1`. A bilinear value lies between the four
/// values it interpolates, so when all four are above `t` (or none is) so is every pixel of the
/// span. NaN is never above, as the interpolated NaN it gives is not.
pub fn verdict(r0: &[f32], r1: &[f32], span: &Span, t: f32) -> Verdict {
    let corners = [r0[span.i0], r0[span.i1], r1[span.i0], r1[span.i1]];
    match corners.iter().filter(|v| **v > t).count() {
        4 => Verdict::Above,
        0 => Verdict::Below,
        _ => Verdict::Mixed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_map_pixel_centres_onto_pixel_centres() {
        let t = taps(2, 4);
        assert_eq!((t[0].i0, t[0].i1, t[0].w1), (0, 1, 0.0));
        // Output x = 1 sits at source x = 0.25.
        assert_eq!((t[1].i0, t[1].i1, t[1].w1), (0, 1, 0.25));
        // Beyond the last centre: both taps on the last pixel.
        assert_eq!((t[3].i0, t[3].i1), (1, 1));
        assert_eq!(taps_f64(2, 4).iter().map(|t| (t.i0, t.i1)).collect::<Vec<_>>(), t.iter().map(|t| (t.i0, t.i1)).collect::<Vec<_>>());
    }

    #[test]
    fn shrinking_reads_the_four_pixels_around_each_centre_without_averaging() {
        // 4 -> 2: output centres land halfway between source pixels 0|1 and 2|3 (torch gives 0.5
        // and 2.5); an antialiased shrink would be the same here, so 6 -> 2 tells them apart:
        // centres at source 0.5+1 = 1 and 4 -> pixels 1 and 4 exactly.
        let row = [0.0, 10.0, 20.0, 30.0, 40.0, 50.0];
        assert_eq!(interpolate(&row, (6, 1), (2, 1)).unwrap(), vec![10.0, 40.0]);
        assert_eq!(interpolate(&[0.0, 1.0, 2.0, 3.0], (4, 1), (2, 1)).unwrap(), vec![0.5, 2.5]);
    }

    #[test]
    fn spans_group_output_pixels_by_their_source_pixels() {
        let s = spans(&taps(3, 7));
        assert_eq!(s.iter().map(|s| s.i0).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!((s[0].x0, s.last().unwrap().x1), (0, 7));
        assert!(s.windows(2).all(|w| w[0].x1 == w[1].x0));
    }

    #[test]
    fn a_span_is_decided_only_when_its_four_corners_agree() {
        let span = Span { x0: 0, x1: 4, i0: 0, i1: 1 };
        assert_eq!(verdict(&[1.0, 2.0], &[3.0, 4.0], &span, 0.5), Verdict::Above);
        assert_eq!(verdict(&[1.0, 2.0], &[3.0, 4.0], &span, 4.0), Verdict::Below);
        assert_eq!(verdict(&[1.0, 2.0], &[3.0, 4.0], &span, 2.5), Verdict::Mixed);
        assert_eq!(verdict(&[f32::NAN, 2.0], &[3.0, 4.0], &span, 0.5), Verdict::Mixed);
        assert_eq!(verdict(&[f32::NAN; 2], &[f32::NAN; 2], &span, 0.5), Verdict::Below);
    }
}
