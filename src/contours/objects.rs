//! Figures per object: an object is every region of one label taken together (a segment-everything
//! object, a class of a UNet's class map, a tracked object's or a prompt's mask), so a record per
//! object can carry what a record per connected part carries: area, box, centroid, moments,
//! orientation, rotated box, and how many parts and holes it has.

use super::geometry::{convex_hull, min_area_rect};
use super::moments::{orientation_degrees, Moments};
use super::{Figures, PixelBox, Point, Region};

/// One object's figures, its parts together (see [`objects`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjectFigures {
    pub label: u32,
    /// Connected regions kept (4- or 8-connected as the options said).
    pub parts: u32,
    /// Of all its pixels: the perimeter, holes and areas of its parts added up, the rotated box
    /// around all its pixel centres.
    pub figures: Figures,
}

/// The figures of each label's regions together, by label, from [`super::regions`]' output (which
/// is ordered by label). An object of one part has exactly that part's figures; for several, the
/// raw moments are added in region order (the same bits everywhere) and the central ones derived
/// from them as OpenCV does, and the rotated box is the one around the parts' hulls.
pub fn objects(regions: &[Region]) -> Vec<ObjectFigures> {
    regions.chunk_by(|a, b| a.label == b.label).map(object_of).collect()
}

fn object_of(parts: &[Region]) -> ObjectFigures {
    let first = &parts[0];
    let of_parts = parts.iter().map(|r| &r.figures);
    let figures = Figures {
        area: of_parts.clone().map(|f| f.area).sum(),
        perimeter: of_parts.clone().map(|f| f.perimeter).sum(),
        hole_count: of_parts.clone().map(|f| f.hole_count).sum(),
        hole_area: of_parts.map(|f| f.hole_area).sum(),
        ..first.figures
    };
    let mut o = ObjectFigures { label: first.label, parts: parts.len() as u32, figures };
    if parts.len() == 1 {
        return o;
    }
    let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
    for b in parts.iter().map(|r| &r.figures.bbox) {
        x0 = x0.min(b.x);
        y0 = y0.min(b.y);
        x1 = x1.max(b.x + b.width);
        y1 = y1.max(b.y + b.height);
    }
    let f = &mut o.figures;
    f.bbox = PixelBox { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
    f.moments = combined(parts);
    f.centroid = (f.moments.m10 / f.moments.m00, f.moments.m01 / f.moments.m00);
    f.orientation = orientation_degrees(&f.moments);
    let corners: Vec<Point> = parts.iter().flat_map(|r| r.hull.iter().copied()).collect();
    f.rotated_box = min_area_rect(&convex_hull(&corners));
    o
}

/// The parts' raw moments added up, and the central moments about the common centroid (OpenCV's
/// formulas from the raw moments).
fn combined(parts: &[Region]) -> Moments {
    let mut m = Moments::default();
    for r in parts {
        let p = &r.figures.moments;
        m.m00 += p.m00;
        m.m10 += p.m10;
        m.m01 += p.m01;
        m.m20 += p.m20;
        m.m11 += p.m11;
        m.m02 += p.m02;
        m.m30 += p.m30;
        m.m21 += p.m21;
        m.m12 += p.m12;
        m.m03 += p.m03;
    }
    let (cx, cy) = (m.m10 / m.m00, m.m01 / m.m00);
    m.mu20 = m.m20 - cx * m.m10;
    m.mu11 = m.m11 - cx * m.m01;
    m.mu02 = m.m02 - cy * m.m01;
    m.mu30 = m.m30 - cx * (3.0 * m.m20 - 2.0 * cx * m.m10);
    m.mu21 = m.m21 - cx * (2.0 * m.m11 - 2.0 * cx * m.m01) - cy * m.m20;
    m.mu12 = m.m12 - cy * (2.0 * m.m11 - 2.0 * cy * m.m10) - cx * m.m02;
    m.mu03 = m.m03 - cy * (3.0 * m.m02 - 2.0 * cy * m.m01);
    m
}
