//! The C types of reference-based segmentation (`reference.rs`): the reference handle, find
//! options, per-match records and per-call figures.

use crate::error::{Error, Result};
use crate::sam2::reference::{FindMode, FindOptions};

use super::enums::SegFindMode;
use super::handles::Opaque;
use super::versioned::{read_versioned, versioned};

/// An opaque reference handle: a taught object (embeddings, no image). Create with
/// `seg_reference_create` or `seg_reference_load`, release with `seg_reference_free`.
pub struct SegReference {
    _private: [u8; 0],
}

impl Opaque for SegReference {
    const NOUN: &'static str = "reference";
    const OUT: &'static str = "out_reference";
}

/// Options of `seg_reference_find`: `SegFindOptions o = { .struct_size = sizeof o }; seg_find_options_default(&o);`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegFindOptions {
    pub struct_size: u32,
    /// A `SegFindMode` (default `SEG_FIND_BEST`).
    pub mode: i32,
    /// A match is present when its score (0..1) reaches this (default 0.6, chosen on the
    /// copy-and-paste set; see the reference-based segmentation page of the book).
    pub threshold: f32,
    /// `SEG_FIND_ALL`: most instances returned, best first (default 100, at most 65535).
    pub max_instances: u32,
    /// 1 (default): refine each match once with its own box and logits, where the decoder takes a
    /// mask input. 0: one decoder run per match.
    pub refine: u32,
    /// 1 (default): use the object's colour to locate it and decide presence. 0: the embedding alone
    /// (objects whose colour varies between copies).
    pub colour: u32,
    /// Must be 0.
    pub reserved: [u32; 2],
}

impl SegFindOptions {
    pub fn defaults() -> Self {
        let o = FindOptions::default();
        SegFindOptions {
            struct_size: std::mem::size_of::<SegFindOptions>() as u32,
            mode: SegFindMode::from(o.mode) as i32,
            threshold: o.threshold,
            max_instances: o.max_instances as u32,
            refine: o.refine as u32,
            colour: o.colour as u32,
            reserved: [0; 2],
        }
    }

    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes.
    pub(crate) unsafe fn read(p: *const SegFindOptions) -> Result<FindOptions> {
        // SAFETY: forwarded from the caller.
        let raw = unsafe { read_versioned(p, SegFindOptions::defaults())? };
        let flag = |v: u32, what: &str| -> Result<bool> {
            match v {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(Error::invalid(format!("SegFindOptions.{what} is {v}: give 0 or 1"))),
            }
        };
        if raw.reserved != [0; 2] {
            return Err(Error::invalid("SegFindOptions.reserved must be 0"));
        }
        if !raw.threshold.is_finite() {
            return Err(Error::invalid("SegFindOptions.threshold is not a finite number"));
        }
        Ok(FindOptions {
            mode: FindMode::try_from(raw.mode)?,
            threshold: raw.threshold,
            max_instances: raw.max_instances as usize,
            refine: flag(raw.refine, "refine")?,
            colour: flag(raw.colour, "colour")?,
        })
    }
}

/// One match of `seg_reference_find` (a record: pass `sizeof(SegFound)` as `found_size`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SegFound {
    /// Its value in the label image (`SEG_FIND_ALL`: 1, 2, ... best first; `SEG_FIND_BEST`: 1).
    pub id: u32,
    /// 1 when the score reaches the threshold. `SEG_FIND_BEST` reports the best match either way (its
    /// mask is written only when present); `SEG_FIND_ALL` returns present instances only.
    pub present: u32,
    /// How much the match looks like the taught object, 0..1.
    pub score: f32,
    /// The decoder's predicted IoU of the mask.
    pub predicted_iou: f32,
    /// Box around the mask, inclusive pixel indices; all 0 for an empty mask.
    pub x0: i32,
    pub y0: i32,
    pub x1: i32,
    pub y1: i32,
    pub area: u64,
    /// Where the object was located (the first click), in image pixels.
    pub point_x: f32,
    pub point_y: f32,
    /// The evidence the score combines: the mask's mean embedding against the taught one (cosine),
    /// and its colours' overlap with the object's (1 when colour is off).
    pub similarity: f32,
    pub colour: f32,
}

/// What `seg_reference_find` did. Set `struct_size = sizeof(SegFindInfo)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SegFindInfo {
    pub struct_size: u32,
    /// Matches returned (the records written).
    pub found: u32,
    /// A `SegRefinement`.
    pub refinement: i32,
    pub decoder_runs: u32,
    /// 1 when the image's cached encoding was used (no encoder run).
    pub encoder_reused: u32,
    /// Written 0.
    pub reserved: u32,
    pub encoder_ms: f64,
    /// Similarity maps, colour map and peak search (in segrt, on the cached embedding).
    pub maps_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
}

versioned!(SegFindOptions);
versioned!(SegFindInfo);
