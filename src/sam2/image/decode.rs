//! The decoder side: a prompt on an embedded image to masks at the image's size, and the low-res
//! logits kept for refinement.

use std::sync::Arc;
use std::time::Instant;

use ort::session::{Session, SessionInputValue};
use ort::value::{Tensor, TensorRef};

use super::embedding::Embedding;
use super::prompt::{model_space, transformers_prompt, validate_prompt, Prompt};
use super::spec::{Family, NumberType};
use super::{ms, no_image, Sam2Output, Sam2Run, Sam2Segmenter, Sam2Stats};
use crate::alloc;
use crate::engine::{self, io::f32_output};
use crate::error::{Error, ErrorKind, Result};
use crate::image::bilinear::interpolate;
use crate::image::upsample::{threshold_into, upsampled_mask};
use crate::image::{check_size, ImageView, MaskMut};

/// The reference predictor clamps low-res logits to this before feeding them back.
const LOGIT_CLAMP: f32 = 32.0;

impl Sam2Segmenter {
    /// Runs the decoder for `prompt` on `image` (or, when `None`, on the image set last), with masks
    /// of its own.
    pub fn predict(&self, image: Option<&ImageView<'_>>, prompt: &Prompt, want_all: bool) -> Result<Sam2Output> {
        let (w, h) = match image {
            Some(img) => (img.width(), img.height()),
            None => self.cached_image_size().ok_or_else(no_image)?,
        };
        check_size(w as i64, h as i64, self.options().max_pixels)?;
        let mut mask = alloc::vec_of(w * h, 0u8, "the mask")?;
        let mut all = if want_all { Some(alloc::vec_of(4 * w * h, 0u8, "every mask")?) } else { None };
        let run = self.predict_into(image, prompt, &mut MaskMut::new(&mut mask, w, h, 0)?, all.as_deref_mut())?;
        let all_masks = all.map(|a| a.chunks_exact(w * h).take(run.scores.len()).map(<[u8]>::to_vec).collect());
        Ok(Sam2Output { mask, all_masks, run })
    }

    /// Runs the decoder for `prompt` on `image` (or, when `None`, on the image set last) and writes
    /// the chosen mask (0/255) into the caller's `mask`, which must have the image's size;
    /// `all_masks` (optional, `masks x width x height` bytes) receives every mask. Nothing is
    /// written unless the whole prediction succeeds.
    pub fn predict_into(
        &self,
        image: Option<&ImageView<'_>>,
        prompt: &Prompt,
        mask: &mut MaskMut<'_>,
        all_masks: Option<&mut [u8]>,
    ) -> Result<Sam2Run> {
        let size_check = |(w, h): (usize, usize)| -> Result<()> {
            if (mask.width(), mask.height()) != (w, h) {
                return Err(Error::invalid(format!(
                    "mask is {}x{} but the image is {w}x{h}: the mask must have the image's size",
                    mask.width(),
                    mask.height()
                )));
            }
            validate_prompt(prompt, w, h)?;
            self.check_profile_points(prompt)
        };
        let (lw, lh) = self.low_res_size();
        if !self.spec.takes_mask_input() && (prompt.mask_input.is_some() || prompt.refine) {
            return Err(Error::unsupported_model(format!(
                "refinement (mask_input or SEG_SAM2_REFINE) needs a decoder with a mask input; this '{}' decoder has none \
                 (transformers' prompt_encoder_mask_decoder takes points and boxes only): add clicks to the prompt instead",
                self.spec.convention
            )));
        }
        if prompt.mask_input.as_ref().is_some_and(|m| m.len() != lw * lh) {
            return Err(Error::invalid(format!("mask_input must hold {lw}x{lh} = {} low-res logits", lw * lh)));
        }
        // The state is read once: the cached embedding (when it serves) and the previous logits.
        let call = self.call_image(image)?;
        // Check what can be checked before paying for (or waiting for) an encoder run.
        if let Some((w, h)) = image.map(|img| (img.width(), img.height())).or_else(|| self.cached_image_size()) {
            size_check((w, h))?;
        }
        let (embedding, encoder_stats) = self.embedding_for(&call, false)?;
        let (w, h) = (embedding.width, embedding.height);
        size_check((w, h))?;
        let previous = self.state().previous.clone();
        let previous = match (&prompt.mask_input, prompt.refine) {
            (Some(m), _) => Some(m.as_slice()),
            (None, true) => previous.as_ref().filter(|(k, _)| *k == embedding.key).map(|(_, l)| &l[..]),
            (None, false) => None,
        };

        let t0 = Instant::now();
        let decoded = self.decoder.with(|session, _| self.decode(session, &embedding, prompt, previous))?;
        let t1 = Instant::now();
        let mut run = self.finish(decoded, mask, all_masks)?;
        self.state().previous = Some((embedding.key, run.low_res.clone()));
        run.stats = Sam2Stats { decoder_ms: ms(t0, t1), postprocess_ms: ms(t1, Instant::now()), ..encoder_stats };
        Ok(run)
    }

