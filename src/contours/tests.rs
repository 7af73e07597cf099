//! Unit tests of the region finder against brute-force definitions (per-pixel moments, flood-fill
//! components, all-edges rectangles) on seeded random masks, and against OpenCV's outputs for small
//! shapes (the point lists `findContours` printed for them).

use super::*;

fn lcg(seed: &mut u64) -> u64 {
    crate::test_random::next(seed) >> 33
}

fn random_mask(w: usize, h: usize, density: u64, seed: u64) -> Vec<u8> {
    let mut s = seed;
    (0..w * h).map(|_| if lcg(&mut s) % 100 < density { 255 } else { 0 }).collect()
}

fn pts(v: &[[i32; 2]]) -> Vec<Point> {
    v.iter().map(|p| Point { x: p[0], y: p[1] }).collect()
}

fn binary(data: &[u8], w: usize, h: usize) -> Vec<Region> {
    regions(&MaskView::new(data, w, h, 0).unwrap(), &RegionOptions::default()).unwrap()
}

#[test]
fn a_ring_and_a_dot_give_opencvs_outlines() {
    // cv2.findContours(m, RETR_CCOMP, CHAIN_APPROX_NONE) on this 10x8 mask printed these chains.
    let (w, h) = (10, 8);
    let mut m = vec![0u8; w * h];
    for y in 2..6 {
        for x in 2..8 {
            m[y * w + x] = 1;
        }
    }
    for y in 3..5 {
        for x in 4..6 {
            m[y * w + x] = 0;
        }
    }
    m[9] = 1;
    let r = binary(&m, w, h);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].outer, pts(&[[9, 0]]));
    assert_eq!(
        r[1].outer,
        pts(&[
            [2, 2],
            [2, 3],
            [2, 4],
            [2, 5],
            [3, 5],
            [4, 5],
            [5, 5],
            [6, 5],
            [7, 5],
            [7, 4],
            [7, 3],
            [7, 2],
            [6, 2],
            [5, 2],
            [4, 2],
            [3, 2]
        ])
    );
    assert_eq!(r[1].holes, vec![pts(&[[3, 3], [4, 2], [5, 2], [6, 3], [6, 4], [5, 5], [4, 5], [3, 4]])]);
    assert_eq!((r[1].figures.area, r[1].figures.hole_count, r[1].figures.hole_area), (20, 1, 4));
    // cv2.moments(m, True) of the ring alone: m00 20, m10 90, m01 70, mu20 69, mu11 0, mu02 29, mu30 0.
    let mo = r[1].figures.moments;
    assert_eq!((mo.m00, mo.m10, mo.m01, mo.mu20, mo.mu11, mo.mu02, mo.mu30), (20.0, 90.0, 70.0, 69.0, 0.0, 29.0, 0.0));
    assert_eq!((mo.m20, mo.m30, mo.m21, mo.m12, mo.m03), (474.0, 2754.0, 1659.0, 1233.0, 1162.0));
    assert_eq!(r[1].figures.bbox, PixelBox { x: 2, y: 2, width: 6, height: 4 });
}

#[test]
fn a_diagonal_chain_goes_out_and_back() {
    let mut m = vec![0u8; 16];
    for i in 0..4 {
        m[i * 4 + i] = 1;
    }
    let r = binary(&m, 4, 4);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].outer, pts(&[[0, 0], [1, 1], [2, 2], [3, 3], [2, 2], [1, 1]]));
    let four =
        regions(&MaskView::new(&m, 4, 4, 0).unwrap(), &RegionOptions { connectivity: Connectivity::Four, ..Default::default() }).unwrap();
    assert_eq!(four.len(), 4);
    assert!(four.iter().all(|r| r.figures.area == 1 && r.outer.len() == 1));
}

#[test]
fn a_full_mask_traces_the_image_border() {
    let m = vec![1u8; 5 * 4];
    let r = binary(&m, 5, 4);
    assert_eq!(
        r[0].outer,
        pts(&[[0, 0], [0, 1], [0, 2], [0, 3], [1, 3], [2, 3], [3, 3], [4, 3], [4, 2], [4, 1], [4, 0], [3, 0], [2, 0], [1, 0]])
    );
    assert!(binary(&[0u8; 20], 5, 4).is_empty());
}

