//! The prompt points: the reference generator's grid.

/// The reference's point grid (`build_point_grid`) for one side: numpy `linspace(1/2n, 1 - 1/2n, n)`.
pub fn grid_1d(n: usize) -> Vec<f64> {
    let offset = 1.0 / (2.0 * n as f64);
    let (start, stop) = (offset, 1.0 - offset);
    if n == 1 {
        return vec![start];
    }
    let step = (stop - start) / (n - 1) as f64;
    let mut v: Vec<f64> = (0..n).map(|i| i as f64 * step + start).collect();
    v[n - 1] = stop;
    v
}

/// The prompt points in image pixels (x varies fastest, as the reference's grid).
pub fn prompt_points(n: usize, (w, h): (usize, usize)) -> Vec<[f32; 2]> {
    let g = grid_1d(n);
    let mut points = Vec::with_capacity(n * n);
    for gy in &g {
        for gx in &g {
            points.push([(gx * w as f64) as f32, (gy * h as f64) as f32]);
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_numpys_linspace() {
        assert_eq!(grid_1d(1), vec![0.5]);
        assert_eq!(grid_1d(4), vec![0.125, 0.375, 0.625, 0.875]);
        let p = prompt_points(2, (100, 50));
        assert_eq!(p, vec![[25.0, 12.5], [75.0, 12.5], [25.0, 37.5], [75.0, 37.5]]);
    }
}
