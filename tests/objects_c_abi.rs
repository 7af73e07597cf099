//! `seg_mask_objects`: a record per object (label), its parts together, as a host calls it: the
//! figures against a brute-force sum over the object's pixels, a one-part object equal to its
//! region's record, a binary mask as one object, an array too small (the count, nothing written)
//! and bad input (nothing written).

use std::ptr;

use segrt::contours::geometry::{convex_hull, min_area_rect};
use segrt::contours::Point;
use segrt::ffi::*;

mod common;
use common::last_error;

const W: usize = 60;
const H: usize = 40;

/// Object 1: two rectangles apart (two parts); object 2: a ring with a 4x4 hole; object 3: one pixel.
fn labels() -> Vec<u16> {
    let mut l = vec![0u16; W * H];
    for y in 0..H {
        for x in 0..W {
            let a = (2..12).contains(&x) && (2..7).contains(&y);
            let b = (30..34).contains(&x) && (20..28).contains(&y);
            let ring = (40..52).contains(&x) && (5..17).contains(&y) && !((44..48).contains(&x) && (9..13).contains(&y));
            l[y * W + x] = if a || b {
                1
            } else if ring {
                2
            } else if (x, y) == (20, 35) {
                3
            } else {
                0
            };
        }
    }
    l
}

fn objects_of(
    mask: Option<&SegMask>,
    labels: Option<&SegLabelImage>,
    by_label: bool,
) -> Result<Vec<SegObjectFigures>, (SegStatus, String)> {
    let o = options(by_label);
    let m = mask.map_or(ptr::null(), |m| m as *const SegMask);
    let l = labels.map_or(ptr::null(), |l| l as *const SegLabelImage);
    let size = std::mem::size_of::<SegObjectFigures>();
    let mut n = usize::MAX;
    let st = unsafe { seg_mask_objects(m, l, &o, ptr::null_mut(), size, 0, &mut n) };
    if st != SegStatus::SEG_OK {
        return Err((st, last_error()));
    }
    let mut out = vec![SegObjectFigures::default(); n];
    let st = unsafe { seg_mask_objects(m, l, &o, out.as_mut_ptr(), size, n, ptr::null_mut()) };
    if st != SegStatus::SEG_OK {
        return Err((st, last_error()));
    }
    Ok(out)
}

fn options(by_label: bool) -> SegRegionOptions {
    let mut o = SegRegionOptions { struct_size: std::mem::size_of::<SegRegionOptions>() as u32, ..SegRegionOptions::defaults() };
    assert_eq!(unsafe { seg_region_options_default(&mut o) }, SegStatus::SEG_OK);
    o.labels = by_label as i32;
    o
}

/// Area, centroid and central moments summed pixel by pixel.
fn brute(l: &[u16], label: u16) -> (u64, f64, f64, [f64; 7]) {
    let px: Vec<(f64, f64)> = (0..W * H).filter(|&i| l[i] == label).map(|i| ((i % W) as f64, (i / W) as f64)).collect();
    let n = px.len() as f64;
    let (cx, cy) = (px.iter().map(|p| p.0).sum::<f64>() / n, px.iter().map(|p| p.1).sum::<f64>() / n);
    let mu = |p: i32, q: i32| px.iter().map(|&(x, y)| (x - cx).powi(p) * (y - cy).powi(q)).sum::<f64>();
    (px.len() as u64, cx, cy, [mu(2, 0), mu(1, 1), mu(0, 2), mu(3, 0), mu(2, 1), mu(1, 2), mu(0, 3)])
}

