//! Many prompts on one image in one call (a detector's boxes, one mask each): the image is encoded
//! once (the segmenter's cached embedding), and the decoder runs once per chunk of prompts where the
//! export has a prompt batch axis, prompt by prompt where it has not.
//!
//! Each prompt's mask is the one a single prediction (`predict_into`, no mask input, no refinement)
//! gives: the same model-space prompt (box corners first, then the points), the same choice among
//! the decoder's masks (`decode::choose`), the same upsampling and threshold (`mask_into`). Prompts
//! share a decoder run only when they have the same number of model-space points (a box counts two),
//! since a batch is one `B x N x 2` tensor; in transformers' layout (objects axis, a separate box
//! input) when they have the same number of points and all have a box or none has. Chunks are
//! bounded by the `max_memory_bytes` budget.
//! Nothing is written into the caller's masks until every decoder run succeeded.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::alloc;
use crate::control::{self, Stage};
use crate::error::{Error, ErrorKind, Result};
use crate::image::{ImageView, MaskMut};

use super::decode::choose;
use super::prompt::{model_space, transformers_prompt, validate_prompt, Prompt};
use super::spec::DecoderLayout;
use super::{ms, no_image, Sam2Segmenter};

/// Most prompts accepted in one call.
pub const MAX_PROMPTS: usize = 4096;

/// What a many-prompts call counted and measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ManyStats {
    pub prompts: usize,
    pub decoder_runs: usize,
    /// Most prompts in one decoder run (1 for decoders without a prompt batch axis).
    pub batch: usize,
    pub encoder_reused: bool,
    /// Pre-processing + encoder run, 0 when the cached embedding was reused.
    pub encoder_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
}

/// The result of a many-prompts call: each prompt's chosen mask's predicted IoU, in prompt order.
#[derive(Debug, Clone, PartialEq)]
pub struct ManyRun {
    pub scores: Vec<f32>,
    pub stats: ManyStats,
}

/// Checks a call's prompts against an image of `(w, h)`: 1 to `MAX_PROMPTS` of them, each a valid
/// prompt (`validate_prompt`) without mask input or refinement (those belong to single calls).
pub fn validate_prompts(prompts: &[Prompt], w: usize, h: usize) -> Result<()> {
    if prompts.is_empty() {
        return Err(Error::invalid("no prompts: give at least one"));
    }
    if prompts.len() > MAX_PROMPTS {
        return Err(Error::invalid(format!("{} prompts: at most {MAX_PROMPTS} are accepted in one call", prompts.len())));
    }
    for (i, p) in prompts.iter().enumerate() {
        if p.refine || p.mask_input.is_some() {
            return Err(Error::invalid(format!("prompt {i}: refinement (a mask input) is for single predictions")));
        }
        validate_prompt(p, w, h).map_err(|e| e.context(format!("prompt {i}")))?;
    }
    Ok(())
}

/// A prompt in model space, and its place in the call.
struct ModelPrompt {
    index: usize,
    coords: Vec<f32>,
    labels: Vec<f32>,
    /// transformers' layout: the box (x1, y1, x2, y2), or empty; other layouts: empty (a box is
    /// two of the points).
    boxes: Vec<f32>,
}

/// A prompt's chosen mask logits, kept until every decoder run is done, and their (width, height).
#[derive(Clone)]
struct Logits {
    plane: Vec<f32>,
    size: (usize, usize),
}

impl Sam2Segmenter {
    /// Bytes one prompt costs in a decoder run (inputs, the outputs and their copies), and the bytes
    /// of its chosen logits kept until every run is done, for an image of `(w, h)`. Decoders with an
    /// `orig_im_size` input return masks at the image's size; the others at the low-res size.
    fn prompt_bytes(&self, (w, h): (usize, usize)) -> (u64, u64) {
        let (mh, mw) = self.spec.mask_input_size;
        let low = (mh * mw) as u64;
        let plane = if self.spec.orig_im_size.is_some() { (w * h) as u64 } else { low };
        let extra = if self.spec.low_res_output.is_some() { low } else { 0 };
        // up to 4 masks of f32, as ONNX Runtime returns them and as copied out; the mask input
        (2 * 4 * 4 * (plane + extra) + 4 * low, 4 * plane)
    }

    /// Prompts per decoder run within the `max_memory_bytes` budget, for `n` prompts on an image of
    /// `(w, h)`: at most `n`, 1 where the decoder has no prompt batch axis. Refused with
    /// `OutOfMemory` when even one prompt per run does not fit next to the kept logits.
    pub fn prompt_batch_size(&self, n: usize, (w, h): (usize, usize)) -> Result<usize> {
        let (per_prompt, kept) = self.prompt_bytes((w, h));
        let kept = kept.saturating_mul(n as u64);
        let budget = self.options().max_memory_bytes;
        if kept.saturating_add(per_prompt) > budget {
            return Err(Error::new(
                ErrorKind::OutOfMemory,
                format!(
                    "{n} prompts on a {w}x{h} image need {} (the kept masks {}, a decoder run {}), more than the max_memory_bytes budget of {}; raise it, or pass fewer prompts per call",
                    alloc::size_text(kept.saturating_add(per_prompt)),
                    alloc::size_text(kept),
                    alloc::size_text(per_prompt),
                    alloc::size_text(budget)
                ),
            ));
        }
        if !self.spec.prompt_batch {
            return Ok(1);
        }
        Ok((((budget - kept) / per_prompt.max(1)) as usize).clamp(1, n.max(1)).min(self.max_prompt_batch()))
    }

