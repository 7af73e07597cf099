//! Pixel moments of a region up to the third order, summed exactly in integers from its runs (closed
//! forms per run, no per-pixel loop): the same bits on every platform and in any order of summation.
//! The conventions are OpenCV's `moments(mask, binaryImage=true)`: pixel (x, y) counts at x, y.

use super::runs::Run;

/// Raw moments `m_pq = sum x^p y^q` over a region's pixels, and the central moments `mu_pq` about
/// its centroid.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Moments {
    pub m00: f64,
    pub m10: f64,
    pub m01: f64,
    pub m20: f64,
    pub m11: f64,
    pub m02: f64,
    pub m30: f64,
    pub m21: f64,
    pub m12: f64,
    pub m03: f64,
    pub mu20: f64,
    pub mu11: f64,
    pub mu02: f64,
    pub mu30: f64,
    pub mu21: f64,
    pub mu12: f64,
    pub mu03: f64,
}

/// Exact sums of x^p y^q in coordinates relative to an origin (the region's box corner keeps them
/// small), `s[p][q]` for p + q <= 3.
#[derive(Debug, Clone, Copy, Default)]
pub struct MomentSums {
    s: [[i128; 4]; 4],
}

/// sum of x^k for x in 0..n, k = 0..=3.
fn power_sums(n: i128) -> [i128; 4] {
    let s1 = n * (n - 1) / 2;
    [n, s1, (n - 1) * n * (2 * n - 1) / 6, s1 * s1]
}

impl MomentSums {
    /// Adds pixels `x0..x1` of row `y`, both relative to the origin.
    pub fn add_span(&mut self, y: i128, x0: i128, x1: i128) {
        let (a, b) = (power_sums(x0), power_sums(x1));
        let sx: [i128; 4] = std::array::from_fn(|k| b[k] - a[k]);
        let mut yq = 1i128;
        for q in 0..4 {
            for (p, sum) in sx.iter().enumerate().take(4 - q) {
                self.s[p][q] += sum * yq;
            }
            yq *= y;
        }
    }

    pub fn add_run(&mut self, run: &Run, origin: (u32, u32)) {
        self.add_span(run.y as i128 - origin.1 as i128, run.x0 as i128 - origin.0 as i128, run.x1 as i128 - origin.0 as i128);
    }

    pub fn area(&self) -> u64 {
        self.s[0][0] as u64
    }

