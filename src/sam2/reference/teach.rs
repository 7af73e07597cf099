//! Teaching: from an image and the object's mask to an [`Example`] (what the encoder gave under the
//! mask, and the object's colour), and from the examples to what finding uses ([`Taught`]).

use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::sam2::image::Sam2Segmenter;

use super::colour::{self, HIST};
use super::grid::Grid;
use super::similarity::{cell_norms, dot, kmeans, mean_feature, unit, unit_rows};

/// How a find prompts the decoder, chosen per reference at teach time ([`Taught::strategy`]): the
/// location peak alone, or one click per part for this many parts (fewer for objects of few cells:
/// one part per 4 cells).
pub const STRATEGIES: [usize; 4] = [0, 2, 4, 8];

/// A strategy is chosen when its IoU on the examples' own photos is within this of the best one's
/// (the one with fewer clicks among them).
pub const CALIBRATION_SLACK: f32 = 0.02;

/// A cell belongs to the object when the mask covers at least this share of it.
pub const COVERED: f32 = 0.5;

/// One taught view of the object: no pixels, only what finding needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// Embedding width (channels).
    pub channels: usize,
    /// The unit features of the cells the mask covers, `cells x channels`.
    pub cell_features: Vec<f32>,
    /// The mean raw feature over those cells.
    pub mean: Vec<f32>,
    /// Where those cells lie: their largest distance from their centroid, in cells (+1).
    pub radius: f32,
    /// Chromaticity histograms of the object's pixels and of the rest of the photo.
    pub colour_object: Vec<f32>,
    pub colour_rest: Vec<f32>,
    /// The mask's share of the image.
    pub area_share: f32,
    /// The intensity setting the image was encoded under (`ImageFeatures::setting`).
    pub setting: u64,
    /// IoU with the mask of a find in the example's own photo, per strategy of [`STRATEGIES`]
    /// (empty when not measured).
    pub calibration: Vec<f32>,
}

/// A taught mask of a `w` x `h` image checked (its size, not empty, not the whole image): its row
/// stride (`mask_stride` 0 = `w`) and its area.
pub(super) fn taught_mask(mask: &[u8], mask_stride: usize, (w, h): (usize, usize)) -> Result<(usize, usize)> {
    let stride = if mask_stride == 0 { w } else { mask_stride };
    if stride < w || mask.len() < stride * (h - 1) + w {
        return Err(Error::invalid(format!(
            "the mask holds {} bytes with rows {stride} apart: a {w}x{h} image needs a mask of its size",
            mask.len()
        )));
    }
    let area: usize = (0..h).map(|y| mask[y * stride..y * stride + w].iter().filter(|v| **v != 0).count()).sum();
    if area == 0 {
        return Err(Error::invalid("the reference mask is empty: mark the object's pixels (not 0)"));
    }
    if area == w * h {
        return Err(Error::invalid("the reference mask covers the whole image: nothing tells the object from its surroundings"));
    }
    Ok((stride, area))
}

impl Example {
    pub fn from_image(sam: &Sam2Segmenter, image: &ImageView<'_>, mask: &[u8], mask_stride: usize) -> Result<Self> {
        let (w, h) = (image.width(), image.height());
        let (stride, area) = taught_mask(mask, mask_stride, (w, h))?;
        let inside = |x: usize, y: usize| mask[y * stride + x] != 0;
        let (features, _) = sam.image_features(image)?;
        let embed = features.embed()?;
        let grid = Grid::new(sam.frame_of((w, h)), (w, h), (embed.rows, embed.cols))?;
        let cover = grid.coverage(inside);
        let mut cells: Vec<usize> = (0..grid.cells()).filter(|i| cover[*i] >= COVERED).collect();
        if cells.is_empty() {
            // smaller than a cell: the cells it covers most
            let most = cover.iter().copied().fold(0f32, f32::max);
            cells = (0..grid.cells()).filter(|i| cover[*i] >= most && most > 0.0).collect();
        }
        let total = grid.cells();
        let norms = cell_norms(embed.data, embed.channels, total);
        let rows = unit_rows(embed.data, embed.channels, total, &norms, &cells);
        let (cr, cc) = centroid(&grid, &cells);
        let radius = cells
            .iter()
            .map(|i| (((i / grid.cols) as f32 - cr).powi(2) + ((i % grid.cols) as f32 - cc).powi(2)).sqrt())
            .fold(0f32, f32::max)
            + 1.0;
        Ok(Example {
            channels: embed.channels,
            cell_features: rows.concat(),
            mean: mean_feature(embed.data, embed.channels, total, &cells),
            radius,
            colour_object: colour::histogram(image, inside),
            colour_rest: colour::histogram(image, |x, y| !inside(x, y)),
            area_share: area as f32 / (w * h) as f32,
            setting: features.setting(),
            calibration: Vec::new(),
        })
    }

    pub fn cells(&self) -> usize {
        self.cell_features.len() / self.channels.max(1)
    }