    /// Runs every prompt on `image` (or, when `None`, on the image set last) and writes prompt i's
    /// mask (0/255) into `masks[i]`, each of the image's size. The encoder runs only when the image
    /// is not the cached one. Progress is reported as `Stage::Prompts` between decoder runs, ending
    /// at 1.0. Everything is checked before anything runs; nothing is written unless every run
    /// succeeded. The session's previous mask (for refinement) is left as it was.
    pub fn predict_many(&self, image: Option<&ImageView<'_>>, prompts: &[Prompt], masks: &mut [MaskMut<'_>]) -> Result<ManyRun> {
        if masks.len() != prompts.len() {
            return Err(Error::invalid(format!("{} masks for {} prompts: give one mask per prompt", masks.len(), prompts.len())));
        }
        let checks = |(w, h): (usize, usize)| -> Result<usize> {
            validate_prompts(prompts, w, h)?;
            for (i, p) in prompts.iter().enumerate() {
                self.check_profile_points(p).map_err(|e| e.context(format!("prompt {i}")))?;
            }
            for (i, m) in masks.iter().enumerate() {
                if (m.width(), m.height()) != (w, h) {
                    return Err(Error::invalid(format!(
                        "mask {i} is {}x{} but the image is {w}x{h}: every mask must have the image's size",
                        m.width(),
                        m.height()
                    )));
                }
            }
            self.prompt_batch_size(prompts.len(), (w, h))
        };
        let call = self.call_image(image)?;
        // Check what can be checked before paying for (or waiting for) an encoder run.
        let size = image.map(|img| (img.width(), img.height())).or_else(|| self.cached_image_size()).ok_or_else(no_image)?;
        checks(size)?;
        let (embedding, encoder_stats) = self.embedding_for(&call, false)?;
        let (w, h) = (embedding.width, embedding.height);
        let batch = checks((w, h))?;

        // Prompts with the same number of model-space points (and, in transformers' layout, all
        // with a box or all without) share runs, in prompt order.
        let spec = &self.spec;
        let mut groups: BTreeMap<(usize, bool), Vec<ModelPrompt>> = BTreeMap::new();
        for (i, p) in prompts.iter().enumerate() {
            let m = if spec.layout.is_transformers() {
                let t = transformers_prompt(p, spec.image_size, (w, h));
                ModelPrompt { index: i, coords: t.points, labels: t.labels, boxes: t.boxes }
            } else {
                let (coords, labels) = model_space(p, spec.family, spec.image_size, (w, h));
                ModelPrompt { index: i, coords, labels, boxes: Vec::new() }
            };
            groups.entry((m.labels.len(), !m.boxes.is_empty())).or_default().push(m);
        }
        let runs: usize = groups.values().map(|g| g.len().div_ceil(batch)).sum();
        let mut stats = ManyStats {
            prompts: prompts.len(),
            encoder_reused: encoder_stats.encoder_reused,
            encoder_ms: encoder_stats.encoder_preprocess_ms + encoder_stats.encoder_ms,
            ..ManyStats::default()
        };
        let mut scores = vec![0f32; prompts.len()];
        let mut kept: Vec<Option<Logits>> = vec![None; prompts.len()];
        for chunk in groups.values().flat_map(|g| g.chunks(batch)) {
            control::progress(Stage::Prompts, stats.decoder_runs as f32 / runs as f32)?;
            let b = chunk.len();
            let coords: Vec<f32> = chunk.iter().flat_map(|p| p.coords.iter().copied()).collect();
            let labels: Vec<f32> = chunk.iter().flat_map(|p| p.labels.iter().copied()).collect();
            let boxes: Vec<f32> = chunk.iter().flat_map(|p| p.boxes.iter().copied()).collect();
            let t0 = Instant::now();
            let (shape, logits, iou) = match spec.layout {
                // transformers' layout: the chunk's prompts as objects of one run.
                DecoderLayout::Transformers { .. } => {
                    self.decoder.with(|session, _| self.decode_object_batch(session, &embedding, (&coords, &labels, &boxes), b))?
                }
                DecoderLayout::PointsAndLabels => {
                    self.decoder.with(|session, _| self.decode_batch(session, &embedding, &coords, &labels, b))?
                }
            };
            stats.decoder_ms += ms(t0, Instant::now());
            stats.decoder_runs += 1;
            stats.batch = stats.batch.max(b);
            let t1 = Instant::now();
            let [ob, k, mh, mw] = shape;
            if ob != b || k == 0 || iou.len() < b * k || logits.len() != b * k * mh * mw {
                return Err(Error::unsupported_model(format!(
                    "decoder returned masks {shape:?} and {} IoU values for {b} prompts",
                    iou.len()
                )));
            }
            for (p, ModelPrompt { index: i, .. }) in chunk.iter().enumerate() {
                let chosen = choose(&iou[p * k..(p + 1) * k]);
                scores[*i] = iou[p * k + chosen];
                let plane = &logits[(p * k + chosen) * mh * mw..(p * k + chosen + 1) * mh * mw];
                kept[*i] = Some(Logits { plane: alloc::copy_of(plane, "a prompt's mask logits")?, size: (mw, mh) });
            }
            stats.postprocess_ms += ms(t1, Instant::now());
        }
        control::progress(Stage::Prompts, 1.0)?;
        let t2 = Instant::now();
        for (mask, plane) in masks.iter_mut().zip(&kept) {
            let l = plane.as_ref().ok_or_else(|| Error::internal("a prompt was not decoded"))?;
            self.mask_into(&l.plane, l.size, mask)?;
        }
        stats.postprocess_ms += ms(t2, Instant::now());
        Ok(ManyRun { scores, stats })
    }
}
