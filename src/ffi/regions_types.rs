//! The C types of the region exports: options, one record per region, one per outline ring, and the
//! outline points.

use crate::contours::{Connectivity, Region, RegionOptions};
use crate::error::{Error, Result};

use super::enums::SegConnectivity;
use super::versioned::{read_versioned, versioned};

/// What `seg_mask_regions` finds and returns. Set `struct_size = sizeof(SegRegionOptions)`, then
/// `seg_region_options_default`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegRegionOptions {
    pub struct_size: u32,
    /// A `SegConnectivity` (default 8).
    pub connectivity: i32,
    /// 1: each non-zero value is a label of its own (class maps, segment-everything's labels); 0
    /// (default): every non-zero pixel is foreground, regions get label 1.
    pub labels: i32,
    /// 1 (default): outlines (outer and holes) as rings of points, and the perimeter; 0: figures only.
    pub outlines: i32,
    /// 1: also the convex hull as a ring (`SEG_RING_HULL`); default 0.
    pub hull: i32,
    /// Must be 0.
    pub reserved: u32,
    /// Outline simplification in pixels (OpenCV's `approxPolyDP` epsilon); 0 (default) keeps every
    /// border pixel. Finite and >= 0.
    pub tolerance: f64,
    /// Regions of fewer pixels are left out (default 0).
    pub min_area: u64,
    /// Holes of fewer pixels are filled: no ring, their pixels counted in the area and moments (default 0).
    pub min_hole_area: u64,
}

versioned!(SegRegionOptions);

impl SegRegionOptions {
    pub fn defaults() -> Self {
        SegRegionOptions {
            struct_size: std::mem::size_of::<SegRegionOptions>() as u32,
            connectivity: SegConnectivity::SEG_CONNECTIVITY_8 as i32,
            labels: 0,
            outlines: 1,
            hull: 0,
            reserved: 0,
            tolerance: 0.0,
            min_area: 0,
            min_hole_area: 0,
        }
    }

    /// The caller's options (NULL: the defaults), checked, and whether the hull is wanted.
    ///
    /// # Safety
    /// `p` must be NULL or point to `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegRegionOptions) -> Result<(RegionOptions, bool)> {
        // SAFETY: forwarded from the caller.
        let o = unsafe { read_versioned(p, SegRegionOptions::defaults())? };
        if o.reserved != 0 {
            return Err(Error::invalid("SegRegionOptions.reserved must be 0"));
        }
        let flag = |v: i32, name: &str| match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Error::invalid(format!("SegRegionOptions.{name} is {v}: 0 or 1"))),
        };
        let options = RegionOptions {
            kind: if flag(o.labels, "labels")? { crate::contours::MaskKind::Labels } else { crate::contours::MaskKind::Binary },
            connectivity: Connectivity::try_from(o.connectivity)?,
            min_area: o.min_area,
            min_hole_area: o.min_hole_area,
            tolerance: o.tolerance,
            outlines: flag(o.outlines, "outlines")?,
            rle: false,
        };
        options.validate().map_err(|e| Error::invalid(format!("SegRegionOptions.{}", e.message)))?;
        Ok((options, flag(o.hull, "hull")?))
    }
}

/// One region and its figures (a record: pass `sizeof(SegRegion)` as `region_size`). Angles are in
/// degrees, counter-clockwise from the x axis as seen on screen (y pointing down), in (-90, 90].
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegRegion {
    /// Its value in a label image; 1 in a binary mask.
    pub label: u32,
    /// Holes kept (rings of kind `SEG_RING_HOLE`).
    pub hole_count: u32,
    /// Pixels (filled small holes included).
    pub area: u64,
    /// The axis-aligned box: first column and row, width and height.
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
    /// The mean pixel position.
    pub centroid_x: f64,
    pub centroid_y: f64,
    /// The major axis' angle (from the central moments); 0 for a region without one.
    pub orientation: f64,
    /// The outer outline's length (OpenCV's `arcLength`); 0 when outlines are off.
    pub perimeter: f64,
    /// Central moments (OpenCV's `mu20` ... `mu03` of `moments(mask, binaryImage=true)`).
    pub mu20: f64,
    pub mu11: f64,
    pub mu02: f64,
    pub mu30: f64,
    pub mu21: f64,
    pub mu12: f64,
    pub mu03: f64,
    /// The smallest rotated rectangle around the pixel centres (OpenCV's `minAreaRect`): centre,
    /// `box_width` >= `box_height`, the long side's angle, corners (x, y) x 4 around the box from
    /// the one with the smallest y.
    pub box_cx: f64,
    pub box_cy: f64,
    pub box_width: f64,
    pub box_height: f64,
    pub box_angle: f64,
    pub box_corners: [f64; 8],
    /// Pixels of the holes kept.
    pub hole_area: u64,
    /// Its rings in the rings array: the outer outline first, then the holes, then the hull when
    /// asked (`ring_count` of them from `first_ring`); 0 rings when outlines are off.
    pub first_ring: u64,
    pub ring_count: u32,
    /// Always 0.
    pub reserved: u32,
}

/// One closed ring of points (a record: pass `sizeof(SegRing)` as `ring_size`): `point_count`
/// points from `first_point` in the points array, the last joining the first.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegRing {
    pub first_point: u64,
    pub point_count: u32,
    /// A `SegRingKind`.
    pub kind: i32,
    /// The index of its region.
    pub region: u32,
    /// Always 0.
    pub reserved: u32,
}

/// A pixel position on an outline: column x, row y (the pixel's centre).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SegContourPoint {
    pub x: i32,
    pub y: i32,
}

impl SegRegion {
    pub(crate) fn of(r: &Region, first_ring: u64, ring_count: u32) -> SegRegion {
        let f = &r.figures;
        let (m, b) = (&f.moments, &f.rotated_box);
        SegRegion {
            label: r.label,
            hole_count: f.hole_count,
            area: f.area,
            x: f.bbox.x as i32,
            y: f.bbox.y as i32,
            width: f.bbox.width as i32,
            height: f.bbox.height as i32,
            centroid_x: f.centroid.0,
            centroid_y: f.centroid.1,
            orientation: f.orientation,
            perimeter: f.perimeter,
            mu20: m.mu20,
            mu11: m.mu11,
            mu02: m.mu02,
            mu30: m.mu30,
            mu21: m.mu21,
            mu12: m.mu12,
            mu03: m.mu03,
            box_cx: b.cx,
            box_cy: b.cy,
            box_width: b.width,
            box_height: b.height,
            box_angle: b.angle,
            box_corners: std::array::from_fn(|i| if i % 2 == 0 { b.corners[i / 2].0 } else { b.corners[i / 2].1 }),
            hole_area: f.hole_area,
            first_ring,
            ring_count,
            reserved: 0,
        }
    }
}
