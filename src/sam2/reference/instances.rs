//! Every instance of the taught object: peaks of the location map (suppressed within the object's
//! radius, as segment-everything suppresses its points), one prompt each through the many-prompts
//! call, each mask's presence score gated, overlaps resolved best first into a label image.

use std::time::Instant;

use crate::error::Result;
use crate::image::{ImageView, MaskMut};
use crate::sam2::image::{BoxPrompt, ImageFeatures, Prompt, Sam2Segmenter};

use super::evidence::{Evidence, Maps};
use super::find::{FindOptions, FindResult, FindStats, Found, Refinement};
use super::similarity::peaks;
use super::teach::Taught;

/// Peaks closer than this share of the object's radius are one instance.
pub const PEAK_SPACING: f32 = 1.0;

/// A peak is a candidate when its location value reaches the best peak's minus this.
pub const PEAK_DROP: f32 = 0.25;

/// Masks whose click lies inside a better one, overlapping it by this IoU, or lying this much inside
/// it are the same instance.
pub const SAME_IOU: f32 = 0.5;
pub const SAME_INSIDE: f32 = 0.8;

/// The box around a 0/not-0 mask (inclusive pixels) and its area; all 0 when empty.
pub fn extent(mask: &[u8], w: usize, h: usize) -> ([i32; 4], u64) {
    let (mut x0, mut y0, mut x1, mut y1, mut area) = (usize::MAX, usize::MAX, 0, 0, 0u64);
    for y in 0..h {
        let row = &mask[y * w..(y + 1) * w];
        let Some(first) = row.iter().position(|v| *v != 0) else { continue };
        let last = row.iter().rposition(|v| *v != 0).unwrap_or(first);
        area += row[first..=last].iter().filter(|v| **v != 0).count() as u64;
        (x0, x1, y0, y1) = (x0.min(first), x1.max(last), y0.min(y), y);
    }
    if area == 0 {
        return ([0; 4], 0);
    }
    ([x0 as i32, y0 as i32, x1 as i32, y1 as i32], area)
}

/// The mask's box as a prompt box (pixel edges), `None` for an empty mask.
pub fn box_of(mask: &[u8], w: usize, h: usize) -> Option<BoxPrompt> {
    let ([x0, y0, x1, y1], area) = extent(mask, w, h);
    (area > 0).then_some(BoxPrompt { x1: x0 as f32, y1: y0 as f32, x2: x1 as f32, y2: y1 as f32 })
}

pub fn all(
    sam: &Sam2Segmenter,
    taught: &Taught,
    features: &ImageFeatures,
    maps: &Maps<'_>,
    image: &ImageView<'_>,
    options: &FindOptions,
    stats: &mut FindStats,
) -> Result<FindResult> {
    let (w, h) = (image.width(), image.height());
    let grid = &maps.grid;
    let best = maps.location[maps.peak()];
    let candidates = peaks(
        &maps.location,
        grid.cols,
        |i| grid.valid(i),
        taught.radius * PEAK_SPACING,
        best - PEAK_DROP,
        options.max_instances.saturating_mul(2).min(crate::sam2::MAX_PROMPTS),
    );
    // Each peak's parts are looked for among the cells nearer to it than to any other peak.
    let nearest = |i: usize| candidates.iter().copied().min_by(|a, b| grid.distance(i, *a).total_cmp(&grid.distance(i, *b)));
    let prompts: Vec<Prompt> = candidates
        .iter()
        .map(|&p| {
            let owner = |i: usize| nearest(i) == Some(p);
            let mut points = maps.part_clicks(taught, p, Some(&owner));
            points.push(maps.negative_click());
            Prompt { points, ..Prompt::default() }
        })
        .collect();
    let t = Instant::now();
    let mut planes = crate::alloc::vec_of(prompts.len() * w * h, 0u8, "the instances' masks")?;
    let run = {
        let mut masks: Vec<MaskMut<'_>> = planes.chunks_exact_mut(w * h).map(|p| MaskMut::new(p, w, h, 0)).collect::<Result<_>>()?;
        sam.predict_many(Some(image), &prompts, &mut masks)?
    };
    let _ = features;
    stats.decoder_runs += run.stats.decoder_runs;
    stats.decoder_ms += crate::sam2::reference::find::elapsed_ms(t);
    let t = Instant::now();
    let mut found: Vec<(Found, usize)> = Vec::new();
    for (k, plane) in planes.chunks_exact(w * h).enumerate() {
        let evidence = Evidence::of(taught, maps, plane, image, options.colour);
        let f = evidence.found(plane, w, h, run.scores[k], prompts[k].points[0], options.threshold);
        if f.present {
            found.push((f, k));
        }
    }
    found.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.1.cmp(&b.1)));
    // Overlaps: a mask that repeats a better one is dropped; the rest are painted best first.
    let mut labels = crate::alloc::vec_of(w * h, 0u16, "the label image")?;
    let mut kept: Vec<Found> = Vec::new();
    for (f, k) in found {
        if kept.len() >= options.max_instances {
            break;
        }
        let plane = &planes[k * w * h..(k + 1) * w * h];
        let (mut shared, mut overlaps) = (0u64, std::collections::BTreeMap::<u16, u64>::new());
        for (l, m) in labels.iter().zip(plane) {
            if *m != 0 && *l != 0 {
                shared += 1;
                *overlaps.entry(*l).or_default() += 1;
            }
        }
        // its own click already inside a better instance: the same object seen twice
        let (px, py) = (f.point.0.round() as usize, f.point.1.round() as usize);
        let inside_better = labels[py.min(h - 1) * w + px.min(w - 1)] != 0;
        let repeats = inside_better
            || overlaps.iter().any(|(other, both)| {
                let other_area = kept[*other as usize - 1].area;
                *both as f32 / (f.area + other_area - both) as f32 >= SAME_IOU
            })
            || shared as f32 >= SAME_INSIDE * f.area as f32;
        if repeats {
            continue;
        }
        let id = kept.len() as u16 + 1;
        for (l, m) in labels.iter_mut().zip(plane) {
            if *m != 0 && *l == 0 {
                *l = id;
            }
        }
        kept.push(f);
    }
    let mask = labels.iter().map(|l| if *l != 0 { 255 } else { 0 }).collect();
    stats.postprocess_ms += crate::sam2::reference::find::elapsed_ms(t);
    Ok(FindResult {
        width: w,
        height: h,
        instances: kept,
        mask,
        labels: Some(labels),
        refinement: Refinement::Off,
        stats: FindStats::default(),
    })
}
