//! The reference's numerics where segrt must match them bit for bit: bfloat16 storage and torch's
//! bilinear upsampling.

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
}
