//! Figures of an outline: its length, convex hull and smallest enclosing rotated rectangle. Integer
//! points in, exact integer arithmetic for every decision (which point is on the hull, which
//! rectangle is smallest), so every platform takes the same ones; floats only for the final values.

use super::Point;

/// The length of a closed polygon (OpenCV's `arcLength(closed=true)`). A pixel chain's steps are 1 or
/// sqrt(2) long: counted, then multiplied once.
pub fn perimeter(points: &[Point]) -> f64 {
    if points.len() < 2 {
        return 0.0;
    }
    let (mut straight, mut diagonal, mut other) = (0u64, 0u64, 0.0f64);
    for (i, a) in points.iter().enumerate() {
        let b = points[(i + 1) % points.len()];
        let (dx, dy) = ((b.x - a.x).unsigned_abs() as u64, (b.y - a.y).unsigned_abs() as u64);
        match (dx, dy) {
            (0, 1) | (1, 0) => straight += 1,
            (1, 1) => diagonal += 1,
            _ => other += ((dx * dx + dy * dy) as f64).sqrt(),
        }
    }
    straight as f64 + diagonal as f64 * std::f64::consts::SQRT_2 + other
}

fn cross(o: Point, a: Point, b: Point) -> i64 {
    (a.x - o.x) as i64 * (b.y - o.y) as i64 - (a.y - o.y) as i64 * (b.x - o.x) as i64
}

/// The convex hull's corners (collinear points left out), counter-clockwise as seen on screen like
/// the outer outlines, starting at the first point in raster order (top row, then left).
pub fn convex_hull(points: &[Point]) -> Vec<Point> {
    let mut p: Vec<Point> = points.to_vec();
    p.sort_unstable_by_key(|q| (q.y, q.x));
    p.dedup();
    convex_hull_sorted(&p)
}

/// [`convex_hull`] of points already in raster order (by y, then x) without repeats.
pub fn convex_hull_sorted(p: &[Point]) -> Vec<Point> {
    if p.len() <= 2 {
        return p.to_vec();
    }
    // Andrew's monotone chain over raster order (y, then x). With y down, a positive cross product is
    // a clockwise turn on screen; keeping only negative ones walks the hull counter-clockwise.
    let mut hull: Vec<Point> = Vec::with_capacity(p.len() + 1);
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &Point>> = if pass == 0 { Box::new(p.iter()) } else { Box::new(p.iter().rev()) };
        for &q in iter {
            while hull.len() >= start + 2 && cross(hull[hull.len() - 2], hull[hull.len() - 1], q) >= 0 {
                hull.pop();
            }
            hull.push(q);
        }
        hull.pop();
    }
    hull
}

/// A rectangle at any angle: centre, side lengths (`width` >= `height`), the angle of the long side
/// in degrees counter-clockwise from the x axis as seen on screen, in (-90, 90], and its corners.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RotatedBox {
    pub cx: f64,
    pub cy: f64,
    pub width: f64,
    pub height: f64,
    pub angle: f64,
    /// Corners in order around the box, the first the one with the smallest y (then x).
    pub corners: [(f64, f64); 4],
}

