//! Reference-based segmentation ("teach once, find it in every image"): one or a few images with
//! the object's mask make a [`Reference`]; [`Reference::find`] segments the same object in a new
//! image without a click, decides whether it is there, or finds every copy of it.
//!
//! Training-free, on any SAM image pair segrt runs (PerSAM's location prior, Zhang et al. 2024,
//! extended where measurement showed it fell short; docs/src/pipelines/sam2-reference.md has the
//! figures):
//! * teaching keeps what the encoder gave under the mask: the mean embedding of the covered grid
//!   cells (the target), up to four part prototypes (cosine k-means of those cells: an object whose
//!   parts differ gets one click per part, not one on its most typical part) and the object's colour
//!   as chromaticity against the rest of its photo (brightness changes do not move it);
//! * finding: cosine similarity of the target with every cell plus the colour likelihood locates the
//!   object; each prototype's best cell near it is a positive click; the decoder's mask is refined
//!   once with its own box and logits (where the decoder takes a mask input); presence is decided on
//!   the decoded mask: the mean embedding under it against the target, and its colours against the
//!   object's;
//! * every instance: peaks of the location map, suppressed within the object's radius, one prompt
//!   each through the many-prompts call, a gate on each mask's presence score, overlaps resolved best
//!   first.
//!
//! It finds the same object or part again, not a category: another instance of the class that
//! looks different is (by design) not found.
//!
//! On a SAM2 video model the reference uses the memory approach instead ([`MemoryReference`],
//! `memory`): each example is a conditioning frame prompted with its mask, and a find tracks the
//! new image against those frames alone, as the official video predictor does on a short video.
//!
//! The similarity maps and peak search run here in Rust on the cached embedding; only decoder runs
//! go to ONNX Runtime. A `Reference` holds embeddings (no image), is immutable between `add`s and
//! safe to share between threads; `store` saves it with the model's identity and a checksum.

mod colour;
mod evidence;
mod find;
mod grid;
mod instances;
mod memory;
mod similarity;
mod store;
mod teach;

pub use find::{FindMode, FindOptions, FindResult, FindStats, Found, Refinement, DEFAULT_MAX_INSTANCES, DEFAULT_THRESHOLD};
pub use grid::Grid;
pub use memory::MemoryReference;
pub use store::FORMAT_VERSION;
pub use teach::{Example, Taught};

use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};
use crate::image::ImageView;

use super::image::Sam2Segmenter;

/// Most examples one reference holds.
pub const MAX_EXAMPLES: usize = 64;

/// The examples with `example` added, calibrated: a find in its own photo (`image`, whose features
/// are cached by now) with each strategy of [`teach::STRATEGIES`], scored by its IoU with `mask`.
fn calibrated(
    sam: &Sam2Segmenter,
    mut examples: Vec<Example>,
    example: Example,
    image: &ImageView<'_>,
    mask: &[u8],
    mask_stride: usize,
) -> Result<Taught> {
    examples.push(example);
    let provisional = Taught::derive(examples.clone())?;
    let options = FindOptions { threshold: 0.0, ..FindOptions::default() };
    let (w, h) = (image.width(), image.height());
    let stride = if mask_stride == 0 { w } else { mask_stride };
    let mut scores = Vec::with_capacity(teach::STRATEGIES.len());
    for s in 0..teach::STRATEGIES.len() {
        let found = find::find_with(sam, &provisional, image, &options, Some(s))?;
        let (mut both, mut any) = (0u64, 0u64);
        for y in 0..h {
            for (a, b) in found.mask[y * w..(y + 1) * w].iter().zip(&mask[y * stride..y * stride + w]) {
                both += (*a != 0 && *b != 0) as u64;
                any += (*a != 0 || *b != 0) as u64;
            }
        }
        scores.push(both as f32 / any.max(1) as f32);
    }
    examples.last_mut().expect("just pushed").calibration = scores;
    Taught::derive(examples)
}

