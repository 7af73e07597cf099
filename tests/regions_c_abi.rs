//! The region and RLE exports as a host calls them: results equal the library's, the size query and
//! the two-call pattern, arrays too small (counts given, nothing written), a newer host's longer
//! records, and a table of bad input that must leave every output untouched; a 65535-label image.

use std::ffi::{c_char, CStr};
use std::ptr;

use segrt::contours::{self, MaskKind, MaskView, RegionOptions};
use segrt::ffi::*;

mod common;
use common::last_error;

fn options() -> SegRegionOptions {
    let mut o = SegRegionOptions { struct_size: std::mem::size_of::<SegRegionOptions>() as u32, ..SegRegionOptions::defaults() };
    assert_eq!(unsafe { seg_region_options_default(&mut o) }, SegStatus::SEG_OK);
    o
}

/// A 40x30 mask: a ring with a hole, a dot, a diagonal chain; stored with a padded stride.
fn test_mask() -> (Vec<u8>, usize, usize, usize) {
    let (w, h, stride) = (40usize, 30usize, 48usize);
    let mut m = vec![0xEEu8; stride * h];
    for y in 0..h {
        for x in 0..w {
            let ring = (5..20).contains(&x) && (5..20).contains(&y) && !((9..15).contains(&x) && (9..15).contains(&y));
            let dot = (x, y) == (30, 3);
            let chain = (25..35).contains(&x) && y == x - 10;
            m[y * stride + x] = if ring || dot || chain { 255 } else { 0 };
        }
    }
    (m, w, h, stride)
}

struct Out {
    regions: Vec<SegRegion>,
    rings: Vec<SegRing>,
    points: Vec<SegContourPoint>,
}

/// Size query, then the call with exactly sized arrays.
fn call(mask: Option<&SegMask>, labels: Option<&SegLabelImage>, o: &SegRegionOptions) -> Result<Out, (SegStatus, String)> {
    let m = mask.map_or(ptr::null(), |m| m as *const SegMask);
    let l = labels.map_or(ptr::null(), |l| l as *const SegLabelImage);
    let (mut nr, mut nk, mut np) = (usize::MAX, usize::MAX, usize::MAX);
    let rs = std::mem::size_of::<SegRegion>();
    let ks = std::mem::size_of::<SegRing>();
    let st =
        unsafe { seg_mask_regions(m, l, o, ptr::null_mut(), rs, 0, &mut nr, ptr::null_mut(), ks, 0, &mut nk, ptr::null_mut(), 0, &mut np) };
    if st != SegStatus::SEG_OK {
        return Err((st, last_error()));
    }
    let mut out =
        Out { regions: vec![SegRegion::default(); nr], rings: vec![SegRing::default(); nk], points: vec![SegContourPoint::default(); np] };
    let st = unsafe {
        seg_mask_regions(
            m,
            l,
            o,
            out.regions.as_mut_ptr(),
            rs,
            nr,
            ptr::null_mut(),
            out.rings.as_mut_ptr(),
            ks,
            nk,
            ptr::null_mut(),
            out.points.as_mut_ptr(),
            np,
            ptr::null_mut(),
        )
    };
    if st != SegStatus::SEG_OK {
        return Err((st, last_error()));
    }
    Ok(out)
}