    pub(super) fn decode(
        &self,
        session: &mut Session,
        embedding: &Embedding,
        prompt: &Prompt,
        previous: Option<&[f32]>,
    ) -> Result<Decoded> {
        let spec = &self.spec;
        if spec.layout.is_transformers() {
            let t = transformers_prompt(prompt, spec.image_size, (embedding.width, embedding.height));
            return self.decode_objects(session, embedding, &t.points, &t.labels, &t.boxes, 1);
        }
        let wrap = |e: ort::Error| Error::internal(format!("cannot build a decoder input: {e}"));
        let mut inputs = self.feature_inputs(embedding)?;
        let (coords, labels) = model_space(prompt, spec.family, spec.image_size, (embedding.width, embedding.height));
        let n = labels.len();
        inputs.push((spec.point_coords.as_str().into(), Tensor::from_array(([1usize, n, 2], coords)).map_err(wrap)?.into()));
        let labels = number_input(spec.label_type, vec![1, n as i64], &labels).map_err(wrap)?;
        inputs.push((spec.point_labels.as_str().into(), labels));
        let (mh, mw) = spec.mask_input_size;
        let has_mask = previous.is_some() as u8 as f32;
        let mask = match previous {
            Some(p) if p.len() == mh * mw => p.to_vec(),
            _ => vec![0f32; mh * mw],
        };
        inputs.push((spec.mask_input.as_str().into(), Tensor::from_array(([1usize, 1, mh, mw], mask)).map_err(wrap)?.into()));
        let count: i64 = spec.has_mask_input_shape.iter().product::<i64>().max(1);
        inputs.push((
            spec.has_mask_input.as_str().into(),
            Tensor::from_array((spec.has_mask_input_shape.clone(), vec![has_mask; count as usize])).map_err(wrap)?.into(),
        ));
        if let Some((name, ty)) = &spec.orig_im_size {
            inputs.push((name.as_str().into(), orig_im_size_input(*ty, embedding).map_err(wrap)?));
        }

        engine::run(session, inputs, self.decoder.releases_arena(), "SAM2 decoder run", |outputs| {
            let read = |name: &str| f32_output(outputs, name, "SAM2 decoder");
            let masks = read(&spec.masks_output)?;
            let iou = read(&spec.iou_output)?.1;
            let low_res = spec.low_res_output.as_deref().map(read).transpose()?;
            Ok(Decoded { masks, iou, low_res })
        })
    }

