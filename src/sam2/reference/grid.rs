//! Where the encoder's feature grid lies on an image: SAM1 exports put the image, long side to the
//! model size, in the frame's top-left corner (the rest is padding); SAM2 exports stretch it over
//! the whole frame. A grid cell is `frame / cols` model pixels wide.

use crate::error::{Error, Result};

/// The encoder's grid over one image of `width x height` pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub rows: usize,
    pub cols: usize,
    pub width: usize,
    pub height: usize,
    /// Model pixels per image pixel, per axis.
    scale: (f64, f64),
    /// Model pixels per cell, per axis.
    cell: (f64, f64),
    /// Cells that hold part of the image (the rest is the SAM1 padding).
    valid_rows: usize,
    valid_cols: usize,
}

impl Grid {
    /// `frame`: ((width, height) of the image's part of the frame, frame side), in model pixels.
    pub fn new(((fw, fh), side): ((f64, f64), f64), (width, height): (usize, usize), (rows, cols): (usize, usize)) -> Result<Self> {
        if width == 0 || height == 0 || rows == 0 || cols == 0 || side <= 0.0 {
            return Err(Error::invalid(format!("an empty grid ({rows}x{cols}) or image ({width}x{height})")));
        }
        let cell = (side / cols as f64, side / rows as f64);
        let valid = |part: f64, c: f64, n: usize| ((part / c).ceil() as usize).clamp(1, n);
        Ok(Grid {
            rows,
            cols,
            width,
            height,
            scale: (fw / width as f64, fh / height as f64),
            cell,
            valid_rows: valid(fh, cell.1, rows),
            valid_cols: valid(fw, cell.0, cols),
        })
    }

    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }

    /// Whether cell `i` (row-major) holds part of the image.
    pub fn valid(&self, i: usize) -> bool {
        i / self.cols < self.valid_rows && i % self.cols < self.valid_cols
    }

    /// The cell of image pixel (x, y) (its centre), row-major.
    pub fn cell_of(&self, x: usize, y: usize) -> usize {
        let c = (((x as f64 + 0.5) * self.scale.0 / self.cell.0) as usize).min(self.cols - 1);
        let r = (((y as f64 + 0.5) * self.scale.1 / self.cell.1) as usize).min(self.rows - 1);
        r * self.cols + c
    }

    /// The centre of cell `i` in image pixels (x, y), kept inside the image.
    pub fn centre(&self, i: usize) -> (f32, f32) {
        let (r, c) = (i / self.cols, i % self.cols);
        let x = (c as f64 + 0.5) * self.cell.0 / self.scale.0;
        let y = (r as f64 + 0.5) * self.cell.1 / self.scale.1;
        (x.clamp(0.0, (self.width - 1) as f64) as f32, y.clamp(0.0, (self.height - 1) as f64) as f32)
    }

    /// Image pixels per cell (x, y).
    pub fn cell_pixels(&self) -> (f64, f64) {
        (self.cell.0 / self.scale.0, self.cell.1 / self.scale.1)
    }

    /// The share of each cell's pixels that `inside` says are in (cells without pixels: 0).
    pub fn coverage(&self, inside: impl Fn(usize, usize) -> bool) -> Vec<f32> {
        let mut total = vec![0u32; self.cells()];
        let mut hits = vec![0u32; self.cells()];
        for y in 0..self.height {
            for x in 0..self.width {
                let i = self.cell_of(x, y);
                total[i] += 1;
                hits[i] += inside(x, y) as u32;
            }
        }
        total.iter().zip(&hits).map(|(t, h)| if *t == 0 { 0.0 } else { *h as f32 / *t as f32 }).collect()
    }

    /// The mean of `value` over each cell, sampled on a sub-grid of about 4 x 4 pixels per cell
    /// (cells without samples: 0).
    pub fn cell_means(&self, value: impl Fn(usize, usize) -> f32) -> Vec<f32> {
        self.cell_means_by_row(|y, xs, out| out.extend(xs.iter().map(|x| value(*x, y))))
    }

    /// Pixels between samples for [`cell_means`](Self::cell_means): about 4 x 4 per cell.
    pub fn sample_step(&self) -> usize {
        let (px, py) = self.cell_pixels();
        ((px.min(py) / 4.0).floor() as usize).max(1)
    }

    /// As [`cell_means`](Self::cell_means), the values of a sampled row `y` at columns `xs` given at
    /// once (`row(y, xs, out)` appends them): for sources read row by row.
    pub fn cell_means_by_row(&self, mut row: impl FnMut(usize, &[usize], &mut Vec<f32>)) -> Vec<f32> {
        let step = self.sample_step();
        let xs: Vec<usize> = (step / 2..self.width).step_by(step).collect();
        let mut sum = vec![0f32; self.cells()];
        let mut count = vec![0u32; self.cells()];
        let mut values = Vec::with_capacity(xs.len());
        for y in (step / 2..self.height).step_by(step) {
            values.clear();
            row(y, &xs, &mut values);
            for (x, v) in xs.iter().zip(&values) {
                let i = self.cell_of(*x, y);
                sum[i] += v;
                count[i] += 1;
            }
        }
        sum.iter().zip(&count).map(|(s, n)| if *n == 0 { 0.0 } else { s / *n as f32 }).collect()
    }

    /// Distance between cells `a` and `b`, in cells.
    pub fn distance(&self, a: usize, b: usize) -> f32 {
        let (ra, ca) = ((a / self.cols) as f32, (a % self.cols) as f32);
        let (rb, cb) = ((b / self.cols) as f32, (b % self.cols) as f32);
        ((ra - rb).powi(2) + (ca - cb).powi(2)).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sam1_frames_leave_padding_cells_out() {
        // 800 x 400 into a 1024 frame: 1024 x 512 model pixels, 64 x 32 of 64 x 64 cells.
        let g = Grid::new(((1024.0, 512.0), 1024.0), (800, 400), (64, 64)).unwrap();
        assert!(g.valid(31 * 64 + 63));
        assert!(!g.valid(32 * 64));
        assert_eq!(g.cell_of(0, 0), 0);
        assert_eq!(g.cell_of(799, 399), 31 * 64 + 63);
        // a cell is 12.5 image pixels here
        let (x, y) = g.centre(64 + 2);
        assert!((x - 31.25).abs() < 1e-3 && (y - 18.75).abs() < 1e-3, "{x} {y}");
    }

    #[test]
    fn sam2_frames_stretch_each_axis() {
        let g = Grid::new(((256.0, 256.0), 256.0), (100, 50), (16, 16)).unwrap();
        assert!(g.valid(255));
        assert_eq!(g.cell_of(99, 49), 255);
        let (x, y) = g.centre(0);
        assert!((x - 3.125).abs() < 1e-3 && (y - 1.5625).abs() < 1e-3);
    }

    #[test]
    fn coverage_is_the_share_of_pixels_inside() {
        let g = Grid::new(((16.0, 16.0), 16.0), (16, 16), (4, 4)).unwrap();
        let cover = g.coverage(|x, y| x < 6 && y < 4);
        assert_eq!(cover[0], 1.0);
        assert_eq!(cover[1], 0.5);
        assert_eq!(cover[2], 0.0);
        assert_eq!(cover[4], 0.0);
        let means = g.cell_means(|x, _| x as f32);
        assert_eq!(means[0], 1.5);
    }
}
