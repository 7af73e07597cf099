//! What locates the taught object in a new image (the maps) and what decides that a decoded mask is
//! it (the evidence).

use crate::error::Result;
use crate::image::ImageView;
use crate::sam2::image::{ImageFeatures, Point, Sam2Segmenter};

use super::colour;
use super::find::Found;
use super::grid::Grid;
use super::similarity::{cell_norms, dot, similarity_maps, unit};
use super::teach::{Taught, COVERED};

/// Weight of the colour likelihood (0..1) added to the feature similarity (-1..1) in the location
/// map: enough to move the peak from a similar-looking thing of another colour to the object.
pub const COLOUR_WEIGHT: f32 = 0.2;

/// How far from the location peak a part is looked for, in reference radii (scale 1.4 and a
/// rotation still fit).
pub const REACH: f32 = 1.6;

/// A part's click is kept when it matches at least this share of the part's best match in the
/// reference (else the part is not seen: hidden, or not part of this copy).
pub const PART_FLOOR: f32 = 0.8;

/// The maps of one image: the target's and each part's similarity per cell, the colour likelihood
/// per cell, and their sum that locates the object.
pub struct Maps<'f> {
    pub grid: Grid,
    features: &'f ImageFeatures,
    pub similarity: Vec<f32>,
    pub parts: Vec<Vec<f32>>,
    pub colour: Vec<f32>,
    pub location: Vec<f32>,
    colour_weight: f32,
    /// The strategy whose parts the maps hold (`None`: the reference's own).
    strategy: Option<usize>,
}

impl<'f> Maps<'f> {
    pub fn new(
        sam: &Sam2Segmenter,
        taught: &Taught,
        features: &'f ImageFeatures,
        image: &ImageView<'_>,
        use_colour: bool,
        strategy: Option<usize>,
    ) -> Result<Self> {
        let embed = features.embed()?;
        if embed.channels != taught.channels() {
            return Err(crate::error::Error::unsupported_model(format!(
                "the image's embedding has {} channels, the reference's {}: teach it on this model",
                embed.channels,
                taught.channels()
            )));
        }
        let grid = Grid::new(sam.frame_of(features.size()), features.size(), (embed.rows, embed.cols))?;
        let cells = grid.cells();
        let norms = cell_norms(embed.data, embed.channels, cells);
        let mut vectors: Vec<&[f32]> = vec![&taught.target];
        vectors.extend(taught.parts(strategy).iter().map(|p| p.centre.as_slice()));
        let mut maps = similarity_maps(embed.data, embed.channels, cells, &norms, &vectors);
        let similarity = maps.remove(0);
        let colour_weight = if use_colour { COLOUR_WEIGHT } else { 0.0 };
        let colour = if use_colour { colour::cell_likelihood(image, &grid, &taught.colour_likelihood) } else { vec![0.0; cells] };
        let location =
            (0..cells).map(|i| if grid.valid(i) { similarity[i] + colour_weight * colour[i] } else { f32::NEG_INFINITY }).collect();
        Ok(Maps { grid, features, similarity, parts: maps, colour, location, colour_weight, strategy })
    }

    /// The cell where the object most likely is (the middle of its plateau, see `similarity::plateau`).
    pub fn peak(&self) -> usize {
        let top = (0..self.location.len()).max_by(|a, b| self.location[*a].total_cmp(&self.location[*b]).then(b.cmp(a))).unwrap_or(0);
        super::similarity::plateau(&self.location, self.grid.cols, |i| self.grid.valid(i), top).0
    }