    /// The decoder's image-feature inputs: the embedding's tensors under the decoder's names,
    /// borrowed, not copied (the embedding of a 1024 model is about 17 MB).
    fn feature_inputs<'e>(&'e self, embedding: &'e Embedding) -> Result<Vec<(std::borrow::Cow<'e, str>, SessionInputValue<'e>)>> {
        let wrap = |e: ort::Error| Error::internal(format!("cannot build a decoder input: {e}"));
        let mut inputs: Vec<(std::borrow::Cow<'e, str>, SessionInputValue<'e>)> = Vec::new();
        for (role, name) in &self.spec.decoder_features {
            let (_, shape, data) = embedding.features.iter().find(|(r, _, _)| r == role).expect("checked when the spec was detected");
            inputs.push((name.as_str().into(), TensorRef::from_array_view((shape.clone(), data.as_slice())).map_err(wrap)?.into()));
        }
        Ok(inputs)
    }

    /// transformers' layout: `b` objects of `n` points each (`points`: b x n x 2, `labels`: b x n, in
    /// model space as `transformers_prompt` gives them) and either a box each (`boxes`: b x 4) or
    /// none (empty), in one run over the objects axis; the masks as [b, K, h, w].
    fn decode_objects(
        &self,
        session: &mut Session,
        embedding: &Embedding,
        points: &[f32],
        labels: &[f32],
        boxes: &[f32],
        b: usize,
    ) -> Result<Decoded> {
        let spec = &self.spec;
        let boxes_name = spec.layout.input_boxes().ok_or_else(|| Error::internal("not a transformers decoder"))?;
        if boxes.is_empty() && !spec.takes_zero_boxes {
            return Err(super::zero_boxes::refusal(&spec.convention));
        }
        let wrap = |e: ort::Error| Error::internal(format!("cannot build a decoder input: {e}"));
        let mut inputs = self.feature_inputs(embedding)?;
        let n = labels.len() / b.max(1);
        inputs.push((spec.point_coords.as_str().into(), Tensor::from_array(([1usize, b, n, 2], points.to_vec())).map_err(wrap)?.into()));
        let labels = number_input(spec.label_type, vec![1, b as i64, n as i64], labels).map_err(wrap)?;
        inputs.push((spec.point_labels.as_str().into(), labels));
        let nb = boxes.len() / 4;
        inputs.push((boxes_name.into(), Tensor::from_array(([1usize, nb, 4], boxes.to_vec())).map_err(wrap)?.into()));
        engine::run(session, inputs, self.decoder.releases_arena(), "SAM2 decoder run", |outputs| {
            let read = |name: &str| f32_output(outputs, name, "SAM2 decoder");
            let (shape, data) = read(&spec.masks_output)?;
            Ok(Decoded { masks: (objects_as_batch(&shape), data), iou: read(&spec.iou_output)?.1, low_res: None })
        })
    }

    /// [`decode_objects`](Self::decode_objects) as [`decode_batch`](Self::decode_batch) returns a batch.
    pub(super) fn decode_object_batch(
        &self,
        session: &mut Session,
        embedding: &Embedding,
        (points, labels, boxes): (&[f32], &[f32], &[f32]),
        b: usize,
    ) -> Result<([usize; 4], Vec<f32>, Vec<f32>)> {
        let d = self.decode_objects(session, embedding, points, labels, boxes, b)?;
        let (shape, logits) = d.masks;
        let shape: [usize; 4] = <[i64; 4]>::try_from(shape.as_slice())
            .map_err(|_| Error::new(ErrorKind::ModelUnsupported, format!("decoder mask output has shape {shape:?}, expected [B,K,h,w]")))?
            .map(|v| v.max(0) as usize);
        Ok((shape, logits, d.iou))
    }

    /// The decoder on `b` prompts of `n` points each at once (`coords`: b x n x 2 in model space,
    /// `labels`: b x n), no mask input: one run where the decoder has a prompt batch axis (else `b`
    /// must be 1). Shared by segment-everything and the many-prompts call. Returns the mask output's
    /// shape [B, K, h, w], its logits and the IoU predictions [B, K].
    pub(super) fn decode_batch(
        &self,
        session: &mut Session,
        embedding: &Embedding,
        coords: &[f32],
        labels: &[f32],
        b: usize,
    ) -> Result<([usize; 4], Vec<f32>, Vec<f32>)> {
        let spec = &self.spec;
        let n = labels.len() / b.max(1);
        let wrap = |e: ort::Error| Error::internal(format!("cannot build a decoder input: {e}"));
        let mut inputs = self.feature_inputs(embedding)?;
        inputs.push((spec.point_coords.as_str().into(), Tensor::from_array(([b, n, 2], coords.to_vec())).map_err(wrap)?.into()));
        let labels = number_input(spec.label_type, vec![b as i64, n as i64], labels).map_err(wrap)?;
        inputs.push((spec.point_labels.as_str().into(), labels));
        let (mh, mw) = spec.mask_input_size;
        let nb = if spec.mask_input_batch { b } else { 1 };
        let zeros = alloc::vec_of(nb * mh * mw, 0f32, "the mask input")?;
        inputs.push((spec.mask_input.as_str().into(), Tensor::from_array(([nb, 1, mh, mw], zeros)).map_err(wrap)?.into()));
        let mut has_shape = spec.has_mask_input_shape.clone();
        if spec.has_mask_input_batch {
            if let Some(d) = has_shape.first_mut() {
                *d = b as i64;
            }
        }
        let count: i64 = has_shape.iter().product::<i64>().max(1);
        inputs
            .push((spec.has_mask_input.as_str().into(), Tensor::from_array((has_shape, vec![0f32; count as usize])).map_err(wrap)?.into()));
        if let Some((name, ty)) = &spec.orig_im_size {
            inputs.push((name.as_str().into(), orig_im_size_input(*ty, embedding).map_err(wrap)?));
        }
        let (shape, logits, iou) = engine::run(session, inputs, self.decoder.releases_arena(), "SAM2 decoder run", |outputs| {
            let read = |name: &str| f32_output(outputs, name, "SAM2 decoder");
            // The main mask output: where a decoder also has a low-res one (osam), that is clamped to
            // +-32 while the main output is the unclamped logits upsampled in the graph, as the
            // generator's own.
            let (shape, logits) = read(&spec.masks_output)?;
            Ok((shape, logits, read(&spec.iou_output)?.1))
        })?;
        let shape: [usize; 4] = <[i64; 4]>::try_from(shape.as_slice())
            .map_err(|_| Error::new(ErrorKind::ModelUnsupported, format!("decoder mask output has shape {shape:?}, expected [B,K,h,w]")))?
            .map(|v| v.max(0) as usize);
        Ok((shape, logits, iou))
    }

    /// The decoder's outputs into the caller's masks, and the chosen low-res logits.
    pub(super) fn finish(&self, d: Decoded, mask: &mut MaskMut<'_>, all_masks: Option<&mut [u8]>) -> Result<Sam2Run> {
        let (w, h) = (mask.width(), mask.height());
        let (shape, logits) = d.masks;
        let bad = || Error::unsupported_model(format!("decoder mask output has shape {shape:?}, expected [1,K,h,w]"));
        let [_, k, mh, mw] = <[i64; 4]>::try_from(shape.as_slice()).map_err(|_| bad())?.map(|v| v.max(0) as usize);
        if k == 0 || d.iou.len() < k || logits.len() != k * mh * mw {
            return Err(bad());
        }
        if let Some(all) = &all_masks {
            if all.len() < k * w * h {
                return Err(Error::new(
                    ErrorKind::BufferTooSmall,
                    format!("all_masks holds {} bytes, {k} masks of {w}x{h} need {}", all.len(), k * w * h),
                ));
            }
        }
        let chosen = choose(&d.iou[..k]);
        let plane = |i: usize| &logits[i * mh * mw..(i + 1) * mh * mw];

        // Low-res logits for refinement: the separate low-res output, the mask output when it is
        // low-res, else recovered from the full-size logits (see `sample_at_centres`).
        let (lh, lw) = self.spec.mask_input_size;
        let clamp = |v: &f32| v.clamp(-LOGIT_CLAMP, LOGIT_CLAMP);
        let low_res: Arc<[f32]> = match &d.low_res {
            Some((s, data)) if s.len() == 4 && (s[2] as usize, s[3] as usize) == (lh, lw) && data.len() >= (chosen + 1) * lh * lw => {
                data[chosen * lh * lw..(chosen + 1) * lh * lw].iter().map(clamp).collect()
            }
            _ if (mh, mw) == (lh, lw) => plane(chosen).iter().map(clamp).collect(),
            _ => sample_at_centres(plane(chosen), (mw, mh), (lw, lh)).iter().map(clamp).collect(),
        };

        let foreground_pixels = self.mask_into(plane(chosen), (mw, mh), mask)?;
        if let Some(all) = all_masks {
            for (i, out) in all.chunks_exact_mut(w * h).take(k).enumerate() {
                self.mask_into(plane(i), (mw, mh), &mut MaskMut::new(out, w, h, 0)?)?;
            }
        }
        Ok(Sam2Run {
            width: w,
            height: h,
            chosen,
            scores: d.iou[..k].to_vec(),
            low_res,
            low_res_size: (lw, lh),
            foreground_pixels,
            stats: Sam2Stats::default(),
        })
    }

    /// One mask's logits of size (mw, mh) -> `logit > 0` at the mask's size; returns its foreground.
    /// SAM2 logits are upsampled and thresholded in one pass, straight into the caller's rows.
    pub(super) fn mask_into(&self, logits: &[f32], (mw, mh): (usize, usize), mask: &mut MaskMut<'_>) -> Result<u64> {
        let (w, h) = (mask.width(), mask.height());
        if self.spec.family == Family::Sam2 && w >= mw && h >= mh {
            return Ok(upsampled_mask(logits, (mw, mh), mask, 0.0, false));
        }
        let full = self.upsample(logits, (mw, mh), (w, h))?;
        Ok(threshold_into(&full, 0.0, mask))
    }

    /// Logits of size (mw, mh) to the image size, as `F.interpolate(bilinear, align_corners=False)`
    /// (no antialiasing when shrinking, as transformers' `post_process_masks` and the official
    /// predictors): directly for SAM2 (stretched input); for SAM1 through the padded S x S frame,
    /// cropped to the image's part (segment_anything's `postprocess_masks`).
    fn upsample(&self, logits: &[f32], (mw, mh): (usize, usize), (w, h): (usize, usize)) -> Result<Vec<f32>> {
        if (mw, mh) == (w, h) {
            return alloc::copy_of(logits, "the logits");
        }
        match self.spec.family {
            Family::Sam2 => interpolate(logits, (mw, mh), (w, h)),
            Family::Sam1 => {
                let s = self.spec.image_size;
                let frame = interpolate(logits, (mw, mh), (s, s))?;
                let k = s as f64 / w.max(h) as f64;
                let (cw, ch) = (((w as f64 * k).round() as usize).clamp(1, s), ((h as f64 * k).round() as usize).clamp(1, s));
                let crop: Vec<f32> = (0..ch).flat_map(|y| frame[y * s..y * s + cw].iter().copied()).collect();
                interpolate(&crop, (cw, ch), (w, h))
            }
        }
    }
}