/// The smallest-area rectangle holding the points (OpenCV's `minAreaRect`), by rotating calipers
/// over the convex hull `hull` (as [`convex_hull`] gives it): one side lies on a hull edge; areas
/// are compared as exact rationals, the first smallest edge in hull order wins.
pub fn min_area_rect(hull: &[Point]) -> RotatedBox {
    match hull.len() {
        0 => return RotatedBox::default(),
        1 => {
            let (x, y) = (hull[0].x as f64, hull[0].y as f64);
            return RotatedBox { cx: x, cy: y, corners: [(x, y); 4], ..RotatedBox::default() };
        }
        _ => {}
    }
    let n = hull.len();
    let dot = |e: (i64, i64), o: Point, p: Point| e.0 * (p.x - o.x) as i64 + e.1 * (p.y - o.y) as i64;
    // Distance from the edge's line, scaled by its length: the hull lies on one side (>= 0 here).
    let away = |e: (i64, i64), o: Point, p: Point| -(e.0 * (p.y - o.y) as i64 - e.1 * (p.x - o.x) as i64);
    // best: (edge index, span along, min along, height), area = along * height / |e|^2.
    let mut best: Option<(usize, i64, i64, i64, i64)> = None;
    let (mut far, mut right, mut left) = (1usize, 1usize, 0usize);
    for i in 0..n {
        let o = hull[i];
        let nxt = hull[(i + 1) % n];
        let e = ((nxt.x - o.x) as i64, (nxt.y - o.y) as i64);
        let len2 = e.0 * e.0 + e.1 * e.1;
        // Calipers: each pointer only moves forward around the hull as the edge turns.
        if i == 0 {
            far = (0..n).max_by_key(|&k| (away(e, o, hull[k]), std::cmp::Reverse(k))).unwrap_or(0);
            right = (0..n).max_by_key(|&k| (dot(e, o, hull[k]), std::cmp::Reverse(k))).unwrap_or(0);
            left = (0..n).min_by_key(|&k| (dot(e, o, hull[k]), k)).unwrap_or(0);
        } else {
            while away(e, o, hull[(far + 1) % n]) >= away(e, o, hull[far]) && (far + 1) % n != i {
                far = (far + 1) % n;
            }
            while dot(e, o, hull[(right + 1) % n]) >= dot(e, o, hull[right]) && (right + 1) % n != i {
                right = (right + 1) % n;
            }
            while dot(e, o, hull[(left + 1) % n]) <= dot(e, o, hull[left]) && (left + 1) % n != (i + 1) % n {
                left = (left + 1) % n;
            }
        }
        let (lo, hi, h) = (dot(e, o, hull[left]), dot(e, o, hull[right]), away(e, o, hull[far]));
        let span = hi - lo;
        let smaller = match best {
            None => true,
            // span*h/len2 < bspan*bh/blen2, in i128 (each product below 2^126 for sides up to 2^20)
            Some((_, bspan, _, bh, blen2)) => (span as i128 * h as i128) * (blen2 as i128) < (bspan as i128 * bh as i128) * (len2 as i128),
        };
        if smaller {
            best = Some((i, span, lo, h, len2));
        }
    }
    let Some((i, span, lo, h, len2)) = best else { return RotatedBox::default() };
    let o = hull[i];
    let nxt = hull[(i + 1) % n];
    let len = (len2 as f64).sqrt();
    let (ux, uy) = ((nxt.x - o.x) as f64 / len, (nxt.y - o.y) as f64 / len);
    // The inward normal: the side the hull lies on (away() >= 0).
    let (vx, vy) = (uy, -ux);
    let (a0, a1) = (lo as f64 / len, (lo + span) as f64 / len);
    let b1 = h as f64 / len;
    let corner = |a: f64, b: f64| (o.x as f64 + ux * a + vx * b, o.y as f64 + uy * a + vy * b);
    let mut corners = [corner(a0, 0.0), corner(a1, 0.0), corner(a1, b1), corner(a0, b1)];
    let first = (0..4)
        .min_by(|&p, &q| (corners[p].1, corners[p].0).partial_cmp(&(corners[q].1, corners[q].0)).unwrap_or(std::cmp::Ordering::Equal));
    corners.rotate_left(first.unwrap_or(0));
    let (along, across) = (a1 - a0, b1);
    let (width, height, (dx, dy)) = if along >= across { (along, across, (ux, uy)) } else { (across, along, (vx, vy)) };
    // Screen counter-clockwise: y points down, so the angle of (dx, dy) is atan2(-dy, dx).
    let mut angle = libm::atan2(-dy, dx).to_degrees();
    if angle <= -90.0 {
        angle += 180.0;
    } else if angle > 90.0 {
        angle -= 180.0;
    }
    let cx = corners.iter().map(|c| c.0).sum::<f64>() / 4.0;
    let cy = corners.iter().map(|c| c.1).sum::<f64>() / 4.0;
    RotatedBox { cx, cy, width, height, angle, corners }
}