    /// Checks the sizes of an example read from a file.
    pub fn check(&self) -> Result<()> {
        let c = self.channels;
        let ok = c > 0
            && !self.cell_features.is_empty()
            && self.cell_features.len().is_multiple_of(c)
            && self.mean.len() == c
            && self.colour_object.len() == HIST
            && self.colour_rest.len() == HIST
            && self.radius.is_finite()
            && (self.calibration.is_empty() || self.calibration.len() == STRATEGIES.len())
            && self.cell_features.iter().chain(&self.mean).chain(&self.colour_object).chain(&self.colour_rest).all(|v| v.is_finite());
        if ok {
            Ok(())
        } else {
            Err(Error::new(crate::error::ErrorKind::ModelInvalid, "the reference holds an example of inconsistent sizes"))
        }
    }
}

fn centroid(grid: &Grid, cells: &[usize]) -> (f32, f32) {
    let n = cells.len().max(1) as f32;
    let r = cells.iter().map(|i| (i / grid.cols) as f32).sum::<f32>() / n;
    let c = cells.iter().map(|i| (i % grid.cols) as f32).sum::<f32>() / n;
    (r, c)
}

/// What finding uses, derived from the examples (the same examples always give the same values).
#[derive(Debug, Clone)]
pub struct Taught {
    pub examples: Vec<Example>,
    /// The mean embedding of every example's object cells, unit length.
    pub target: Vec<f32>,
    /// Part prototypes (unit) for each strategy of [`STRATEGIES`] (none for the first), each with
    /// its share of the cells and its best similarity with the examples' own cells.
    pub part_sets: Vec<Vec<Part>>,
    /// The strategy finds use (an index into [`STRATEGIES`]): the one whose finds in the examples'
    /// own photos came closest to their masks.
    pub strategy: usize,
    /// Each colour's likelihood of being the object's, and the object's colour histogram.
    pub colour_likelihood: Vec<f32>,
    pub colour: Vec<f32>,
    /// The largest example radius, in cells.
    pub radius: f32,
    /// Mean object cells per example.
    pub cells: f32,
}

#[derive(Debug, Clone)]
pub struct Part {
    pub centre: Vec<f32>,
    pub share: f32,
    pub best: f32,
}

impl Taught {
    pub fn derive(examples: Vec<Example>) -> Result<Self> {
        let first = examples.first().ok_or_else(|| Error::invalid("no example: teach the reference with an image and a mask"))?;
        let c = first.channels;
        if examples.iter().any(|e| e.channels != c) {
            return Err(Error::invalid("the examples come from embeddings of different widths"));
        }
        let total_cells: usize = examples.iter().map(Example::cells).sum();
        let mut target = vec![0f32; c];
        for e in &examples {
            let k = e.cells() as f32 / total_cells as f32;
            target.iter_mut().zip(&e.mean).for_each(|(t, m)| *t += k * m);
        }
        unit(&mut target);
        let rows: Vec<Vec<f32>> = examples.iter().flat_map(|e| e.cell_features.chunks_exact(c).map(<[f32]>::to_vec)).collect();
        let part_sets = STRATEGIES
            .iter()
            .map(|&parts| {
                let k = if parts == 0 { 0 } else { parts.min((rows.len() / 4).max(1)) };
                kmeans(&rows, k)
                    .into_iter()
                    .map(|(centre, share)| {
                        let best = rows.iter().map(|r| dot(r, &centre)).fold(f32::MIN, f32::max);
                        Part { centre, share, best }
                    })
                    .collect()
            })
            .collect();
        let n = examples.len() as f32;
        let mean_hist = |pick: fn(&Example) -> &Vec<f32>| -> Vec<f32> {
            (0..HIST).map(|b| examples.iter().map(|e| pick(e)[b]).sum::<f32>() / n).collect()
        };
        let object = mean_hist(|e| &e.colour_object);
        let rest = mean_hist(|e| &e.colour_rest);
        Ok(Taught {
            target,
            part_sets,
            strategy: chosen_strategy(&examples),
            colour_likelihood: colour::likelihood(&object, &rest),
            colour: object,
            radius: examples.iter().map(|e| e.radius).fold(0f32, f32::max),
            cells: total_cells as f32 / n,
            examples,
        })
    }

    pub fn channels(&self) -> usize {
        self.target.len()
    }

    /// The part prototypes of the chosen strategy (or of `strategy`).
    pub fn parts(&self, strategy: Option<usize>) -> &[Part] {
        &self.part_sets[strategy.unwrap_or(self.strategy).min(self.part_sets.len() - 1)]
    }
}

/// The strategy with the best mean calibration IoU over the examples measured, preferring fewer
/// clicks within [`CALIBRATION_SLACK`]; the first (one click) when none was measured.
fn chosen_strategy(examples: &[Example]) -> usize {
    let measured: Vec<&Example> = examples.iter().filter(|e| e.calibration.len() == STRATEGIES.len()).collect();
    if measured.is_empty() {
        return 0;
    }
    let mean: Vec<f32> =
        (0..STRATEGIES.len()).map(|s| measured.iter().map(|e| e.calibration[s]).sum::<f32>() / measured.len() as f32).collect();
    let best = mean.iter().copied().fold(f32::MIN, f32::max);
    mean.iter().position(|m| *m >= best - CALIBRATION_SLACK).unwrap_or(0)
}