#[test]
fn regions_through_the_c_abi_equal_the_librarys() {
    let (mut data, w, h, stride) = test_mask();
    let mask = SegMask { data: data.as_mut_ptr(), width: w as i32, height: h as i32, stride: stride as i32 };
    let mut o = options();
    o.hull = 1;
    let out = call(Some(&mask), None, &o).unwrap();
    let view = MaskView::new(&data, w, h, stride).unwrap();
    let lib = contours::regions(&view, &RegionOptions::default()).unwrap();
    assert_eq!(out.regions.len(), lib.len());
    assert_eq!(lib.len(), 3, "ring, dot, chain");
    for (i, (c, r)) in out.regions.iter().zip(&lib).enumerate() {
        assert_eq!(
            (c.label, c.area, c.hole_count, c.x, c.y, c.width, c.height),
            (
                1,
                r.figures.area,
                r.figures.hole_count,
                r.figures.bbox.x as i32,
                r.figures.bbox.y as i32,
                r.figures.bbox.width as i32,
                r.figures.bbox.height as i32
            )
        );
        assert_eq!(
            (c.centroid_x, c.centroid_y, c.mu20, c.mu03, c.perimeter, c.orientation),
            (
                r.figures.centroid.0,
                r.figures.centroid.1,
                r.figures.moments.mu20,
                r.figures.moments.mu03,
                r.figures.perimeter,
                r.figures.orientation
            )
        );
        assert_eq!(
            (c.box_width, c.box_height, c.box_angle, c.box_corners[2], c.box_corners[7]),
            (
                r.figures.rotated_box.width,
                r.figures.rotated_box.height,
                r.figures.rotated_box.angle,
                r.figures.rotated_box.corners[1].0,
                r.figures.rotated_box.corners[3].1
            )
        );
        // Rings: outer, holes, hull, each pointing back at its region.
        let rings = &out.rings[c.first_ring as usize..(c.first_ring + c.ring_count as u64) as usize];
        assert_eq!(rings.len(), 1 + r.holes.len() + 1);
        let expected: Vec<(&Vec<contours::Point>, i32)> = std::iter::once((&r.outer, SegRingKind::SEG_RING_OUTER as i32))
            .chain(r.holes.iter().map(|h| (h, SegRingKind::SEG_RING_HOLE as i32)))
            .chain(std::iter::once((&r.hull, SegRingKind::SEG_RING_HULL as i32)))
            .collect();
        for (ring, (pts, kind)) in rings.iter().zip(expected) {
            assert_eq!((ring.kind, ring.region, ring.point_count as usize), (kind, i as u32, pts.len()));
            let got = &out.points[ring.first_point as usize..ring.first_point as usize + pts.len()];
            assert!(got.iter().zip(pts).all(|(a, b)| (a.x, a.y) == (b.x, b.y)));
        }
    }
    // Raster order: the dot (row 3), the ring with its hole (row 5), the chain (row 15); the padding
    // bytes of the mask (0xEE) were never read as pixels.
    assert_eq!(out.regions.iter().map(|r| (r.y, r.hole_count, r.hole_area)).collect::<Vec<_>>(), vec![(3, 0, 0), (5, 1, 36), (15, 0, 0)]);
}

