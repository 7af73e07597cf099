//! Finding a taught object in a new image: the single best match, or every instance.

use std::time::Instant;

use crate::control::{self, Stage};
use crate::error::Result;
use crate::image::{ImageView, MaskMut};
use crate::sam2::image::{ImageFeatures, Point, Prompt, Sam2Segmenter};

use super::evidence::{Evidence, Maps};
use super::instances;
use super::teach::Taught;

/// One match or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FindMode {
    /// The best match, with its presence decision.
    #[default]
    Best,
    /// Every instance whose score reaches the threshold.
    All,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FindOptions {
    pub mode: FindMode,
    /// A match is present when its score (0..1) reaches this.
    pub threshold: f32,
    /// Mode `All`: most instances returned (the best ones).
    pub max_instances: usize,
    /// Refine each match once with its own box and logits as mask input (where the decoder takes a
    /// mask input; see [`Refinement`]).
    pub refine: bool,
    /// Use the object's colour to locate it and decide presence (off: the features alone, e.g. for
    /// objects whose colour varies between copies).
    pub colour: bool,
}

/// The presence threshold measured on the copy-and-paste set (docs/src/pipelines/sam2-reference.md).
pub const DEFAULT_THRESHOLD: f32 = 0.6;
pub const DEFAULT_MAX_INSTANCES: usize = 100;

impl Default for FindOptions {
    fn default() -> Self {
        FindOptions { mode: FindMode::Best, threshold: DEFAULT_THRESHOLD, max_instances: DEFAULT_MAX_INSTANCES, refine: true, colour: true }
    }
}

/// Whether the refinement ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refinement {
    Done,
    /// Turned off in the options.
    Off,
    /// The decoder takes no mask input (transformers' layout), or the reference was taught on a
    /// video model (its finds are one tracking step): skipped.
    NotSupported,
}

/// One match.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// How much the match looks like the taught object, 0..1 (see `evidence`).
    pub score: f32,
    pub present: bool,
    /// Box around the mask, inclusive pixel indices (all 0 for an empty mask).
    pub bbox: [i32; 4],
    pub area: u64,
    /// The decoder's predicted IoU of the mask.
    pub predicted_iou: f32,
    /// Where the object was located (the first click), in image pixels.
    pub point: (f32, f32),
    /// The evidence the score combines: the mask's mean embedding against the taught one (cosine),
    /// and its colours against the object's (Bhattacharyya coefficient; 1 when colour is off).
    pub similarity: f32,
    pub colour: f32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FindStats {
    pub encoder_reused: bool,
    pub encoder_ms: f64,
    /// Similarity maps, colour map and peak search (Rust, on the cached embedding).
    pub maps_ms: f64,
    pub decoder_ms: f64,
    pub decoder_runs: usize,
    /// Presence evidence, overlaps, label image.
    pub postprocess_ms: f64,
}

#[derive(Debug, Clone)]
pub struct FindResult {
    pub width: usize,
    pub height: usize,
    /// Mode `Best`: the best match (present or not); mode `All`: the instances kept, best first
    /// (instance k has value k + 1 in `labels`).
    pub instances: Vec<Found>,
    /// 0/255: the best match when present (mode `Best`), every instance kept (mode `All`).
    pub mask: Vec<u8>,
    /// Mode `All`: 0 = background, instance k = k (1-based, best first).
    pub labels: Option<Vec<u16>>,
    pub refinement: Refinement,
    pub stats: FindStats,
}

pub(super) fn elapsed_ms(a: Instant) -> f64 {
    a.elapsed().as_secs_f64() * 1e3
}

pub fn find(sam: &Sam2Segmenter, taught: &Taught, image: &ImageView<'_>, options: &FindOptions) -> Result<FindResult> {
    find_with(sam, taught, image, options, None)
}