/// The mask a prediction keeps among the decoder's `k` outputs (their predicted IoU): the highest.
/// With 4 masks the first is the single-mask token: the choice is among the multimask outputs.
pub(super) fn choose(iou: &[f32]) -> usize {
    let first = if iou.len() == 4 { 1 } else { 0 };
    (first..iou.len()).max_by(|a, b| iou[*a].total_cmp(&iou[*b])).unwrap_or(0)
}

/// Reads a full-size map at the centres of a `(lw, lh)` grid with bilinear interpolation.
///
/// A decoder that upsamples in the graph (bilinear, half-pixel centres) returns full-size logits
/// only; sampling them where the low-res pixel centres land gives the low-res logits back (exactly
/// away from the borders), which an averaging downscale would not.
fn sample_at_centres(full: &[f32], (w, h): (usize, usize), (lw, lh): (usize, usize)) -> Vec<f32> {
    let at = |x: f32, y: f32| {
        let (x, y) = (x.clamp(0.0, (w - 1) as f32), y.clamp(0.0, (h - 1) as f32));
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
        let (fx, fy) = (x - x0 as f32, y - y0 as f32);
        let row = |yy: usize| full[yy * w + x0] * (1.0 - fx) + full[yy * w + x1] * fx;
        row(y0) * (1.0 - fy) + row(y1) * fy
    };
    let (sx, sy) = (w as f32 / lw as f32, h as f32 / lh as f32);
    (0..lh).flat_map(|j| (0..lw).map(move |i| at((i as f32 + 0.5) * sx - 0.5, (j as f32 + 0.5) * sy - 0.5))).collect()
}

