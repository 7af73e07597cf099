//! The reference's numerics where segrt must match them bit for bit: bfloat16 storage, torch's
//! bilinear upsampling and its antialiased bilinear resize (the mask prompt's).

use crate::image::bilinear::interpolate_into;

/// float32 -> bfloat16 -> float32, round to nearest even (torch's `.to(torch.bfloat16)`).
pub fn bf16_round(x: f32) -> f32 {
    let b = x.to_bits();
    let rounding = ((b >> 16) & 1) + 0x7FFF;
    f32::from_bits(b.wrapping_add(rounding) & 0xFFFF_0000)
}

/// `torch.nn.functional.interpolate(mode="bilinear", align_corners=False)` of one `sw x sh` map to
/// `w x h` in float32, computed as the reference does (video_ort_tracker.resize_bilinear).
pub fn upsample_bilinear(src: &[f32], from: (usize, usize), (w, h): (usize, usize)) -> Vec<f32> {
    let mut out = vec![0f32; w * h];
    interpolate_into(src, from, &mut out, (w, h));
    out
}

/// One axis of torch's antialiased bilinear resize (`_compute_weights_aa` in ATen's
/// `UpSampleKernel.cpp`, float32 as torch computes it for a float32 tensor): per output index the
/// first source index and the normalised triangle-filter weights.
fn aa_weights(n: usize, m: usize) -> Vec<(usize, Vec<f32>)> {
    let scale = n as f32 / m as f32;
    let support: f32 = if scale >= 1.0 { scale } else { 1.0 };
    let invscale: f32 = if scale >= 1.0 { (1.0 / scale as f64) as f32 } else { 1.0 };
    let max_size = support.ceil() as i64 * 2 + 1;
    (0..m)
        .map(|i| {
            let center = (scale as f64 * (i as f64 + 0.5)) as f32;
            // C casts truncate toward zero.
            let xmin = (((center - support) as f64 + 0.5) as i64).max(0);
            let xsize = ((((center + support) as f64 + 0.5) as i64).min(n as i64) - xmin).clamp(0, max_size);
            let mut w: Vec<f32> = (0..xsize)
                .map(|j| {
                    let x = ((((j + xmin) as f32 - center) as f64 + 0.5) * invscale as f64) as f32;
                    (1.0 - x.abs()).max(0.0)
                })
                .collect();
            let total: f32 = w.iter().fold(0.0, |a, b| a + b);
            if total != 0.0 {
                w.iter_mut().for_each(|v| *v /= total);
            }
            (xmin as usize, w)
        })
        .collect()
}

/// `torch.nn.functional.interpolate(mode="bilinear", align_corners=False, antialias=True)` of one
/// `sw x sh` map to `w x h` in float32: the horizontal pass first, then the vertical one, an axis
/// whose size does not change left alone (as ATen's separable kernel).
pub fn resize_bilinear_antialiased(src: &[f32], (sw, sh): (usize, usize), (w, h): (usize, usize)) -> Vec<f32> {
    let apply = |row: &dyn Fn(usize) -> f32, (x0, k): &(usize, Vec<f32>)| -> f32 {
        let mut acc = row(*x0) * k[0];
        for (j, kj) in k.iter().enumerate().skip(1) {
            acc += row(x0 + j) * kj;
        }
        acc
    };
    let horizontal: Vec<f32> = if sw == w {
        src[..sw * sh].to_vec()
    } else {
        let k = aa_weights(sw, w);
        (0..sh).flat_map(|y| k.iter().map(move |kx| (y, kx))).map(|(y, kx)| apply(&|x| src[y * sw + x], kx)).collect()
    };
    if sh == h {
        return horizontal;
    }
    let k = aa_weights(sh, h);
    let mut out = vec![0f32; w * h];
    for (y, ky) in k.iter().enumerate() {
        for x in 0..w {
            out[y * w + x] = apply(&|yy| horizontal[yy * w + x], ky);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        // 1 + 2^-8 is halfway between two bfloat16 values: ties go to the even one (1.0).
        assert_eq!(bf16_round(1.0 + 2f32.powi(-8)), 1.0);
        // 1 + 3 * 2^-8 is halfway too: the even neighbour is 1 + 2^-6.
        assert_eq!(bf16_round(1.0 + 3.0 * 2f32.powi(-8)), 1.0 + 2f32.powi(-6));
        assert_eq!(bf16_round(-2.5), -2.5);
        assert_eq!(bf16_round(1.0 + 2f32.powi(-7) + 2f32.powi(-10)), 1.0 + 2f32.powi(-7));
    }

    #[test]
    fn upsampling_keeps_corners_and_interpolates_between_centres() {
        let src = [0.0, 1.0, 2.0, 3.0];
        let out = upsample_bilinear(&src, (2, 2), (4, 4));
        assert_eq!(out[0], 0.0);
        assert_eq!(out[15], 3.0);
        // Output x = 1 sits at source x = 0.25: a quarter of the way to the right neighbour.
        assert_eq!(out[1], 0.25);
    }

    #[test]
    fn antialiased_resize_averages_when_shrinking_and_keeps_constants() {
        // 4 -> 1 by a factor 4: the triangle filter stretched 4 times around the centre (2.0)
        // weights the pixel centres 0.5..3.5 as 0.625, 0.875, 0.875, 0.625 (then normalised).
        let out = resize_bilinear_antialiased(&[0.0, 8.0, 8.0, 0.0], (4, 1), (1, 1));
        assert!((out[0] - 14.0 / 3.0).abs() < 1e-5, "{out:?}");
        let flat = resize_bilinear_antialiased(&[3.0; 12 * 7], (12, 7), (5, 9));
        assert!(flat.iter().all(|v| (v - 3.0).abs() < 1e-6));
    }
}