/// Components by flood fill, each as a sorted pixel list, for comparison.
fn flood_components(m: &[u8], w: usize, h: usize, eight: bool) -> Vec<Vec<(usize, usize)>> {
    let mut seen = vec![false; w * h];
    let mut out = Vec::new();
    for start in 0..w * h {
        if m[start] == 0 || seen[start] {
            continue;
        }
        let mut stack = vec![start];
        seen[start] = true;
        let mut pix = Vec::new();
        while let Some(i) = stack.pop() {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            pix.push((y as usize, x as usize));
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    if (dx == 0 && dy == 0) || (!eight && dx != 0 && dy != 0) {
                        continue;
                    }
                    let (nx, ny) = (x + dx, y + dy);
                    if nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64 {
                        let j = ny as usize * w + nx as usize;
                        if m[j] == m[i] && !seen[j] {
                            seen[j] = true;
                            stack.push(j);
                        }
                    }
                }
            }
        }
        pix.sort();
        out.push(pix);
    }
    out
}

#[test]
fn components_areas_and_moments_equal_the_per_pixel_definitions() {
    for (seed, density) in [(1u64, 30u64), (2, 50), (3, 60), (4, 80)] {
        let (w, h) = (37, 23);
        let m = random_mask(w, h, density, seed);
        for connectivity in [Connectivity::Eight, Connectivity::Four] {
            let eight = connectivity == Connectivity::Eight;
            let want = flood_components(&m, w, h, eight);
            let got = regions(&MaskView::new(&m, w, h, 0).unwrap(), &RegionOptions { connectivity, outlines: false, ..Default::default() })
                .unwrap();
            assert_eq!(got.len(), want.len(), "seed {seed} {connectivity:?}");
            for (r, pix) in got.iter().zip(&want) {
                // Raster order of the first pixel: flood fill also starts at each component's first pixel.
                let n = pix.len() as f64;
                let sum = |f: &dyn Fn(f64, f64) -> f64| pix.iter().map(|&(y, x)| f(x as f64, y as f64)).sum::<f64>();
                let (cx, cy) = (sum(&|x, _| x) / n, sum(&|_, y| y) / n);
                // Holes are filled only below min_hole_area (0 here): area is the pixels.
                assert_eq!(r.figures.area, pix.len() as u64);
                assert_eq!((r.figures.bbox.y as usize, r.figures.bbox.x as usize), (pix[0].0, pix.iter().map(|p| p.1).min().unwrap()));
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * (1.0 + b.abs());
                assert!(close(r.figures.centroid.0, cx) && close(r.figures.centroid.1, cy));
                for (got, want) in [
                    (r.figures.moments.mu20, sum(&|x, _| (x - cx).powi(2))),
                    (r.figures.moments.mu11, sum(&|x, y| (x - cx) * (y - cy))),
                    (r.figures.moments.mu02, sum(&|_, y| (y - cy).powi(2))),
                    (r.figures.moments.mu30, sum(&|x, _| (x - cx).powi(3))),
                    (r.figures.moments.mu21, sum(&|x, y| (x - cx).powi(2) * (y - cy))),
                    (r.figures.moments.mu12, sum(&|x, y| (x - cx) * (y - cy).powi(2))),
                    (r.figures.moments.mu03, sum(&|_, y| (y - cy).powi(3))),
                    (r.figures.moments.m21, sum(&|x, y| x * x * y)),
                    (r.figures.moments.m03, sum(&|_, y| y * y * y)),
                ] {
                    assert!(close(got, want), "seed {seed}: {got} vs {want}");
                }
            }
        }
    }
}