#[test]
fn objects_take_their_parts_together() {
    let mut l = labels();
    let li = SegLabelImage { data: l.as_mut_ptr(), width: W as i32, height: H as i32, stride: 0 };
    let objs = objects_of(None, Some(&li), true).unwrap();
    assert_eq!(objs.iter().map(|o| (o.label, o.parts, o.hole_count)).collect::<Vec<_>>(), vec![(1, 2, 0), (2, 1, 1), (3, 1, 0)]);
    for o in &objs {
        let (area, cx, cy, mu) = brute(&l, o.label as u16);
        assert_eq!(o.area, area, "object {}", o.label);
        assert!((o.centroid_x - cx).abs() < 1e-9 && (o.centroid_y - cy).abs() < 1e-9, "object {} centroid", o.label);
        let got = [o.mu20, o.mu11, o.mu02, o.mu30, o.mu21, o.mu12, o.mu03];
        for (g, m) in got.iter().zip(mu) {
            assert!((g - m).abs() <= 1e-6 * (1.0 + m.abs()), "object {}: moments {got:?} against {mu:?}", o.label);
        }
        assert_eq!(o.reserved, 0);
    }
    // Object 1's box spans both rectangles; its rotated box is the one around all its pixels.
    let one = &objs[0];
    assert_eq!((one.x, one.y, one.width, one.height), (2, 2, 32, 26));
    let all: Vec<Point> = (0..W * H).filter(|&i| l[i] == 1).map(|i| Point { x: (i % W) as i32, y: (i / W) as i32 }).collect();
    let want = min_area_rect(&convex_hull(&all));
    assert_eq!((one.box_width, one.box_height, one.box_angle), (want.width, want.height, want.angle));
    assert_eq!((one.box_cx, one.box_cy), (want.cx, want.cy));
    // The ring: its hole's pixels and the perimeter of its outer outline.
    assert_eq!((objs[1].hole_area, objs[1].perimeter), (16, 44.0));

    // A one-part object is exactly its region's record.
    let mut regions = vec![SegRegion::default(); 8];
    let mut n = 0;
    let st = unsafe {
        seg_mask_regions(
            ptr::null(),
            &li,
            &options(true),
            regions.as_mut_ptr(),
            std::mem::size_of::<SegRegion>(),
            8,
            &mut n,
            ptr::null_mut(),
            std::mem::size_of::<SegRing>(),
            0,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    let ring = regions[..n].iter().find(|r| r.label == 2).unwrap();
    let o = &objs[1];
    assert_eq!(
        (o.area, o.centroid_x, o.centroid_y, o.orientation, o.mu20, o.mu03, o.box_width, o.box_corners),
        (ring.area, ring.centroid_x, ring.centroid_y, ring.orientation, ring.mu20, ring.mu03, ring.box_width, ring.box_corners)
    );

    // A binary mask, or the label image without `labels`: one object, label 1, of all the parts.
    let mut bin: Vec<u8> = l.iter().map(|&v| if v != 0 { 255 } else { 0 }).collect();
    let m = SegMask { data: bin.as_mut_ptr(), width: W as i32, height: H as i32, stride: 0 };
    assert_eq!(objects_of(None, Some(&li), false).unwrap().len(), 1);
    let objs = objects_of(Some(&m), None, false).unwrap();
    assert_eq!(objs.iter().map(|o| (o.label, o.parts, o.hole_count, o.area)).collect::<Vec<_>>(), vec![(1, 4, 1, 50 + 32 + 128 + 1)]);
}

#[test]
fn objects_array_too_small_or_bad_input_writes_nothing() {
    let mut l = labels();
    let li = SegLabelImage { data: l.as_mut_ptr(), width: W as i32, height: H as i32, stride: 0 };
    let size = std::mem::size_of::<SegObjectFigures>();
    let by_label = options(true);
    let sentinel = SegObjectFigures { label: 777, ..Default::default() };
    let mut out = vec![sentinel; 2];
    let mut n = 0usize;
    let st = unsafe { seg_mask_objects(ptr::null(), &li, &by_label, out.as_mut_ptr(), size, 2, &mut n) };
    assert_eq!(st, SegStatus::SEG_BUFFER_TOO_SMALL);
    assert_eq!(n, 3, "the count is given");
    assert!(out.iter().all(|o| o.label == 777), "nothing written");
    assert!(last_error().contains("3 objects"), "{}", last_error());

    let mut n = 99usize;
    let mut bytes = vec![0u8; W * H];
    let both = SegMask { data: bytes.as_mut_ptr(), width: W as i32, height: H as i32, stride: 0 };
    let narrow = SegLabelImage { stride: W as i32 - 1, ..li };
    let mut nan = options(true);
    nan.tolerance = f64::NAN;
    let cases: [(&str, *const SegMask, *const SegLabelImage, *const SegRegionOptions, usize, SegStatus); 5] = [
        ("both inputs", &both, &li, &by_label, size, SegStatus::SEG_INVALID_ARGUMENT),
        ("no input", ptr::null(), ptr::null(), &by_label, size, SegStatus::SEG_NULL_POINTER),
        ("a short record", ptr::null(), &li, &by_label, 8, SegStatus::SEG_INVALID_ARGUMENT),
        ("a stride below the width", ptr::null(), &narrow, &by_label, size, SegStatus::SEG_INVALID_ARGUMENT),
        ("a NaN tolerance", ptr::null(), &li, &nan, size, SegStatus::SEG_INVALID_ARGUMENT),
    ];
    for (what, m, l, o, record, want) in cases {
        let st = unsafe { seg_mask_objects(m, l, o, out.as_mut_ptr(), record, 2, &mut n) };
        assert_eq!(st, want, "{what}: {}", last_error());
        assert_eq!(n, 99, "{what}: no count written");
        assert!(out.iter().all(|o| o.label == 777), "{what}: nothing written");
    }
}
