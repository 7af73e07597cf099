//! Region exports: the regions of a mask or label image with their outlines and figures, and COCO
//! RLE both ways. Pure functions of the caller's buffers, on no handle. Outputs are caller-sized
//! arrays with the counts they need, as `seg_sam2_everything`'s records: nothing for the caller to
//! free, and the same size query. A size query followed by the real call computes once: each thread
//! keeps its last result, keyed by the mask's cells and the options.

use std::ffi::c_char;

use crate::contours::{self, MaskKind, Region, Rle};
use crate::error::{Error, ErrorKind, Result};

use super::boundary::utf8_str;
use super::enums::{SegRingKind, SegStatus};
use super::images::SegMask;
use super::prologue::run;
use super::regions_input::{found, read_cells, rows, Cells};
use super::regions_types::{SegContourPoint, SegRegion, SegRegionOptions, SegRing};
use super::sam2_types::SegLabelImage;
use super::versioned::{fill_defaults, record_array, write_records};

/// Fills `options` with the defaults (8-connected, binary, pixel-exact outlines, no hull, no
/// minimum areas): `SegRegionOptions o = { .struct_size = sizeof o }; seg_region_options_default(&o);`.
///
/// # Safety
/// `options` must be NULL or point to `options->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn seg_region_options_default(options: *mut SegRegionOptions) -> SegStatus {
    // SAFETY: NULL or `struct_size` writable bytes (the contract).
    run(|| unsafe { fill_defaults(options, SegRegionOptions::defaults(), "options") })
}

/// The connected regions of a mask (`mask`: 8-bit, every non-zero pixel foreground, or with
/// `options->labels` each value a label) or of a 16-bit label image (`labels`; segment-everything's),
/// exactly one of them not NULL, with their figures and outlines. See the book's "Outlines,
/// measurements and annotation files" for the conventions (OpenCV's: `findContours` chains,
/// `approxPolyDP`, `moments`, `minAreaRect`).
///
/// - `options`: NULL for the defaults (`seg_region_options_default`).
/// - `out_regions`/`region_size`/`regions_capacity`: one `SegRegion` record per region, by label then
///   by first pixel in raster order; `region_size` is `sizeof(SegRegion)`.
/// - `out_rings`/`ring_size`/`rings_capacity`: one `SegRing` per outline (each region's outer ring,
///   its holes, its hull when `options->hull`), in region order.
/// - `out_points`/`points_capacity`: the rings' points, ring after ring.
/// - `out_region_count`, `out_ring_count`, `out_point_count` (each optional): what the arrays need.
///
/// Any array may be NULL (with capacity 0) to leave it out; the counts are still given. A capacity
/// below its count gives `SEG_BUFFER_TOO_SMALL` with the counts set and no array written. A size
/// query (arrays NULL) then the same call with arrays computes once: each thread keeps its last
/// result. A bad size or stride, both or neither input, a tolerance that is negative, NaN or
/// infinite: `SEG_INVALID_ARGUMENT`, nothing written. Thread safety: any number of threads at once.
///
/// # Safety
/// Every pointer must be NULL or valid for the sizes it states.
#[no_mangle]
pub unsafe extern "C" fn seg_mask_regions(
    mask: *const SegMask,
    labels: *const SegLabelImage,
    options: *const SegRegionOptions,
    out_regions: *mut SegRegion,
    region_size: usize,
    regions_capacity: usize,
    out_region_count: *mut usize,
    out_rings: *mut SegRing,
    ring_size: usize,
    rings_capacity: usize,
    out_ring_count: *mut usize,
    out_points: *mut SegContourPoint,
    points_capacity: usize,
    out_point_count: *mut usize,
) -> SegStatus {
    run(|| {
        // SAFETY: NULL or a valid `SegRegionOptions` (the contract).
        let (options, hull) = unsafe { SegRegionOptions::read(options)? };
        let region_stride = array_stride::<SegRegion>(out_regions, region_size, regions_capacity, "SegRegion")?;
        let ring_stride = array_stride::<SegRing>(out_rings, ring_size, rings_capacity, "SegRing")?;
        if out_points.is_null() && points_capacity > 0 {
            return Err(Error::null("out_points (points_capacity is not 0)"));
        }
        if points_capacity > isize::MAX as usize / std::mem::size_of::<SegContourPoint>() {
            return Err(Error::invalid(format!("points_capacity {points_capacity} exceeds the address space")));
        }
        // SAFETY: NULL or readable descriptors of readable rows (the contract).
        let found = match unsafe { read_cells(mask, labels)? } {
            Cells::U8(v) => found(&v, &options, hull)?,
            Cells::U16(v) => found(&v, &options, hull)?,
        };
        let (records, rings, points) = flatten(&found.regions, options.outlines, hull);
        for (p, n) in [(out_region_count, records.len()), (out_ring_count, rings.len()), (out_point_count, points.len())] {
            if !p.is_null() {
                // SAFETY: not NULL, so writable (the contract).
                unsafe { p.write(n) };
            }
        }
        let short = [
            (!out_regions.is_null() && regions_capacity < records.len(), "regions", records.len(), regions_capacity),
            (!out_rings.is_null() && rings_capacity < rings.len(), "rings", rings.len(), rings_capacity),
            (!out_points.is_null() && points_capacity < points.len(), "points", points.len(), points_capacity),
        ];
        if let Some((_, what, need, cap)) = short.iter().find(|s| s.0) {
            return Err(Error::new(ErrorKind::BufferTooSmall, format!("{need} {what} found, the array holds {cap}: nothing written")));
        }
        if !out_regions.is_null() {
            // SAFETY: `regions_capacity` >= count records of `region_stride` bytes (checked above).
            unsafe { write_records(out_regions, region_stride, &records) };
        }
        if !out_rings.is_null() {
            // SAFETY: as above, for the rings.
            unsafe { write_records(out_rings, ring_stride, &rings) };
        }
        if !out_points.is_null() {
            // SAFETY: `points_capacity` >= points.len() writable points (the contract, checked above).
            unsafe { std::ptr::copy_nonoverlapping(points.as_ptr(), out_points, points.len()) };
        }
        Ok(())
    })
}