/// Every pixel of the outlines belongs to the region, and every border pixel of the region (one with a
/// neighbour outside it, in the dual connectivity) is on an outline.
#[test]
fn outlines_visit_exactly_the_border_pixels() {
    for seed in 10..16u64 {
        let (w, h) = (29, 31);
        let m = random_mask(w, h, 55, seed);
        for connectivity in [Connectivity::Eight, Connectivity::Four] {
            let got = regions(&MaskView::new(&m, w, h, 0).unwrap(), &RegionOptions { connectivity, ..Default::default() }).unwrap();
            let comps = flood_components(&m, w, h, connectivity == Connectivity::Eight);
            for (r, pix) in got.iter().zip(&comps) {
                let own: std::collections::HashSet<(i32, i32)> = pix.iter().map(|&(y, x)| (x as i32, y as i32)).collect();
                let mut on_outline = std::collections::HashSet::new();
                for p in r.outer.iter().chain(r.holes.iter().flatten()) {
                    assert!(own.contains(&(p.x, p.y)), "seed {seed}: outline point {p:?} outside its region");
                    on_outline.insert((p.x, p.y));
                }
                // The dual: a border pixel of an 8-connected region has a 4-neighbour outside it.
                let nbrs: &[(i32, i32)] = if connectivity == Connectivity::Eight {
                    &[(1, 0), (-1, 0), (0, 1), (0, -1)]
                } else {
                    &[(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]
                };
                for &(x, y) in &own {
                    if nbrs.iter().any(|(dx, dy)| !own.contains(&(x + dx, y + dy))) {
                        assert!(on_outline.contains(&(x, y)), "seed {seed} {connectivity:?}: border pixel ({x},{y}) on no outline");
                    }
                }
            }
        }
    }
}

#[test]
fn nested_rings_each_have_one_hole_and_small_holes_are_filled() {
    // Three concentric square rings, 1 pixel wide, 1 pixel apart, and a dot in the middle.
    let n = 13;
    let mut m = vec![0u8; n * n];
    for k in [0usize, 2, 4] {
        for i in k..n - k {
            for (x, y) in [(i, k), (i, n - 1 - k), (k, i), (n - 1 - k, i)] {
                m[y * n + x] = 255;
            }
        }
    }
    m[6 * n + 6] = 255;
    let r = binary(&m, n, n);
    assert_eq!(r.len(), 4);
    let holes: Vec<(u32, u64)> = r.iter().map(|r| (r.figures.hole_count, r.figures.hole_area)).collect();
    // The outer ring's hole holds everything inside it: 11x11.
    assert_eq!(holes, vec![(1, 121), (1, 49), (1, 9), (0, 0)]);
    let filled =
        regions(&MaskView::new(&m, n, n, 0).unwrap(), &RegionOptions { min_hole_area: 50, min_area: 2, ..Default::default() }).unwrap();
    assert_eq!(filled.len(), 3, "the dot is under min_area");
    assert_eq!((filled[1].figures.hole_count, filled[1].figures.area), (0, 32 + 49), "the 7x7 hole is filled");
    assert!(filled[1].holes.is_empty());
    assert_eq!(filled[0].figures.hole_count, 1);
}

#[test]
fn label_images_give_regions_per_label_in_label_order() {
    let (w, h) = (6usize, 3usize);
    #[rustfmt::skip]
    let m: Vec<u16> = vec![
        7, 7, 0, 2, 2, 7,
        0, 0, 0, 2, 0, 7,
        700, 0, 0, 0, 0, 0,
    ];
    let r = regions(&MaskView::new(&m, w, h, 0).unwrap(), &RegionOptions { kind: MaskKind::Labels, ..Default::default() }).unwrap();
    let labels: Vec<(u32, u64, u32)> = r.iter().map(|r| (r.label, r.figures.area, r.figures.bbox.x)).collect();
    assert_eq!(labels, vec![(2, 3, 3), (7, 2, 0), (7, 2, 5), (700, 1, 0)]);
    // The same cells as a binary mask: 2 and 7 touch at (4,0)-(5,0) and join.
    let b = regions(&MaskView::new(&m, w, h, 0).unwrap(), &RegionOptions::default()).unwrap();
    assert_eq!(b.iter().map(|r| r.figures.area).collect::<Vec<_>>(), vec![2, 5, 1]);
}

#[test]
fn a_stride_is_honoured_and_bad_sizes_are_refused() {
    let packed = random_mask(9, 7, 50, 3);
    let mut padded = vec![99u8; 16 * 7];
    for y in 0..7 {
        padded[y * 16..y * 16 + 9].copy_from_slice(&packed[y * 9..y * 9 + 9]);
    }
    let a = binary(&packed, 9, 7);
    let b = regions(&MaskView::new(&padded, 9, 7, 16).unwrap(), &RegionOptions::default()).unwrap();
    assert_eq!(a, b);
    use crate::ErrorKind;
    assert_eq!(MaskView::new(&packed, 9, 7, 8).unwrap_err().kind, ErrorKind::InvalidArgument);
    assert_eq!(MaskView::new(&packed[..62], 9, 7, 0).unwrap_err().kind, ErrorKind::BufferTooSmall);
    assert_eq!(MaskView::new(&packed, 0, 7, 0).unwrap_err().kind, ErrorKind::InvalidArgument);
    let view = MaskView::new(&packed, 9, 7, 0).unwrap();
    for t in [-1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(regions(&view, &RegionOptions { tolerance: t, ..Default::default() }).unwrap_err().kind, ErrorKind::InvalidArgument);
    }
}

#[test]
fn hull_and_rotated_box_match_brute_force() {
    let mut s = 77u64;
    for round in 0..200 {
        let n = 1 + (lcg(&mut s) % 12) as usize;
        let p: Vec<Point> = (0..n).map(|_| Point { x: (lcg(&mut s) % 40) as i32, y: (lcg(&mut s) % 40) as i32 }).collect();
        let hull = geometry::convex_hull(&p);
        // Every point is inside or on the hull (no positive cross product on a counter-clockwise-on-screen hull).
        for q in &p {
            for i in 0..hull.len().max(3) - 2 {
                let (a, b) = (hull[i % hull.len()], hull[(i + 1) % hull.len()]);
                if hull.len() >= 3 {
                    let c = (b.x - a.x) as i64 * (q.y - a.y) as i64 - (b.y - a.y) as i64 * (q.x - a.x) as i64;
                    assert!(c <= 0, "round {round}: {q:?} outside hull edge {a:?}-{b:?}");
                }
            }
        }
        let rect = geometry::min_area_rect(&hull);
        // Brute force: the box over every pair of points as a side direction.
        let mut best = f64::INFINITY;
        for a in &p {
            for b in &p {
                if a == b {
                    continue;
                }
                let (ux, uy) = ((b.x - a.x) as f64, (b.y - a.y) as f64);
                let l = (ux * ux + uy * uy).sqrt();
                let (ux, uy) = (ux / l, uy / l);
                let along: Vec<f64> = p.iter().map(|q| q.x as f64 * ux + q.y as f64 * uy).collect();
                let across: Vec<f64> = p.iter().map(|q| -(q.x as f64) * uy + q.y as f64 * ux).collect();
                let span = |v: &[f64]| v.iter().cloned().fold(f64::MIN, f64::max) - v.iter().cloned().fold(f64::MAX, f64::min);
                best = best.min(span(&along) * span(&across));
            }
        }
        if best.is_infinite() {
            best = 0.0;
        }
        let area = rect.width * rect.height;
        assert!((area - best).abs() <= 1e-6 * (1.0 + best), "round {round}: {area} vs {best} for {p:?}");
        assert!(rect.width >= rect.height && rect.angle > -90.0 && rect.angle <= 90.0);
    }
}

#[test]
fn simplified_outlines_stay_within_the_tolerance() {
    let (w, h) = (64, 48);
    let mut m = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = (x as f64 - 30.0, y as f64 - 22.0);
            if dx * dx / 500.0 + dy * dy / 300.0 <= 1.0 {
                m[y * w + x] = 1;
            }
        }
    }
    let exact = binary(&m, w, h);
    for tol in [0.5, 1.0, 2.0, 5.0] {
        let s = regions(&MaskView::new(&m, w, h, 0).unwrap(), &RegionOptions { tolerance: tol, ..Default::default() }).unwrap();
        let poly = &s[0].outer;
        assert!(poly.len() < exact[0].outer.len() && poly.len() >= 3, "tolerance {tol}: {} points", poly.len());
        assert!(poly.iter().all(|p| exact[0].outer.contains(p)), "kept points are outline points");
        for p in &exact[0].outer {
            let d = (0..poly.len()).map(|i| segment_distance(*p, poly[i], poly[(i + 1) % poly.len()])).fold(f64::INFINITY, f64::min);
            assert!(d <= tol + 1e-9, "tolerance {tol}: {p:?} is {d} away");
        }
        // The figures come from the exact outline whatever the tolerance.
        assert_eq!(
            (s[0].figures.perimeter, s[0].figures.rotated_box, s[0].figures.area),
            (exact[0].figures.perimeter, exact[0].figures.rotated_box, exact[0].figures.area)
        );
    }
}

