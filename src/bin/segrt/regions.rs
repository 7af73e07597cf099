//! `segrt regions`: the regions of a mask or label image file (PNG, ...) with their outlines and
//! figures, as JSON: for masks made elsewhere, and for checking segrt's outlines against other tools.

use std::path::PathBuf;

use segrt::contours::{self, Connectivity, MaskKind, MaskView, Region, RegionOptions};
use serde_json::{json, Value};

use crate::CliResult;

#[derive(clap::Args)]
pub struct RegionsArgs {
    /// The mask (8-bit: any non-zero pixel is foreground) or label image (8- or 16-bit, with --labels)
    mask: PathBuf,
    /// Each non-zero value is a label of its own (a class map, segment-everything's labels)
    #[arg(long)]
    labels: bool,
    /// 4 or 8: which neighbours join pixels into one region
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(4..=8))]
    connectivity: u8,
    /// Simplify outlines: no pixel of the exact outline farther than this from the polygon (pixels, approxPolyDP's epsilon)
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    tolerance: f64,
    /// Leave out regions of fewer pixels
    #[arg(long, default_value_t = 0)]
    min_area: u64,
    /// Fill holes of fewer pixels
    #[arg(long, default_value_t = 0)]
    min_hole_area: u64,
    /// Also give each region as COCO RLE (compressed string)
    #[arg(long)]
    rle: bool,
    /// Write the JSON here instead of standard output
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

pub fn regions(args: RegionsArgs) -> CliResult {
    let img = image::open(&args.mask).map_err(|e| format!("cannot read {}: {e}", args.mask.display()))?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    if args.connectivity != 4 && args.connectivity != 8 {
        return Err(format!("--connectivity {}: 4 or 8", args.connectivity).into());
    }
    let options = RegionOptions {
        kind: if args.labels { MaskKind::Labels } else { MaskKind::Binary },
        connectivity: if args.connectivity == 4 { Connectivity::Four } else { Connectivity::Eight },
        min_area: args.min_area,
        min_hole_area: args.min_hole_area,
        tolerance: args.tolerance,
        outlines: true,
        rle: args.rle,
    };
    let found = match img {
        image::DynamicImage::ImageLuma16(g) => contours::regions(&MaskView::new(g.as_raw(), w, h, 0)?, &options)?,
        image::DynamicImage::ImageLuma8(g) => contours::regions(&MaskView::new(g.as_raw(), w, h, 0)?, &options)?,
        other if args.labels => {
            return Err(format!("{}: a label image must be 8- or 16-bit gray, this one is {:?}", args.mask.display(), other.color()).into())
        }
        other => contours::regions(&MaskView::new(other.to_luma8().as_raw(), w, h, 0)?, &options)?,
    };
    let doc = json!({
        "mask": args.mask, "width": w, "height": h,
        "connectivity": args.connectivity, "tolerance": args.tolerance,
        "regions": found.iter().map(region_json).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
    match &args.json {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        None => say!("{text}"),
    }
    Ok(())
}

/// A polygon as [[x, y], ...].
pub fn points_json(points: &[contours::Point]) -> Value {
    Value::Array(points.iter().map(|p| json!([p.x, p.y])).collect())
}

pub fn region_json(r: &Region) -> Value {
    let f = &r.figures;
    let (m, b) = (&f.moments, &f.rotated_box);
    json!({
        "label": r.label, "area": f.area,
        "bbox": [f.bbox.x, f.bbox.y, f.bbox.width, f.bbox.height],
        "centroid": [f.centroid.0, f.centroid.1],
        "moments": {
            "m00": m.m00, "m10": m.m10, "m01": m.m01, "m20": m.m20, "m11": m.m11, "m02": m.m02,
            "m30": m.m30, "m21": m.m21, "m12": m.m12, "m03": m.m03,
            "mu20": m.mu20, "mu11": m.mu11, "mu02": m.mu02, "mu30": m.mu30, "mu21": m.mu21, "mu12": m.mu12, "mu03": m.mu03,
        },
        "orientation": f.orientation, "perimeter": f.perimeter,
        "hole_count": f.hole_count, "hole_area": f.hole_area,
        "outer": points_json(&r.outer),
        "holes": r.holes.iter().map(|h| points_json(h)).collect::<Vec<_>>(),
        "hull": points_json(&r.hull),
        "rotated_box": {
            "center": [b.cx, b.cy], "size": [b.width, b.height], "angle": b.angle,
            "corners": b.corners.iter().map(|c| json!([c.0, c.1])).collect::<Vec<_>>(),
        },
        "rle": r.rle.as_ref().map(|rle| json!({"size": [rle.height, rle.width], "counts": rle.to_compressed()})),
    })
}
