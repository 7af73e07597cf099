//! Tiled inference: the image cut into model-sized tiles at full resolution, their scores blended
//! where they overlap, so seams do not show.

use crate::alloc;
use crate::error::{Error, Result};
use crate::image::resize::resize_f32;
use crate::options::ResizeFilter;

use super::postprocess::ScoreMaps;

/// More tiles than this means tiles far too small for the image: refused rather than run for hours.
pub const MAX_TILES: usize = 100_000;

/// One tile: the image region it covers (smaller than the tile only where the image is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tile {
    pub x: usize,
    pub y: usize,
    pub w: usize,
    pub h: usize,
}

/// Tile positions along both axes: the first at 0, the last flush with the far edge, spread evenly
/// so neighbours share at least `overlap` pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct TileGrid {
    pub xs: Vec<usize>,
    pub ys: Vec<usize>,
    pub tile: (usize, usize),
    pub image: (usize, usize),
    pub overlap: usize,
}

impl TileGrid {
    pub fn new(image: (usize, usize), tile: (usize, usize), overlap: usize) -> Self {
        fn starts(len: usize, tile: usize, overlap: usize) -> Vec<usize> {
            if len <= tile {
                return vec![0];
            }
            let step = tile - overlap;
            let n = (len - overlap).div_ceil(step);
            (0..n).map(|i| (i * (len - tile) + (n - 1) / 2) / (n - 1)).collect()
        }
        TileGrid { xs: starts(image.0, tile.0, overlap), ys: starts(image.1, tile.1, overlap), tile, image, overlap }
    }

    pub fn tiles(&self) -> Vec<Tile> {
        let (w, h) = (self.tile.0.min(self.image.0), self.tile.1.min(self.image.1));
        self.ys.iter().flat_map(|&y| self.xs.iter().map(move |&x| Tile { x, y, w, h })).collect()
    }

    /// Blend weights along one axis of a tile starting at `start` covering `len` pixels: 1 inside,
    /// falling linearly towards an edge that another tile overlaps; never 0.
    fn weights(&self, start: usize, len: usize, image_len: usize) -> Vec<f32> {
        let ramp = (self.overlap + 1) as f32;
        (0..len)
            .map(|i| {
                let from_start = if start == 0 { 1.0 } else { (i + 1) as f32 / ramp };
                let from_end = if start + len == image_len { 1.0 } else { (len - i) as f32 / ramp };
                from_start.min(from_end).min(1.0)
            })
            .collect()
    }
}

/// Weighted sums of tile scores over the whole image. The weights are separable and every tile
/// row meets every tile column, so the sum of weights is a product of two 1-D sums.
pub struct Blend<'a> {
    grid: &'a TileGrid,
    sum: ScoreMaps,
    weight_x: Vec<f32>,
    weight_y: Vec<f32>,
}

impl<'a> Blend<'a> {
    pub fn new(classes: usize, (w, h): (usize, usize), grid: &'a TileGrid) -> Result<Self> {
        let (mut weight_x, mut weight_y) = (vec![0f32; w], vec![0f32; h]);
        let (tw, th) = (grid.tile.0.min(w), grid.tile.1.min(h));
        for &x in &grid.xs {
            weight_x[x..x + tw].iter_mut().zip(grid.weights(x, tw, w)).for_each(|(s, v)| *s += v);
        }
        for &y in &grid.ys {
            weight_y[y..y + th].iter_mut().zip(grid.weights(y, th, h)).for_each(|(s, v)| *s += v);
        }
        let data = alloc::vec_of(classes * w * h, 0f32, "the blended score maps")?;
        Ok(Blend { grid, sum: ScoreMaps { classes, width: w, height: h, data }, weight_x, weight_y })
    }