/// The stride of a caller's optional record array (0 when NULL), checked.
fn array_stride<T>(p: *const T, size: usize, capacity: usize, name: &str) -> Result<usize> {
    if p.is_null() {
        if capacity > 0 {
            return Err(Error::null(&format!("the {name} array (its capacity is not 0)")));
        }
        return Ok(0);
    }
    record_array::<T>(size, capacity, name)
}

/// The records, rings and points of the regions, in the order the C arrays take them.
fn flatten(regions: &[Region], outlines: bool, hull: bool) -> (Vec<SegRegion>, Vec<SegRing>, Vec<SegContourPoint>) {
    let (mut records, mut rings, mut points) = (Vec::with_capacity(regions.len()), Vec::new(), Vec::new());
    for (i, r) in regions.iter().enumerate() {
        let first_ring = rings.len() as u64;
        let mut push = |ring: &[contours::Point], kind: SegRingKind| {
            rings.push(SegRing {
                first_point: points.len() as u64,
                point_count: ring.len() as u32,
                kind: kind as i32,
                region: i as u32,
                reserved: 0,
            });
            points.extend(ring.iter().map(|p| SegContourPoint { x: p.x, y: p.y }));
        };
        if outlines {
            push(&r.outer, SegRingKind::SEG_RING_OUTER);
            for h in &r.holes {
                push(h, SegRingKind::SEG_RING_HOLE);
            }
        }
        if hull {
            push(&r.hull, SegRingKind::SEG_RING_HULL);
        }
        records.push(SegRegion::of(r, first_ring, (rings.len() as u64 - first_ring) as u32));
    }
    (records, rings, points)
}

/// The COCO RLE (pycocotools' compressed string, as in a COCO file's `"counts"`) of a mask's pixels:
/// of `mask` (8-bit) or `labels` (16-bit), exactly one not NULL; `label` 0 takes every non-zero
/// pixel, else the pixels equal to `label`. The RLE's size is the mask's ([height, width] in COCO).
///
/// `out_text` receives the string and a NUL; `*out_needed` (optional) the bytes that takes. `out_text`
/// NULL with `capacity` 0 is a size query (`SEG_OK`); a smaller buffer is `SEG_BUFFER_TOO_SMALL` and
/// receives nothing. Masks of more than 2^32 - 1 pixels: `SEG_IMAGE_TOO_LARGE` (COCO counts are 32-bit).
///
/// # Safety
/// Every pointer must be NULL or valid for the sizes it states.
#[no_mangle]
pub unsafe extern "C" fn seg_mask_rle(
    mask: *const SegMask,
    labels: *const SegLabelImage,
    label: u32,
    out_text: *mut c_char,
    capacity: usize,
    out_needed: *mut usize,
) -> SegStatus {
    run(|| {
        let kind = if label == 0 { MaskKind::Binary } else { MaskKind::Labels };
        // SAFETY: NULL or readable descriptors of readable rows (the contract).
        let rle = match unsafe { read_cells(mask, labels)? } {
            Cells::U8(v) => contours::rle::encode_mask(&v, kind, label)?,
            Cells::U16(v) => contours::rle::encode_mask(&v, kind, label)?,
        };
        let text = rle.to_compressed();
        let needed = text.len() + 1;
        if !out_needed.is_null() {
            // SAFETY: not NULL, so writable (the contract).
            unsafe { out_needed.write(needed) };
        }
        if out_text.is_null() && capacity == 0 {
            return Ok(());
        }
        if out_text.is_null() || capacity < needed {
            return Err(Error::new(ErrorKind::BufferTooSmall, format!("the RLE needs {needed} bytes, the buffer has {capacity}")));
        }
        // SAFETY: `capacity` >= needed writable bytes (the contract, checked); a Rust string and a
        // caller's buffer do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), out_text.cast::<u8>(), text.len());
            *out_text.add(text.len()) = 0;
        }
        Ok(())
    })
}

/// Draws a COCO RLE (compressed string) into `out_mask`: `value` on its foreground, 0 elsewhere. The
/// mask's width and height are the RLE's (COCO's `size` is [height, width]); counts that do not add
/// up to them, or a character that is no count digit, are `SEG_INVALID_ARGUMENT` with the mask
/// untouched.
///
/// # Safety
/// `text` must be NULL or NUL-terminated; `out_mask` NULL or a descriptor of writable rows.
#[no_mangle]
pub unsafe extern "C" fn seg_rle_to_mask(text: *const c_char, out_mask: *const SegMask, value: u8) -> SegStatus {
    run(|| {
        // SAFETY: NULL or NUL-terminated (the contract).
        let text = unsafe { utf8_str(text, "text")? };
        // SAFETY: NULL or a readable descriptor (the contract).
        let m = unsafe { out_mask.as_ref() }.ok_or_else(|| Error::null("out_mask"))?;
        let (w, h, stride, len) = rows(m.width, m.height, m.stride, 1, "the mask")?;
        if m.data.is_null() {
            return Err(Error::null("mask data"));
        }
        contours::rle::check_size(w, h)?;
        let rle = Rle::from_compressed(&text, w as u32, h as u32)?;
        // SAFETY: `height` rows of `stride` writable bytes (the contract); `len` fits in isize.
        let out = unsafe { std::slice::from_raw_parts_mut(m.data, len) };
        rle.decode_into(out, stride, value)
    })
}
