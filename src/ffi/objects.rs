//! Figures per object (`seg_mask_objects`): a record per label of a mask or label image, its
//! connected parts together. What segment-everything's, many prompts' and tracking's per-object
//! records lack (centroid, moments, orientation, rotated box, parts, holes, perimeter) without
//! changing those frozen records: the label image or an object's mask goes through this call.

use crate::contours::{self, ObjectFigures};
use crate::error::Error;

use super::enums::SegStatus;
use super::images::SegMask;
use super::prologue::run;
use super::regions_input::{found, read_cells, Cells};
use super::regions_types::SegRegionOptions;
use super::sam2_types::SegLabelImage;
use super::versioned::{record_array, report_count, write_records};

/// One object's figures, its parts together (a record: pass `sizeof(SegObjectFigures)` as
/// `object_size`). Angles in degrees, counter-clockwise from the x axis as seen on screen, in
/// (-90, 90]; the conventions of `SegRegion`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegObjectFigures {
    /// Its value in a label image (segment-everything's object id); 1 in a binary mask.
    pub label: u32,
    /// Connected regions (parts) it has, after `min_area`.
    pub parts: u32,
    /// Holes of all its parts, after `min_hole_area`.
    pub hole_count: u32,
    /// Always 0.
    pub reserved: u32,
    /// Pixels of all its parts (filled small holes included).
    pub area: u64,
    /// Pixels of the holes kept.
    pub hole_area: u64,
    /// The axis-aligned box around all its parts: first column and row, width and height.
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
    /// The mean pixel position.
    pub centroid_x: f64,
    pub centroid_y: f64,
    /// The major axis' angle (from the central moments); 0 for an object without one.
    pub orientation: f64,
    /// The parts' outer outlines' lengths added up; 0 when outlines are off.
    pub perimeter: f64,
    /// Central moments of all its pixels (OpenCV's `mu20` ... `mu03`).
    pub mu20: f64,
    pub mu11: f64,
    pub mu02: f64,
    pub mu30: f64,
    pub mu21: f64,
    pub mu12: f64,
    pub mu03: f64,
    /// The smallest rotated rectangle around all its pixel centres (OpenCV's `minAreaRect`, as in
    /// `SegRegion`).
    pub box_cx: f64,
    pub box_cy: f64,
    pub box_width: f64,
    pub box_height: f64,
    pub box_angle: f64,
    pub box_corners: [f64; 8],
}

impl SegObjectFigures {
    fn of(o: &ObjectFigures) -> SegObjectFigures {
        let f = &o.figures;
        let (m, b) = (&f.moments, &f.rotated_box);
        SegObjectFigures {
            label: o.label,
            parts: o.parts,
            hole_count: f.hole_count,
            reserved: 0,
            area: f.area,
            hole_area: f.hole_area,
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
        }
    }
}

/// The figures of each object of a mask or label image, its parts together, exactly one of `mask`
/// (8-bit) and `labels` (16-bit) not NULL. With `options->labels` 1, one record per value (by
/// value): segment-everything's label image gives record k for object k as painted there, a class
/// map one per class. Otherwise, as `seg_mask_regions` reads them, every non-zero pixel is one
/// object (label 1): a tracked object's or a prompt's mask.
///
/// - `options`: NULL for the defaults (`seg_region_options_default`); connectivity, `min_area` and
///   `min_hole_area` decide the parts and holes, `outlines` 0 leaves the perimeter 0 (faster);
///   tolerance and hull do not change the figures.
/// - `out_objects`/`object_size`/`objects_capacity` (optional): the records; `object_size` is
///   `sizeof(SegObjectFigures)`.
/// - `out_count` (optional): the number of objects.
///
/// A capacity below the count is `SEG_BUFFER_TOO_SMALL` with `*out_count` set and nothing else
/// written. A bad size or stride, both or neither input, bad options: `SEG_INVALID_ARGUMENT`,
/// nothing written. A size query then the same call computes once (as `seg_mask_regions`, whose
/// per-thread result it shares). Thread safety: any number of threads at once.
///
/// # Safety
/// Every pointer must be NULL or valid for the sizes it states.
#[no_mangle]
pub unsafe extern "C" fn seg_mask_objects(
    mask: *const SegMask,
    labels: *const SegLabelImage,
    options: *const SegRegionOptions,
    out_objects: *mut SegObjectFigures,
    object_size: usize,
    objects_capacity: usize,
    out_count: *mut usize,
) -> SegStatus {
    run(|| {
        // SAFETY: NULL or a valid `SegRegionOptions` (the contract).
        let (options, hull) = unsafe { SegRegionOptions::read(options)? };
        let stride = if out_objects.is_null() {
            if objects_capacity > 0 {
                return Err(Error::null("out_objects (objects_capacity is not 0)"));
            }
            0
        } else {
            record_array::<SegObjectFigures>(object_size, objects_capacity, "SegObjectFigures")?
        };
        // SAFETY: NULL or readable descriptors of readable rows (the contract).
        let found = match unsafe { read_cells(mask, labels)? } {
            Cells::U8(v) => found(&v, &options, hull)?,
            Cells::U16(v) => found(&v, &options, hull)?,
        };
        let records: Vec<SegObjectFigures> = contours::objects(&found.regions).iter().map(SegObjectFigures::of).collect();
        // SAFETY: `out_count` is NULL or writable (the contract).
        unsafe { report_count(out_count, records.len(), "out_objects", !out_objects.is_null(), objects_capacity, "objects")? };
        if !out_objects.is_null() {
            // SAFETY: `objects_capacity` >= count records of `stride` bytes (checked above).
            unsafe { write_records(out_objects, stride, &records) };
        }
        Ok(())
    })
}