/// [`find`] with the reference's strategy replaced by `strategy` (teach-time calibration).
pub fn find_with(
    sam: &Sam2Segmenter,
    taught: &Taught,
    image: &ImageView<'_>,
    options: &FindOptions,
    strategy: Option<usize>,
) -> Result<FindResult> {
    options_check(options)?;
    let (w, h) = (image.width(), image.height());
    control::progress(Stage::Encode, 0.0)?;
    let (features, enc) = sam.image_features(image)?;
    let mut stats =
        FindStats { encoder_reused: enc.encoder_reused, encoder_ms: enc.encoder_preprocess_ms + enc.encoder_ms, ..FindStats::default() };
    control::progress(Stage::Prompts, 0.0)?;
    let t1 = Instant::now();
    let maps = Maps::new(sam, taught, &features, image, options.colour, strategy)?;
    stats.maps_ms = elapsed_ms(t1);
    let refinement = match (options.refine, sam.spec().takes_mask_input()) {
        (false, _) => Refinement::Off,
        (true, false) => Refinement::NotSupported,
        (true, true) => Refinement::Done,
    };
    let mut result = match options.mode {
        FindMode::Best => best(sam, taught, &features, &maps, image, options, refinement == Refinement::Done, &mut stats)?,
        FindMode::All => instances::all(sam, taught, &features, &maps, image, options, &mut stats)?,
    };
    control::progress(Stage::Prompts, 1.0)?;
    result.width = w;
    result.height = h;
    result.refinement = if options.mode == FindMode::All && refinement == Refinement::Done { Refinement::Off } else { refinement };
    result.stats = stats;
    Ok(result)
}

pub(super) fn options_check(options: &FindOptions) -> Result<()> {
    if !(0.0..=1.0).contains(&options.threshold) {
        return Err(crate::error::Error::invalid(format!("threshold {}: give a score between 0 and 1", options.threshold)));
    }
    if options.max_instances == 0 || options.max_instances > u16::MAX as usize {
        return Err(crate::error::Error::invalid(format!("max_instances {}: give 1 to {}", options.max_instances, u16::MAX)));
    }
    Ok(())
}

/// The single best match: clicks at the location peak and its parts, one decoder run, then one
/// refinement run with the mask's box and logits.
#[allow(clippy::too_many_arguments)]
fn best(
    sam: &Sam2Segmenter,
    taught: &Taught,
    features: &ImageFeatures,
    maps: &Maps,
    image: &ImageView<'_>,
    options: &FindOptions,
    refine: bool,
    stats: &mut FindStats,
) -> Result<FindResult> {
    let (w, h) = (image.width(), image.height());
    let peak = maps.peak();
    let mut clicks: Vec<Point> = maps.part_clicks(taught, peak, None);
    clicks.push(maps.negative_click());
    let mut mask = crate::alloc::vec_of(w * h, 0u8, "the mask")?;
    let t = Instant::now();
    let prompt = Prompt { points: clicks.clone(), ..Prompt::default() };
    let mut run = sam.decode_features(features, &prompt, &mut MaskMut::new(&mut mask, w, h, 0)?)?;
    stats.decoder_runs += 1;
    if refine {
        if let Some(bbox) = instances::box_of(&mask, w, h) {
            let prompt = Prompt { points: clicks.clone(), bbox: Some(bbox), mask_input: Some(run.low_res.to_vec()), refine: false };
            let mut refined = crate::alloc::vec_of(w * h, 0u8, "the mask")?;
            let second = sam.decode_features(features, &prompt, &mut MaskMut::new(&mut refined, w, h, 0)?)?;
            stats.decoder_runs += 1;
            if second.foreground_pixels > 0 {
                mask = refined;
                run = second;
            }
        }
    }
    stats.decoder_ms += elapsed_ms(t);
    let t = Instant::now();
    let evidence = Evidence::of(taught, maps, &mask, image, options.colour);
    let found = evidence.found(&mask, w, h, run.scores[run.chosen], clicks[0], options.threshold);
    if !found.present {
        mask.fill(0);
    }
    stats.postprocess_ms += elapsed_ms(t);
    Ok(FindResult {
        width: w,
        height: h,
        instances: vec![found],
        mask,
        labels: None,
        refinement: Refinement::Off,
        stats: FindStats::default(),
    })
}
