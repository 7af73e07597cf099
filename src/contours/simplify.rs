//! Outline simplification by a tolerance: Douglas-Peucker on a closed polygon as OpenCV's
//! `approxPolyDP(closed=true)` runs it (its choice of the two points the polygon is first split at,
//! its point-to-segment distance, its last pass over nearly straight corners), so a tolerance means
//! what it means there and the vertices agree with it. Kept points are points of the input.
//! (`geo`'s simplification keeps a ring's first point and differs in those choices.)

use super::Point;

/// The closed polygon `points` with every point within `tolerance` pixels of the result dropped.
/// `tolerance` must be finite and >= 0 (checked by the caller); 0 keeps every point but repeats.
pub fn simplify_closed(points: &[Point], tolerance: f64) -> Vec<Point> {
    let n = points.len();
    if n == 0 {
        return Vec::new();
    }
    let eps2 = tolerance * tolerance;
    let d2 = |a: Point, b: Point| {
        let (dx, dy) = ((a.x - b.x) as f64, (a.y - b.y) as f64);
        dx * dx + dy * dy
    };
    // 1. Two points far apart to split the ring at: the farthest from point 0, the farthest from that
    //    one, and once more (three rounds), each search starting at the previous round's point.
    let mut start = 0usize;
    let mut far_offset = 0usize;
    let mut within = false;
    for round in 0..3 {
        if round > 0 {
            start = (start + far_offset) % n;
        }
        let (mut best, mut best_d) = (0usize, 0.0f64);
        for j in 1..n {
            let d = d2(points[(start + j) % n], points[start]);
            if d > best_d {
                best_d = d;
                best = j;
            }
        }
        far_offset = best;
        within = best_d <= eps2;
    }
    let mut kept: Vec<Point> = Vec::new();
    if within {
        kept.push(points[start]);
    } else {
        // 2. Split recursively (an explicit stack, the first half first): a slice from a to b (ring
        //    indices, b excluded from the output) keeps a when every point between is within the
        //    tolerance of segment a-b, else splits at the farthest point.
        let far = (start + far_offset) % n;
        let mut stack = vec![(far, start), (start, far)];
        while let Some((a, b)) = stack.pop() {
            let (pa, pb) = (points[a], points[b]);
            let mut i = (a + 1) % n;
            if i == b {
                kept.push(pa);
                continue;
            }
            let (dx, dy) = ((pb.x - pa.x) as f64, (pb.y - pa.y) as f64);
            let seg2 = dx * dx + dy * dy;
            let (mut worst, mut worst_d) = (a, 0.0f64);
            while i != b {
                let p = points[i];
                let (px, py) = ((p.x - pa.x) as f64, (p.y - pa.y) as f64);
                let along = px * dx + py * dy;
                // Squared distance to the segment, times its squared length (no division).
                let d = if along < 0.0 {
                    (px * px + py * py) * seg2
                } else if along > seg2 {
                    d2(p, pb) * seg2
                } else {
                    let c = py * dx - px * dy;
                    c * c
                };
                if d > worst_d {
                    worst_d = d;
                    worst = i;
                }
                i = (i + 1) % n;
            }
            if worst_d <= eps2 * seg2 {
                kept.push(pa);
            } else {
                stack.push((worst, b));
                stack.push((a, worst));
            }
        }
    }
    drop_straight_corners(kept, eps2)
}

/// 3. One pass around the ring dropping a point that lies nearly on the segment joining its
///    neighbours (within half the squared tolerance, strictly between them), for segments that are
///    neither horizontal nor vertical. As in OpenCV, the pass rewrites the ring in place: after a drop
///    the next point becomes the segment's start and is not examined itself, and the last corner is
///    judged against the ring's first point as rewritten.
fn drop_straight_corners(mut ring: Vec<Point>, eps2: f64) -> Vec<Point> {
    let count = ring.len();
    if count <= 2 {
        return ring;
    }
    let mut left = count;
    let mut start = ring[count - 1];
    let mut cur = ring[0];
    let (mut read, mut write) = (1 % count, 0usize);
    let mut i = 0;
    while i < count && left > 2 {
        let end = ring[read];
        read = (read + 1) % count;
        let (dx, dy) = ((end.x - start.x) as f64, (end.y - start.y) as f64);
        let (cx, cy) = ((cur.x - start.x) as f64, (cur.y - start.y) as f64);
        let dist = (cx * dy - cy * dx).abs();
        let inner = cx * (end.x - cur.x) as f64 + cy * (end.y - cur.y) as f64;
        if dist * dist <= 0.5 * eps2 * (dx * dx + dy * dy) && dx != 0.0 && dy != 0.0 && inner >= 0.0 {
            left -= 1;
            ring[write] = end;
            start = end;
            write = (write + 1) % count;
            cur = ring[read];
            read = (read + 1) % count;
            i += 2;
            continue;
        }
        ring[write] = cur;
        start = cur;
        write = (write + 1) % count;
        cur = end;
        i += 1;
    }
    ring.truncate(left);
    ring
}