fn segment_distance(p: Point, a: Point, b: Point) -> f64 {
    let (px, py, ax, ay, bx, by) = (p.x as f64, p.y as f64, a.x as f64, a.y as f64, b.x as f64, b.y as f64);
    let (dx, dy) = (bx - ax, by - ay);
    let l2 = dx * dx + dy * dy;
    let t = if l2 == 0.0 { 0.0 } else { (((px - ax) * dx + (py - ay) * dy) / l2).clamp(0.0, 1.0) };
    ((px - ax - t * dx).powi(2) + (py - ay - t * dy).powi(2)).sqrt()
}

#[test]
fn rle_round_trips_and_matches_pycocotools_strings() {
    // pycocotools.mask.encode(np.asfortranarray(m)) of this 4x3 mask printed
    // {'size': [3, 4], 'counts': b'122O4'}, area 3 and toBbox [0, 1, 2, 2].
    #[rustfmt::skip]
    let m: Vec<u8> = vec![
        0, 0, 0, 0,
        1, 0, 0, 0,
        1, 1, 0, 0,
    ];
    let view = MaskView::new(&m, 4, 3, 0).unwrap();
    let rle = rle::encode_mask(&view, MaskKind::Binary, 1).unwrap();
    assert_eq!(rle.counts, vec![1, 2, 2, 1, 6]);
    assert_eq!(rle.area(), 3);
    assert_eq!(rle.bbox(), [0, 1, 2, 2]);
    assert_eq!(rle.to_compressed(), "122O4");
    assert_eq!(Rle::from_compressed("122O4", 4, 3).unwrap(), rle);
    let mut back = vec![7u8; 12];
    rle.decode_into(&mut back, 0, 1).unwrap();
    assert_eq!(back, m);
    for seed in 0..20u64 {
        let (w, h) = (1 + (seed as usize * 7) % 23, 1 + (seed as usize * 5) % 19);
        let m = random_mask(w, h, seed * 5, seed);
        let view = MaskView::new(&m, w, h, 0).unwrap();
        let rle = rle::encode_mask(&view, MaskKind::Binary, 1).unwrap();
        assert_eq!(Rle::from_compressed(&rle.to_compressed(), w as u32, h as u32).unwrap(), rle);
        let mut back = vec![0u8; w * h];
        rle.decode_into(&mut back, 0, 255).unwrap();
        assert_eq!(back, m, "seed {seed}");
        // Per region from runs, joined, equals the whole mask's RLE.
        let found = runs::find_runs(&view, MaskKind::Binary);
        let from_runs = rle::encode_runs(found.runs.iter(), w as u32, h as u32).unwrap();
        assert_eq!(from_runs, rle, "seed {seed}");
    }
    // Regions' RLEs (small holes filled) and labels' RLEs against the mask's own.
    let n = 13;
    let mut m = vec![0u8; n * n];
    for i in 2..11 {
        for (x, y) in [(i, 2), (i, 10), (2, i), (10, i)] {
            m[y * n + x] = 3;
        }
    }
    m[6 * n + 6] = 5;
    let view = MaskView::new(&m, n, n, 0).unwrap();
    let opts = RegionOptions { kind: MaskKind::Labels, min_hole_area: 1000, rle: true, ..Default::default() };
    let r = regions(&view, &opts).unwrap();
    let filled: Vec<u8> = (0..n * n).map(|i| u8::from((2..11).contains(&(i % n)) && (2..11).contains(&(i / n)))).collect();
    let want = rle::encode_mask(&MaskView::new(&filled, n, n, 0).unwrap(), MaskKind::Binary, 1).unwrap();
    assert_eq!((r[0].label, r[0].figures.area, r[0].rle.as_ref()), (3, 81, Some(&want)));
    let labels = label_rles(&view, MaskKind::Labels).unwrap();
    assert_eq!(labels.iter().map(|(l, r)| (*l, r.area())).collect::<Vec<_>>(), vec![(3, 32), (5, 1)]);
    assert_eq!(labels[1].1, rle::encode_mask(&view, MaskKind::Labels, 5).unwrap());
    assert!(Rle::from_compressed("1", 2, 2).is_err());
    assert!(Rle::from_compressed("1\u{7f}", 2, 2).is_err());
}