    /// The moments in image coordinates, `origin` being where these sums count from.
    pub fn moments(&self, origin: (u32, u32)) -> Moments {
        let s = &self.s;
        let n = s[0][0];
        if n == 0 {
            return Moments::default();
        }
        let (ox, oy) = (origin.0 as i128, origin.1 as i128);
        // Raw moments about (0, 0): binomial shifts of the exact local sums.
        let raw = |p: usize, q: usize| -> f64 {
            let binom = [[1i128, 0, 0, 0], [1, 1, 0, 0], [1, 2, 1, 0], [1, 3, 3, 1]];
            let mut total = 0i128;
            for i in 0..=p {
                for j in 0..=q {
                    total += binom[p][i] * binom[q][j] * ox.pow((p - i) as u32) * oy.pow((q - j) as u32) * s[i][j];
                }
            }
            total as f64
        };
        // Central moments from the local sums: exact numerators over a power of the area where they fit.
        let (x1, y1) = (s[1][0], s[0][1]);
        let second = |a: i128, b: i128, ab: i128| (ab * n - a * b) as f64 / n as f64;
        let third = |p: usize, q: usize| -> f64 {
            // mu_pq for p + q = 3, sum (x - cx)^p (y - cy)^q, as N / n^2 with N exact when it fits.
            let (sx, sy) = (x1, y1);
            let n2 = n.checked_mul(n);
            let exact = n2
                .and_then(|n2| match (p, q) {
                    (3, 0) => exact_sum(&[(1, &[s[3][0], n2]), (-3, &[sx, s[2][0], n]), (2, &[sx, sx, sx])]),
                    (0, 3) => exact_sum(&[(1, &[s[0][3], n2]), (-3, &[sy, s[0][2], n]), (2, &[sy, sy, sy])]),
                    (2, 1) => exact_sum(&[(1, &[s[2][1], n2]), (-1, &[sy, s[2][0], n]), (-2, &[sx, s[1][1], n]), (2, &[sx, sx, sy])]),
                    _ => exact_sum(&[(1, &[s[1][2], n2]), (-1, &[sx, s[0][2], n]), (-2, &[sy, s[1][1], n]), (2, &[sy, sy, sx])]),
                })
                .zip(n2)
                .map(|(term, n2)| term as f64 / n2 as f64);
            exact.unwrap_or_else(|| {
                // Beyond i128 (regions of billions of pixels): the same formula in f64.
                let (nf, cx, cy) = (n as f64, x1 as f64 / n as f64, y1 as f64 / n as f64);
                let f = |p: usize, q: usize| s[p][q] as f64;
                match (p, q) {
                    (3, 0) => f(3, 0) - 3.0 * cx * f(2, 0) + 2.0 * cx * cx * cx * nf,
                    (0, 3) => f(0, 3) - 3.0 * cy * f(0, 2) + 2.0 * cy * cy * cy * nf,
                    (2, 1) => f(2, 1) - 2.0 * cx * f(1, 1) - cy * f(2, 0) + 2.0 * cx * cx * cy * nf,
                    _ => f(1, 2) - 2.0 * cy * f(1, 1) - cx * f(0, 2) + 2.0 * cy * cy * cx * nf,
                }
            })
        };
        Moments {
            m00: n as f64,
            m10: raw(1, 0),
            m01: raw(0, 1),
            m20: raw(2, 0),
            m11: raw(1, 1),
            m02: raw(0, 2),
            m30: raw(3, 0),
            m21: raw(2, 1),
            m12: raw(1, 2),
            m03: raw(0, 3),
            mu20: second(x1, x1, s[2][0]),
            mu11: second(x1, y1, s[1][1]),
            mu02: second(y1, y1, s[0][2]),
            mu30: third(3, 0),
            mu21: third(2, 1),
            mu12: third(1, 2),
            mu03: third(0, 3),
        }
    }

    /// The centroid in image coordinates, each coordinate one division of exact integers.
    pub fn centroid(&self, origin: (u32, u32)) -> (f64, f64) {
        let n = self.s[0][0];
        if n == 0 {
            return (0.0, 0.0);
        }
        let cx = (self.s[1][0] + origin.0 as i128 * n) as f64 / n as f64;
        let cy = (self.s[0][1] + origin.1 as i128 * n) as f64 / n as f64;
        (cx, cy)
    }
}

/// `sum coefficient * product(factors)` in i128, or None where it would overflow.
fn exact_sum(terms: &[(i128, &[i128])]) -> Option<i128> {
    terms.iter().try_fold(0i128, |acc, (coefficient, factors)| {
        let product = factors.iter().try_fold(*coefficient, |p, f| p.checked_mul(*f))?;
        acc.checked_add(product)
    })
}

/// The angle of the region's major axis in degrees, from the x axis and counter-clockwise as seen on
/// screen (y pointing down; HALCON's `orientation_region` convention), in (-90, 90]; 0 for a region
/// without one (a point, a disc, a square).
pub fn orientation_degrees(m: &Moments) -> f64 {
    let (a, b) = (2.0 * m.mu11, m.mu20 - m.mu02);
    if a == 0.0 && b == 0.0 {
        return 0.0;
    }
    // In image coordinates (y down) the axis is at 0.5 * atan2(2 mu11, mu20 - mu02), clockwise on
    // screen; negated for the screen's counter-clockwise. libm: the same bits on every platform.
    let deg = -0.5 * libm::atan2(a, b).to_degrees();
    if deg <= -90.0 {
        deg + 180.0
    } else {
        deg
    }
}
