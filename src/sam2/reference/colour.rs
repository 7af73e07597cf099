//! The taught object's colour, as chromaticity (r / (r + g + b), g / (r + g + b)): a brighter or
//! darker copy of the object has the same. A 16 x 16 histogram of the object's pixels and one of its
//! photo's other pixels give each colour a likelihood of being the object's; gray images put every
//! pixel in one bin, so colour then says nothing and the features decide alone.

use super::grid::Grid;
use crate::image::ImageView;

pub const BINS: usize = 16;
pub const HIST: usize = BINS * BINS;

/// The histogram bin of a pixel's (r, g, b) values (any range; negative values count as 0).
pub fn bin(r: f32, g: f32, b: f32) -> usize {
    let (r, g, b) = (r.max(0.0), g.max(0.0), b.max(0.0));
    // +1 of an 8-bit step keeps black away from a division by zero and close to gray.
    let total = r + g + b + 3.0 * ONE;
    // chromaticities are at most 1, and mostly below 2/3: 1.5 x BINS spreads them over the bins
    let q = |v: f32| (((v + ONE) / total * BINS as f32 * 1.5) as usize).min(BINS - 1);
    q(r) * BINS + q(g)
}

/// An 8-bit step (for 8-bit images; other ranges are scaled to it by `ColourReader`).
const ONE: f32 = 1.0;

/// Reads an image's pixels as (r, g, b) on a 0..255 scale, whatever its format.
pub struct ColourReader<'a> {
    image: &'a ImageView<'a>,
    scale: f32,
}

impl<'a> ColourReader<'a> {
    pub fn new(image: &'a ImageView<'a>) -> Self {
        use crate::image::Sample;
        let scale = match image.format().sample() {
            Sample::U8 => 1.0,
            Sample::U16 | Sample::I16 => 255.0 / 65535.0,
            // float images: 0..1 is the usual range
            Sample::F32 => 255.0,
        };
        ColourReader { image, scale }
    }

    /// Each pixel's bin, row by row (for the rows `rows` gives).
    pub fn bins_of_row(&self, y: usize, out: &mut Vec<usize>, buffers: &mut [Vec<f32>; 3]) {
        for (c, buf) in buffers.iter_mut().enumerate() {
            self.image.colour_row_into(c, y, buf);
        }
        out.clear();
        let s = self.scale;
        out.extend((0..self.image.width()).map(|x| bin(buffers[0][x] * s, buffers[1][x] * s, buffers[2][x] * s)));
    }
}

/// The mean likelihood (`likelihood`, per bin) of each grid cell's pixels, sampled as
/// [`Grid::cell_means`] samples.
pub fn cell_likelihood(image: &ImageView<'_>, grid: &Grid, likelihood: &[f32]) -> Vec<f32> {
    let reader = ColourReader::new(image);
    let (mut bins, mut buffers) = (Vec::new(), [Vec::new(), Vec::new(), Vec::new()]);
    grid.cell_means_by_row(|y, xs, out| {
        reader.bins_of_row(y, &mut bins, &mut buffers);
        out.extend(xs.iter().map(|x| likelihood[bins[*x]]));
    })
}

/// A histogram (summing to 1, with half a count added to every bin so no colour is impossible) of
/// the pixels `inside` selects.
pub fn histogram(image: &ImageView<'_>, inside: impl Fn(usize, usize) -> bool) -> Vec<f32> {
    let reader = ColourReader::new(image);
    let mut counts = vec![0.5f64; HIST];
    let (mut bins, mut buffers) = (Vec::new(), [Vec::new(), Vec::new(), Vec::new()]);
    for y in 0..image.height() {
        reader.bins_of_row(y, &mut bins, &mut buffers);
        for (x, b) in bins.iter().enumerate() {
            if inside(x, y) {
                counts[*b] += 1.0;
            }
        }
    }
    let total: f64 = counts.iter().sum();
    counts.iter().map(|c| (c / total) as f32).collect()
}

/// Each colour's likelihood of being the object's, between 0 and 1: the object's histogram against
/// its photo's other pixels and a flat prior (colours seen in neither are neither).
pub fn likelihood(object: &[f32], background: &[f32]) -> Vec<f32> {
    object.iter().zip(background).map(|(o, b)| o / (o + 0.5 * b + 0.5 / HIST as f32)).collect()
}

/// The Bhattacharyya coefficient of two histograms: 1 for the same colours, 0 for none shared.
pub fn overlap(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| (x * y).sqrt()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::PixelFormat;

    #[test]
    fn brightness_keeps_the_bin_and_gray_is_one_bin() {
        assert_eq!(bin(200.0, 100.0, 50.0), bin(160.0, 80.0, 40.0));
        assert_ne!(bin(200.0, 100.0, 50.0), bin(50.0, 100.0, 200.0));
        assert_eq!(bin(10.0, 10.0, 10.0), bin(240.0, 240.0, 240.0));
    }

    #[test]
    fn histograms_and_their_overlap() {
        // 2000 x 1 RGB: 1000 red pixels, then 1000 blue ones (enough to outweigh the half count
        // every bin starts with)
        let px: Vec<u8> = (0..2000).flat_map(|x| if x < 1000 { [200u8, 0, 0] } else { [0, 0, 200] }).collect();
        let view = ImageView::new(&px, 2000, 1, 6000, PixelFormat::Rgb24).unwrap();
        let red = histogram(&view, |x, _| x < 1000);
        let blue = histogram(&view, |x, _| x >= 1000);
        assert!((red.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!((overlap(&red, &red) - 1.0).abs() < 1e-5);
        assert!(overlap(&red, &blue) < 0.2);
        let l = likelihood(&red, &blue);
        assert!(l[bin(200.0, 0.0, 0.0)] > 0.7 && l[bin(0.0, 0.0, 200.0)] < 0.35);
    }
}