/// A taught object: its examples and what is derived from them. Cheap to clone (shared).
pub struct Reference {
    model_identity: u128,
    taught: RwLock<Arc<Taught>>,
}

impl Reference {
    /// A reference from one image and the object's mask on it (`mask`: width x height bytes, not 0 =
    /// object, rows `mask_stride` apart, 0 = `width`), taught on `sam`'s encoder.
    pub fn new(sam: &Sam2Segmenter, image: &ImageView<'_>, mask: &[u8], mask_stride: usize) -> Result<Self> {
        let example = Example::from_image(sam, image, mask, mask_stride)?;
        let taught = calibrated(sam, Vec::new(), example, image, mask, mask_stride)?;
        Ok(Reference { model_identity: sam.model_identity(), taught: RwLock::new(Arc::new(taught)) })
    }

    /// Adds another example (another view, another copy of the object); later finds use all of them.
    /// Other threads' finds meanwhile use the reference as it was.
    pub fn add(&self, sam: &Sam2Segmenter, image: &ImageView<'_>, mask: &[u8], mask_stride: usize) -> Result<()> {
        self.check_model(sam)?;
        let example = Example::from_image(sam, image, mask, mask_stride)?;
        let current = self.snapshot();
        if current.examples.len() >= MAX_EXAMPLES {
            return Err(Error::invalid(format!("a reference holds at most {MAX_EXAMPLES} examples")));
        }
        if example.channels != current.channels() {
            return Err(Error::invalid("the example's embedding has another width than the reference's"));
        }
        let taught = calibrated(sam, current.examples.clone(), example, image, mask, mask_stride)?;
        *self.taught.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(taught);
        Ok(())
    }

    /// The examples and what is derived from them, as they are now.
    pub fn snapshot(&self) -> Arc<Taught> {
        self.taught.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn examples(&self) -> usize {
        self.snapshot().examples.len()
    }

    /// The model the reference was taught with (see [`Sam2Segmenter::model_identity`]).
    pub fn model_identity(&self) -> u128 {
        self.model_identity
    }

    fn check_model(&self, sam: &Sam2Segmenter) -> Result<()> {
        store::check_identity(store::Kind::Image, self.model_identity, sam.model_identity())
    }

    /// Finds the object in `image` (see [`FindOptions`] and [`FindResult`]), on `sam`'s cached
    /// encoding when `image` is the image encoded last.
    pub fn find(&self, sam: &Sam2Segmenter, image: &ImageView<'_>, options: &FindOptions) -> Result<FindResult> {
        self.check_model(sam)?;
        let taught = self.snapshot();
        if taught.examples.iter().any(|e| e.setting != sam.intensity_setting_key()) {
            return Err(Error::invalid(
                "the reference was taught under another intensity setting than the session's now: set the same one, or teach again",
            ));
        }
        find::find(sam, &taught, image, options)
    }

    /// The reference as a file's bytes (see `store`).
    pub fn to_bytes(&self) -> Vec<u8> {
        store::seal(store::Kind::Image, self.model_identity, &store::examples_payload(&self.snapshot().examples))
    }

    /// A reference from a file's bytes, for use with `sam` (refused when made with another model,
    /// damaged, or of a newer format).
    pub fn from_bytes(sam: &Sam2Segmenter, bytes: &[u8]) -> Result<Self> {
        let payload = store::open(bytes, store::Kind::Image, sam.model_identity())?;
        let taught = Taught::derive(store::examples_from(payload)?)?;
        Ok(Reference { model_identity: sam.model_identity(), taught: RwLock::new(Arc::new(taught)) })
    }

    /// Saves the reference to `path` (written whole or not at all).
    pub fn save(&self, path: &std::path::Path) -> Result<()> {
        store::write_file(path, &self.to_bytes())
    }

    pub fn load(sam: &Sam2Segmenter, path: &std::path::Path) -> Result<Self> {
        Self::from_bytes(sam, &store::read_file(path)?)
    }
}