#[test]
fn arrays_too_small_get_the_counts_and_nothing_else() {
    let (mut data, w, h, stride) = test_mask();
    let mask = SegMask { data: data.as_mut_ptr(), width: w as i32, height: h as i32, stride: stride as i32 };
    let o = options();
    let sentinel = SegRegion { label: 0xDEAD, ..SegRegion::default() };
    let mut regions = vec![sentinel; 2];
    let mut points = vec![SegContourPoint { x: -7, y: -7 }; 1000];
    let (mut nr, mut nk, mut np) = (0usize, 0usize, 0usize);
    let rs = std::mem::size_of::<SegRegion>();
    let st = unsafe {
        seg_mask_regions(
            &mask,
            ptr::null(),
            &o,
            regions.as_mut_ptr(),
            rs,
            2,
            &mut nr,
            ptr::null_mut(),
            0,
            0,
            &mut nk,
            points.as_mut_ptr(),
            1000,
            &mut np,
        )
    };
    assert_eq!(st, SegStatus::SEG_BUFFER_TOO_SMALL, "{}", last_error());
    assert_eq!((nr, nk), (3, 4), "3 regions; 4 rings: 3 outer outlines and a hole");
    assert!(np > 0 && np < 1000);
    assert!(regions.iter().all(|r| r.label == 0xDEAD), "no region written");
    assert!(points.iter().all(|p| p.x == -7), "no point written");
    assert!(last_error().contains("3 regions found, the array holds 2"), "{}", last_error());
    // A newer host's longer record: the known bytes at its stride, the rest untouched.
    let big = rs + 16;
    let mut bytes = vec![0xABu8; big * 3];
    let st = unsafe {
        seg_mask_regions(
            &mask,
            ptr::null(),
            &o,
            bytes.as_mut_ptr().cast(),
            big,
            3,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            0,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_OK, "{}", last_error());
    for k in 0..3 {
        assert_eq!(u32::from_ne_bytes(bytes[k * big..k * big + 4].try_into().unwrap()), 1, "record {k}'s label");
        assert!(bytes[k * big + rs..(k + 1) * big].iter().all(|b| *b == 0xAB), "record {k}'s tail untouched");
    }
}

#[test]
fn bad_input_is_refused_with_nothing_written() {
    let (mut data, w, h, stride) = test_mask();
    let good = SegMask { data: data.as_mut_ptr(), width: w as i32, height: h as i32, stride: stride as i32 };
    let mut labels16 = vec![0u16; 4];
    let lab = SegLabelImage { data: labels16.as_mut_ptr(), width: 2, height: 2, stride: 0 };
    let rs = std::mem::size_of::<SegRegion>();
    let with = |f: &dyn Fn(&mut SegRegionOptions)| {
        let mut o = options();
        f(&mut o);
        o
    };
    let cases: Vec<(&str, SegMask, bool, SegRegionOptions, usize, SegStatus, &str)> = vec![
        (
            "stride below the width",
            SegMask { stride: 39, ..good },
            false,
            options(),
            rs,
            SegStatus::SEG_INVALID_ARGUMENT,
            "stride 39 is smaller than its width 40",
        ),
        ("negative stride", SegMask { stride: -48, ..good }, false, options(), rs, SegStatus::SEG_INVALID_ARGUMENT, "negative"),
        (
            "zero height",
            SegMask { height: 0, ..good },
            false,
            options(),
            rs,
            SegStatus::SEG_INVALID_ARGUMENT,
            "both sides must be positive",
        ),
        (
            "negative width",
            SegMask { width: -40, ..good },
            false,
            options(),
            rs,
            SegStatus::SEG_INVALID_ARGUMENT,
            "both sides must be positive",
        ),
        ("NULL data", SegMask { data: ptr::null_mut(), ..good }, false, options(), rs, SegStatus::SEG_NULL_POINTER, "mask data"),
        (
            "a side over the limit",
            SegMask { stride: i32::MAX, height: i32::MAX, ..good },
            false,
            options(),
            rs,
            SegStatus::SEG_IMAGE_TOO_LARGE,
            "sides are limited to 1048576",
        ),
        ("both inputs", good, true, options(), rs, SegStatus::SEG_INVALID_ARGUMENT, "both mask and labels"),
        ("negative tolerance", good, false, with(&|o| o.tolerance = -1.0), rs, SegStatus::SEG_INVALID_ARGUMENT, "tolerance -1"),
        ("NaN tolerance", good, false, with(&|o| o.tolerance = f64::NAN), rs, SegStatus::SEG_INVALID_ARGUMENT, "tolerance NaN"),
        ("infinite tolerance", good, false, with(&|o| o.tolerance = f64::INFINITY), rs, SegStatus::SEG_INVALID_ARGUMENT, "tolerance inf"),
        (
            "connectivity 6",
            good,
            false,
            with(&|o| o.connectivity = 6),
            rs,
            SegStatus::SEG_INVALID_ARGUMENT,
            "SEG_CONNECTIVITY_4=4 SEG_CONNECTIVITY_8=8",
        ),
        ("labels 2", good, false, with(&|o| o.labels = 2), rs, SegStatus::SEG_INVALID_ARGUMENT, "labels is 2"),
        ("reserved set", good, false, with(&|o| o.reserved = 1), rs, SegStatus::SEG_INVALID_ARGUMENT, "reserved must be 0"),
        ("options struct_size 0", good, false, with(&|o| o.struct_size = 0), rs, SegStatus::SEG_INVALID_ARGUMENT, "struct_size is 0"),
        ("record size too small", good, false, options(), rs - 8, SegStatus::SEG_INVALID_ARGUMENT, "pass sizeof(SegRegion)"),
    ];
    for (name, mask, both, o, size, want, needle) in cases {
        let mut out = vec![SegRegion { label: 0xBEEF, ..SegRegion::default() }; 8];
        let mut n = 0x5555usize;
        let labels = if both { &lab as *const SegLabelImage } else { ptr::null() };
        let st = unsafe {
            seg_mask_regions(
                &mask,
                labels,
                &o,
                out.as_mut_ptr(),
                size,
                8,
                &mut n,
                ptr::null_mut(),
                0,
                0,
                ptr::null_mut(),
                ptr::null_mut(),
                0,
                ptr::null_mut(),
            )
        };
        assert_eq!(st, want, "{name}: {}", last_error());
        assert!(last_error().contains(needle), "{name}: {}", last_error());
        assert_eq!(n, 0x5555, "{name}: count written");
        assert!(out.iter().all(|r| r.label == 0xBEEF), "{name}: a record written");
    }
    let st = unsafe {
        seg_mask_regions(
            ptr::null(),
            ptr::null(),
            ptr::null(),
            ptr::null_mut(),
            0,
            0,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            0,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_NULL_POINTER);
    let st = unsafe {
        seg_mask_regions(
            &good,
            ptr::null(),
            ptr::null(),
            ptr::null_mut(),
            rs,
            5,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            0,
            ptr::null_mut(),
            ptr::null_mut(),
            0,
            ptr::null_mut(),
        )
    };
    assert_eq!(st, SegStatus::SEG_NULL_POINTER, "NULL array with a capacity");
}

#[test]
fn a_label_image_with_65535_labels_gives_65535_regions() {
    let (w, h) = (256usize, 256usize);
    // Every value once (0 at the first pixel): 65535 one-pixel regions.
    let mut cells: Vec<u16> = (0..(w * h) as u32).map(|v| v as u16).collect();
    let labels = SegLabelImage { data: cells.as_mut_ptr(), width: w as i32, height: h as i32, stride: 0 };
    let mut o = options();
    o.labels = 1;
    let out = call(None, Some(&labels), &o).unwrap();
    assert_eq!(out.regions.len(), 65535);
    assert!(out.regions.iter().enumerate().all(|(i, r)| r.label == i as u32 + 1 && r.area == 1 && r.ring_count == 1));
    assert_eq!(out.points.len(), 65535);
    let last = out.regions[65534];
    assert_eq!((last.x, last.y, last.centroid_x, last.centroid_y), (255, 255, 255.0, 255.0));
    // As one binary mask the same cells are one region covering all but the first pixel.
    let binary = call(None, Some(&labels), &options()).unwrap();
    assert_eq!((binary.regions.len(), binary.regions[0].area), (1, 65535));
}

fn rle_text(mask: Option<&SegMask>, labels: Option<&SegLabelImage>, label: u32) -> String {
    let m = mask.map_or(ptr::null(), |m| m as *const SegMask);
    let l = labels.map_or(ptr::null(), |l| l as *const SegLabelImage);
    let mut need = 0usize;
    assert_eq!(unsafe { seg_mask_rle(m, l, label, ptr::null_mut(), 0, &mut need) }, SegStatus::SEG_OK, "{}", last_error());
    let mut buf = vec![1 as c_char; need];
    let mut short = vec![7 as c_char; need - 1];
    assert_eq!(unsafe { seg_mask_rle(m, l, label, short.as_mut_ptr(), need - 1, ptr::null_mut()) }, SegStatus::SEG_BUFFER_TOO_SMALL);
    assert!(short.iter().all(|c| *c == 7), "a short buffer receives nothing");
    assert_eq!(unsafe { seg_mask_rle(m, l, label, buf.as_mut_ptr(), need, ptr::null_mut()) }, SegStatus::SEG_OK);
    unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap().to_string()
}

#[test]
fn rle_both_ways_through_the_c_abi() {
    let (mut data, w, h, stride) = test_mask();
    let mask = SegMask { data: data.as_mut_ptr(), width: w as i32, height: h as i32, stride: stride as i32 };
    let text = rle_text(Some(&mask), None, 0);
    let view = MaskView::new(&data, w, h, stride).unwrap();
    assert_eq!(text, contours::rle::encode_mask(&view, MaskKind::Binary, 1).unwrap().to_compressed());
    // Back into a padded mask: the foreground as 1, the padding untouched.
    let mut back = vec![9u8; 44 * h];
    let out = SegMask { data: back.as_mut_ptr(), width: w as i32, height: h as i32, stride: 44 };
    let t = std::ffi::CString::new(text.clone()).unwrap();
    assert_eq!(unsafe { seg_rle_to_mask(t.as_ptr(), &out, 1) }, SegStatus::SEG_OK, "{}", last_error());
    for y in 0..h {
        for x in 0..44 {
            let want = if x >= w { 9 } else { u8::from(data[y * stride + x] != 0) };
            assert_eq!(back[y * 44 + x], want, "({x},{y})");
        }
    }
    // A label of a 16-bit image; bad strings and sizes leave the mask untouched.
    let mut cells = vec![0u16; 6];
    cells[1] = 300;
    cells[4] = 300;
    cells[5] = 2;
    let labels = SegLabelImage { data: cells.as_mut_ptr(), width: 3, height: 2, stride: 0 };
    // pycocotools.mask.encode of [[0,1,0],[0,1,0]] printed b'222'.
    assert_eq!(rle_text(None, Some(&labels), 300), "222");
    let before = back.clone();
    for (bad, needle) in [("1\u{7f}", "not a count digit"), ("12", "add up to 3 pixels")] {
        let t = std::ffi::CString::new(bad).unwrap();
        assert_eq!(unsafe { seg_rle_to_mask(t.as_ptr(), &out, 1) }, SegStatus::SEG_INVALID_ARGUMENT, "{bad}");
        assert!(last_error().contains(needle), "{bad}: {}", last_error());
        assert_eq!(back, before, "{bad}: the mask was written");
    }
}