pub(super) struct Decoded {
    masks: (Vec<i64>, Vec<f32>),
    iou: Vec<f32>,
    low_res: Option<(Vec<i64>, Vec<f32>)>,
}

/// transformers' `pred_masks` [B, obj, K, h, w] as [B*obj, K, h, w] (other shapes as they are).
fn objects_as_batch(shape: &[i64]) -> Vec<i64> {
    match shape {
        [b, obj, k, h, w] => vec![b * obj, *k, *h, *w],
        _ => shape.to_vec(),
    }
}

/// A decoder input holding `values` in the element type the export declares (point labels,
/// `orig_im_size`): exporters disagree on float32, int64 and int32.
fn number_input(ty: NumberType, shape: Vec<i64>, values: &[f32]) -> ort::Result<SessionInputValue<'static>> {
    Ok(match ty {
        NumberType::F32 => Tensor::from_array((shape, values.to_vec()))?.into(),
        NumberType::I64 => Tensor::from_array((shape, values.iter().map(|v| *v as i64).collect::<Vec<_>>()))?.into(),
        NumberType::I32 => Tensor::from_array((shape, values.iter().map(|v| *v as i32).collect::<Vec<_>>()))?.into(),
    })
}

/// samexporter's `orig_im_size` input: the embedded image's height and width.
pub(super) fn orig_im_size_input(ty: NumberType, embedding: &Embedding) -> ort::Result<SessionInputValue<'static>> {
    number_input(ty, vec![2], &[embedding.height as f32, embedding.width as f32])
}
