//! The objects an annotation file lists, made from segrt's masks: their parts' polygons (outer
//! outlines and holes), their COCO RLE, area and box, and what the model said about them.

use segrt::contours::{self, Cell, MaskKind, MaskView, Region, RegionOptions, Rle};

use crate::CliResult;

/// One annotated object.
pub struct Object {
    pub category_id: u32,
    /// The model's confidence (SAM's predicted IoU, a tracker's object score), when it gives one.
    pub score: Option<f64>,
    /// The tracked object's id (tracking only).
    pub track_id: Option<i32>,
    /// Its connected parts, each with its simplified outer outline and holes.
    pub parts: Vec<Region>,
    pub rle: Rle,
}

impl Object {
    pub fn area(&self) -> u64 {
        self.rle.area()
    }
    pub fn bbox(&self) -> [u32; 4] {
        self.rle.bbox()
    }
}

/// How polygons are made.
#[derive(Clone, Copy)]
pub struct Shapes {
    /// approxPolyDP's epsilon in pixels (0: pixel-exact outlines).
    pub tolerance: f64,
    /// Parts of fewer pixels are left out of the polygons (the RLE keeps every pixel).
    pub min_part_area: u64,
}

impl Shapes {
    fn options(&self, kind: MaskKind) -> RegionOptions {
        RegionOptions { kind, tolerance: self.tolerance, min_area: self.min_part_area, outlines: true, ..RegionOptions::default() }
    }
}

/// A whole mask (every non-zero pixel) as one object: a SAM prompt's or a tracked object's mask.
pub fn whole<C: Cell>(
    mask: &MaskView<C>,
    shapes: Shapes,
    category_id: u32,
    score: Option<f64>,
    track_id: Option<i32>,
) -> CliResult<Option<Object>> {
    let rles = contours::label_rles(mask, MaskKind::Binary)?;
    let Some((_, rle)) = rles.into_iter().next() else { return Ok(None) };
    let parts = contours::regions(mask, &shapes.options(MaskKind::Binary))?;
    Ok(Some(Object { category_id, score, track_id, parts, rle }))
}

/// Each label of a label image as one object (segment-everything's objects); `about(label)` gives
/// its category and score, or None to leave it out.
pub fn per_label<C: Cell>(mask: &MaskView<C>, shapes: Shapes, about: impl Fn(u32) -> Option<(u32, Option<f64>)>) -> CliResult<Vec<Object>> {
    let regions = contours::regions(mask, &shapes.options(MaskKind::Labels))?;
    let mut out = Vec::new();
    for (label, rle) in contours::label_rles(mask, MaskKind::Labels)? {
        if let Some((category_id, score)) = about(label) {
            let parts = regions.iter().filter(|r| r.label == label).cloned().collect();
            out.push(Object { category_id, score, track_id: None, parts, rle });
        }
    }
    Ok(out)
}

/// Each connected region of each class as an object (a UNet's instances): class value k (1 for a
/// binary 0/255 mask) has category k. Regions under `min_part_area` are left out.
pub fn instances<C: Cell>(mask: &MaskView<C>, shapes: Shapes, binary: bool) -> CliResult<Vec<Object>> {
    let kind = if binary { MaskKind::Binary } else { MaskKind::Labels };
    let options = RegionOptions { rle: true, ..shapes.options(kind) };
    Ok(contours::regions(mask, &options)?
        .into_iter()
        .filter_map(|mut r| {
            let rle = r.rle.take()?;
            Some(Object { category_id: r.label, score: None, track_id: None, parts: vec![r], rle })
        })
        .collect())
}