    /// Adds one tile's scores (at the tile's size; padding beyond the image is dropped).
    pub fn add(&mut self, tile: &Tile, maps: ScoreMaps) -> Result<()> {
        let (tw, th) = self.grid.tile;
        if maps.classes != self.sum.classes {
            return Err(Error::unsupported_model(format!("a tile gave {} classes, the model declares {}", maps.classes, self.sum.classes)));
        }
        // An output smaller than the input (a stride-2 head, say) is brought to the tile's size.
        let maps = if (maps.width, maps.height) == (tw, th) {
            maps
        } else {
            let plane = maps.width * maps.height;
            let data = (0..maps.classes)
                .map(|c| resize_f32(&maps.data[c * plane..(c + 1) * plane], (maps.width, maps.height), (tw, th), ResizeFilter::Bilinear))
                .collect::<Result<Vec<_>>>()?
                .concat();
            ScoreMaps { classes: maps.classes, width: tw, height: th, data }
        };
        let (wx, wy) = (self.grid.weights(tile.x, tile.w, self.sum.width), self.grid.weights(tile.y, tile.h, self.sum.height));
        let (w, plane) = (self.sum.width, self.sum.width * self.sum.height);
        for c in 0..maps.classes {
            for (ty, wy) in wy.iter().enumerate() {
                let src = &maps.data[c * tw * th + ty * tw..][..tile.w];
                let dst = &mut self.sum.data[c * plane + (tile.y + ty) * w + tile.x..][..tile.w];
                for ((d, s), wx) in dst.iter_mut().zip(src).zip(&wx) {
                    *d += s * wx * wy;
                }
            }
        }
        Ok(())
    }

    /// The blended scores: weighted sums divided by the sum of weights.
    pub fn finish(mut self) -> ScoreMaps {
        let (w, h) = (self.sum.width, self.sum.height);
        for plane in self.sum.data.chunks_exact_mut(w * h) {
            for (row, wy) in plane.chunks_exact_mut(w).zip(&self.weight_y) {
                row.iter_mut().zip(&self.weight_x).for_each(|(v, wx)| *v /= wx * wy);
            }
        }
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiles_cover_the_image_with_at_least_the_overlap() {
        for (len, tile, overlap) in
            [(1000usize, 256usize, 64usize), (256, 256, 32), (257, 256, 0), (5000, 512, 64), (100, 256, 64), (700, 256, 100)]
        {
            let grid = TileGrid::new((len, 10), (tile, 10), overlap);
            let xs = &grid.xs;
            assert_eq!(xs[0], 0);
            assert_eq!(xs.last().unwrap() + tile.min(len), len, "{len} {tile} {overlap}: {xs:?}");
            for pair in xs.windows(2) {
                assert!(pair[1] > pair[0] && pair[0] + tile >= pair[1] + overlap, "{len} {tile} {overlap}: {xs:?}");
            }
        }
    }

    #[test]
    fn blending_equal_tiles_gives_the_same_scores() {
        // Every tile reports 0.25 everywhere: whatever the weights, the blend is 0.25 everywhere.
        let grid = TileGrid::new((300, 200), (64, 48), 16);
        let mut blend = Blend::new(1, (300, 200), &grid).unwrap();
        for tile in grid.tiles() {
            blend.add(&tile, ScoreMaps { classes: 1, width: 64, height: 48, data: vec![0.25; 64 * 48] }).unwrap();
        }
        let out = blend.finish();
        assert!(out.data.iter().all(|v| (v - 0.25).abs() < 1e-6));
    }

    #[test]
    fn blending_puts_each_tile_pixel_where_it_belongs() {
        // Each tile reports the image x coordinate of its pixels: the blend must be x everywhere.
        let grid = TileGrid::new((130, 70), (40, 30), 8);
        let mut blend = Blend::new(1, (130, 70), &grid).unwrap();
        for tile in grid.tiles() {
            let data = (0..40 * 30).map(|i| (tile.x + i % 40) as f32).collect();
            blend.add(&tile, ScoreMaps { classes: 1, width: 40, height: 30, data }).unwrap();
        }
        let out = blend.finish();
        for (i, v) in out.data.iter().enumerate() {
            assert!((v - (i % 130) as f32).abs() < 1e-3, "pixel {i}: {v}");
        }
    }
}