    /// Positive clicks for the object located at `peak`: the peak, then each part's best cell within
    /// reach (where `owner` allows the cell: for many instances, the cells nearest this peak).
    pub fn part_clicks(&self, taught: &Taught, peak: usize, owner: Option<&dyn Fn(usize) -> bool>) -> Vec<Point> {
        let reach = taught.radius * REACH;
        let mut cells = vec![peak];
        for (part, map) in taught.parts(self.strategy).iter().zip(&self.parts) {
            let best = (0..map.len())
                .filter(|i| self.grid.valid(*i) && self.grid.distance(*i, peak) <= reach && owner.is_none_or(|o| o(*i)))
                .max_by(|a, b| {
                    let score = |i: usize| map[i] + self.colour_weight * self.colour[i];
                    score(*a).total_cmp(&score(*b)).then(b.cmp(a))
                });
            if let Some(i) = best.filter(|i| map[*i] >= PART_FLOOR * part.best) {
                if !cells.contains(&i) {
                    cells.push(i);
                }
            }
        }
        cells
            .iter()
            .map(|i| {
                let (x, y) = self.grid.centre(*i);
                Point { x, y, label: 1 }
            })
            .collect()
    }

    /// PerSAM's negative click: the cell least similar to the object.
    pub fn negative_click(&self) -> Point {
        let i = (0..self.similarity.len())
            .filter(|i| self.grid.valid(*i))
            .min_by(|a, b| self.similarity[*a].total_cmp(&self.similarity[*b]).then(a.cmp(b)))
            .unwrap_or(0);
        let (x, y) = self.grid.centre(i);
        Point { x, y, label: 0 }
    }

    pub fn features(&self) -> &ImageFeatures {
        self.features
    }
}

/// What a decoded mask shows: its mean embedding against the target, and its colours.
pub struct Evidence {
    pub similarity: f32,
    /// `None` when colour is off.
    pub colour: Option<f32>,
}

/// The presence score's scale: a mask whose mean embedding is this similar to the target (cosine)
/// scores 0 on that count, one this similar or more scores 1.
pub const SIMILARITY_FLOOR: f32 = 0.7;
pub const SIMILARITY_FULL: f32 = 1.0;

impl Evidence {
    /// `mask`: 0/not 0, the image's size.
    pub fn of(taught: &Taught, maps: &Maps<'_>, mask: &[u8], image: &ImageView<'_>, use_colour: bool) -> Evidence {
        let grid = &maps.grid;
        let (w, h) = (grid.width, grid.height);
        let cover = grid.coverage(|x, y| mask[y * w + x] != 0);
        let mut cells: Vec<usize> = (0..grid.cells()).filter(|i| cover[*i] >= COVERED).collect();
        if cells.is_empty() {
            let most = cover.iter().copied().fold(0f32, f32::max);
            cells = (0..grid.cells()).filter(|i| most > 0.0 && cover[*i] >= most).collect();
        }
        let similarity = match maps.features().embed() {
            Ok(embed) if !cells.is_empty() => {
                let mut v = super::similarity::mean_feature(embed.data, embed.channels, grid.cells(), &cells);
                unit(&mut v);
                dot(&v, &taught.target)
            }
            _ => -1.0,
        };
        let colour = use_colour.then(|| colour::overlap(&colour::histogram(image, |x, y| mask[y * w + x] != 0), &taught.colour));
        let _ = h;
        Evidence { similarity, colour }
    }

    /// The presence score, 0..1: the mean of the embedding's score (its cosine with the target on
    /// the scale above) and the colours' overlap; the embedding's alone when colour is off.
    pub fn score(&self) -> f32 {
        let s = ((self.similarity - SIMILARITY_FLOOR) / (SIMILARITY_FULL - SIMILARITY_FLOOR)).clamp(0.0, 1.0);
        match self.colour {
            Some(c) => 0.5 * (s + c),
            None => s,
        }
    }

    pub fn found(&self, mask: &[u8], w: usize, h: usize, predicted_iou: f32, point: Point, threshold: f32) -> Found {
        let (bbox, area) = super::instances::extent(mask, w, h);
        let score = self.score();
        Found {
            score,
            present: score >= threshold && area > 0,
            bbox,
            area,
            predicted_iou,
            point: (point.x, point.y),
            similarity: self.similarity,
            colour: self.colour.unwrap_or(1.0),
        }
    }
}
