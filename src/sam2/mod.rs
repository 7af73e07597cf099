//! SAM2 interactive segmentation: the image encoder runs once per image (cached per handle, keyed
//! by a hash of the pixels), each click runs only the prompt decoder.
//!
//! Reference behaviour (facebookresearch/sam2 `SAM2ImagePredictor`): RGB, x/255, ImageNet mean/std,
//! stretched to S x S; a click (x, y) maps to (x*S/W, y*S/H); box corners go first with labels 2/3;
//! the padding point is added inside SAM2 graphs; the chosen low-res logits are upsampled straight
//! to H x W (bilinear, half-pixel centres) and thresholded at 0.

pub mod spec;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ort::session::{Session, SessionInputValue};
use ort::value::{Tensor, TensorRef};
use serde::Serialize;

use crate::engine::{read_model_file, ProviderReport, ThreadSessions};
use crate::error::{Error, Result, SegStatus};
use crate::image::{check_size, ImageView};
use crate::model::{inputs_of, outputs_of, TensorInfo};
use crate::options::{Options, SegResizeFilter};
use crate::resize::{new_resizer, resize_f32, resize_to_rgb8};
use crate::runtime::RuntimeInfo;

pub use spec::{EncoderInput, Family, Feature, NumberType, Sam2Spec};

const IMAGENET_MEAN: [f32; 3] = [0.485, 0.456, 0.406];
const IMAGENET_STD: [f32; 3] = [0.229, 0.224, 0.225];
/// The reference predictor clamps low-res logits to this before feeding them back.
const LOGIT_CLAMP: f32 = 32.0;

/// A click in original image pixels. `label`: 1 = foreground, 0 = background.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f32,
    pub y: f32,
    pub label: i32,
}

/// A box in original image pixels, top-left and bottom-right corners.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoxPrompt {
    pub x1: f32,
    pub y1: f32,
    pub x2: f32,
    pub y2: f32,
}

/// What the user clicked.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub points: Vec<Point>,
    pub bbox: Option<BoxPrompt>,
    /// Feed the previous call's chosen low-res logits back as `mask_input` (same image only).
    pub refine: bool,
}

/// The encoder output for one image.
struct Embedding {
    key: u64,
    width: usize,
    height: usize,
    features: Vec<(Feature, Vec<i64>, Vec<f32>)>,
}

#[derive(Default)]
struct State {
    embedding: Option<Arc<Embedding>>,
    /// Chosen low-res logits of the last prediction and the image they belong to.
    previous: Option<(u64, Vec<f32>)>,
}

/// One prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Sam2Output {
    pub width: usize,
    pub height: usize,
    /// The chosen mask, 0/255, width x height.
    pub mask: Vec<u8>,
    pub chosen: usize,
    /// Predicted IoU of every mask the decoder returned.
    pub scores: Vec<f32>,
    /// Every mask (0/255) when asked for.
    pub all_masks: Option<Vec<Vec<u8>>>,
    /// The chosen low-res logits (clamped to +-32) and their (width, height).
    pub low_res: Vec<f32>,
    pub low_res_size: (usize, usize),
    pub stats: Sam2Stats,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Sam2Stats {
    /// Image -> encoder tensor (colour, resize, normalisation); 0 when the embedding was reused.
    pub encoder_preprocess_ms: f64,
    /// The encoder run, 0 when the cached embedding was reused.
    pub encoder_ms: f64,
    pub decoder_ms: f64,
    pub postprocess_ms: f64,
    pub encoder_reused: bool,
}

/// A SAM2 encoder/decoder pair, usable from any number of threads. The cached image embedding
/// belongs to the segmenter: an image set on one thread serves clicks from another.
pub struct Sam2Segmenter {
    options: Options,
    spec: Sam2Spec,
    encoder: ThreadSessions,
    decoder: ThreadSessions,
    io: [Vec<TensorInfo>; 4],
    state: Mutex<State>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Sam2Info<'a> {
    pub kind: &'static str,
    pub convention: &'a str,
    pub encoder_inputs: &'a [TensorInfo],
    pub encoder_outputs: &'a [TensorInfo],
    pub decoder_inputs: &'a [TensorInfo],
    pub decoder_outputs: &'a [TensorInfo],
    pub interpretation: &'a Sam2Spec,
    pub provider: &'a ProviderReport,
    pub threads_with_encoder_session: usize,
    pub threads_with_decoder_session: usize,
    /// Resident memory the first encoder + decoder sessions added.
    pub bytes_first_sessions: Option<u64>,
    /// Resident memory an extra thread's decoder session added (null until a second thread clicked).
    pub bytes_per_extra_thread_decoder: Option<u64>,
    pub image_cached: bool,
    pub onnxruntime: RuntimeInfo,
}

impl Sam2Segmenter {
    pub fn from_files(encoder: &Path, decoder: &Path, options: Options) -> Result<Self> {
        let e = read_model_file(encoder).map_err(|e| e.context("encoder"))?;
        let d = read_model_file(decoder).map_err(|e| e.context("decoder"))?;
        Self::from_memory(e, d, options)
    }

    pub fn from_memory(encoder: Vec<u8>, decoder: Vec<u8>, options: Options) -> Result<Self> {
        options.validate()?;
        let encoder = ThreadSessions::new(encoder, &options).map_err(|e| e.context("encoder"))?;
        let decoder = ThreadSessions::new(decoder, &options).map_err(|e| e.context("decoder"))?;
        let (spec, io) = encoder
            .with(|e| decoder.with(|d| Ok((Sam2Spec::detect(e, d)?, [inputs_of(e), outputs_of(e), inputs_of(d), outputs_of(d)]))))?;
        Ok(Sam2Segmenter { options, spec, encoder, decoder, io, state: Mutex::new(State::default()) })
    }

    pub fn spec(&self) -> &Sam2Spec {
        &self.spec
    }
    pub fn options(&self) -> &Options {
        &self.options
    }
    pub fn provider(&self) -> &ProviderReport {
        &self.encoder.provider
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn info(&self) -> Sam2Info<'_> {
        Sam2Info {
            kind: "sam2",
            convention: &self.spec.convention,
            encoder_inputs: &self.io[0],
            encoder_outputs: &self.io[1],
            decoder_inputs: &self.io[2],
            decoder_outputs: &self.io[3],
            interpretation: &self.spec,
            provider: &self.encoder.provider,
            threads_with_encoder_session: self.encoder.threads(),
            threads_with_decoder_session: self.decoder.threads(),
            bytes_first_sessions: self.encoder.session_bytes.zip(self.decoder.session_bytes).map(|(a, b)| a + b),
            bytes_per_extra_thread_decoder: self.decoder.extra_session_bytes(),
            image_cached: self.state().embedding.is_some(),
            onnxruntime: RuntimeInfo::current(),
        }
    }

    /// (width, height) of the cached image, if any.
    pub fn cached_image_size(&self) -> Option<(usize, usize)> {
        self.state().embedding.as_ref().map(|e| (e.width, e.height))
    }

    /// Forgets the cached image and the previous mask.
    pub fn reset(&self) {
        *self.state() = State::default();
    }

    /// Encodes `image` now unless it is the cached one. Returns (pre-processing ms, encoder ms),
    /// both 0 when the cache was used.
    pub fn set_image(&self, image: &ImageView<'_>) -> Result<(f64, f64)> {
        self.embedding_for(image).map(|(_, stats)| (stats.encoder_preprocess_ms, stats.encoder_ms))
    }

    fn embedding_for(&self, image: &ImageView<'_>) -> Result<(Arc<Embedding>, Sam2Stats)> {
        check_size(image.width() as i64, image.height() as i64, self.options.max_pixels)?;
        let key = image.content_hash();
        if let Some(e) = self.state().embedding.as_ref().filter(|e| e.key == key) {
            return Ok((e.clone(), Sam2Stats { encoder_reused: true, ..Sam2Stats::default() }));
        }
        // Encode without holding the lock: clicks on the cached image go on meanwhile.
        let t0 = Instant::now();
        let input = self.encoder_input(image)?;
        let t1 = Instant::now();
        let features = self.encode(input)?;
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        let stats = Sam2Stats { encoder_preprocess_ms: ms(t0, t1), encoder_ms: ms(t1, Instant::now()), ..Sam2Stats::default() };
        let embedding = Arc::new(Embedding { key, width: image.width(), height: image.height(), features });
        let mut state = self.state();
        if state.previous.as_ref().is_some_and(|(k, _)| *k != key) {
            state.previous = None;
        }
        state.embedding = Some(embedding.clone());
        Ok((embedding, stats))
    }

    /// The encoder's input tensor for `image`: RGB, resized to the model (stretched for SAM2,
    /// long side + padding for SAM1), ImageNet-normalised float32 or raw uint8, NCHW.
    pub fn encoder_input(&self, image: &ImageView<'_>) -> Result<SessionInputValue<'static>> {
        let s = self.spec.image_size;
        let (w, h) = (image.width(), image.height());
        // SAM2: stretch to S x S. SAM1: long side to S, pad right/bottom.
        let (rw, rh) = match self.spec.family {
            Family::Sam2 => (s, s),
            Family::Sam1 => {
                let scale = s as f64 / w.max(h) as f64;
                (((w as f64 * scale).round() as usize).clamp(1, s), ((h as f64 * scale).round() as usize).clamp(1, s))
            }
        };
        let rgb = resize_to_rgb8(&mut new_resizer(), image, (rw, rh), SegResizeFilter::SEG_RESIZE_BILINEAR)?;
        let plane = s * s;
        let input: SessionInputValue<'static> = match self.spec.encoder_input {
            EncoderInput::NormalizedF32 => {
                let luts: Vec<[f32; 256]> =
                    (0..3).map(|c| std::array::from_fn(|v| (v as f32 / 255.0 - IMAGENET_MEAN[c]) / IMAGENET_STD[c])).collect();
                let mut data = vec![0f32; 3 * plane]; // padding stays 0, as SAM1 pads after normalising
                for y in 0..rh {
                    for x in 0..rw {
                        let px = &rgb[(y * rw + x) * 3..][..3];
                        for c in 0..3 {
                            data[c * plane + y * s + x] = luts[c][px[c] as usize];
                        }
                    }
                }
                Tensor::from_array(([1usize, 3, s, s], data)).map(Into::into)
            }
            EncoderInput::RawU8 => {
                let mut data = vec![0u8; 3 * plane];
                for y in 0..rh {
                    for x in 0..rw {
                        for c in 0..3 {
                            data[c * plane + y * s + x] = rgb[(y * rw + x) * 3 + c];
                        }
                    }
                }
                Tensor::from_array(([1usize, 3, s, s], data)).map(Into::into)
            }
        }
        .map_err(|e| Error::new(SegStatus::SEG_INTERNAL, format!("cannot build the encoder input: {e}")))?;
        Ok(input)
    }

    fn encode(&self, input: SessionInputValue<'static>) -> Result<Vec<(Feature, Vec<i64>, Vec<f32>)>> {
        self.encoder.with(|session| {
            let outputs = session
                .run(vec![(std::borrow::Cow::from(self.spec.encoder_input_name.as_str()), input)])
                .map_err(|e| Error::inference(format!("SAM2 encoder run failed: {}", e.message())))?;
            let mut features = Vec::new();
            for (role, name) in &self.spec.encoder_outputs {
                let (shape, data) = outputs[name.as_str()]
                    .try_extract_tensor::<f32>()
                    .map_err(|e| Error::inference(format!("cannot read encoder output '{name}': {e}")))?;
                features.push((*role, shape.to_vec(), data.to_vec()));
            }
            Ok(features)
        })
    }

    /// Runs the decoder for `prompt` on `image` (or, when `None`, on the image set last).
    pub fn predict(&self, image: Option<&ImageView<'_>>, prompt: &Prompt, want_all: bool) -> Result<Sam2Output> {
        let (embedding, encoder_stats) = match image {
            Some(img) => self.embedding_for(img)?,
            None => {
                let e = self.state().embedding.clone();
                let e = e.ok_or_else(|| Error::invalid("no image: pass one, or call seg_sam2_set_image first"))?;
                (e, Sam2Stats { encoder_reused: true, ..Sam2Stats::default() })
            }
        };
        let (w, h) = (embedding.width, embedding.height);
        validate_prompt(prompt, w, h)?;
        let previous =
            if prompt.refine { self.state().previous.as_ref().filter(|(k, _)| *k == embedding.key).map(|(_, l)| l.clone()) } else { None };

        let t0 = Instant::now();
        let decoded = self.decoder.with(|session| self.decode(session, &embedding, prompt, previous))?;
        let t1 = Instant::now();
        let out = self.finish(decoded, (w, h), want_all)?;
        let t2 = Instant::now();
        self.state().previous = Some((embedding.key, out.low_res.clone()));
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        Ok(Sam2Output { stats: Sam2Stats { decoder_ms: ms(t0, t1), postprocess_ms: ms(t1, t2), ..encoder_stats }, ..out })
    }

    /// Model-space coordinates and labels: box corners first (labels 2, 3), then the points.
    fn prompt_tensors(&self, prompt: &Prompt, (w, h): (usize, usize)) -> (Vec<f32>, Vec<f32>) {
        let s = self.spec.image_size as f32;
        let (sx, sy) = match self.spec.family {
            Family::Sam2 => (s / w as f32, s / h as f32),
            Family::Sam1 => {
                let k = s / w.max(h) as f32;
                (k, k)
            }
        };
        let mut coords = Vec::new();
        let mut labels = Vec::new();
        if let Some(b) = prompt.bbox {
            coords.extend([b.x1 * sx, b.y1 * sy, b.x2 * sx, b.y2 * sy]);
            labels.extend([2.0, 3.0]);
        }
        for p in &prompt.points {
            coords.extend([p.x * sx, p.y * sy]);
            labels.push(p.label as f32);
        }
        // SAM1 clients add the padding point themselves when there is no box; SAM2 graphs add it.
        if self.spec.family == Family::Sam1 && prompt.bbox.is_none() {
            coords.extend([0.0, 0.0]);
            labels.push(-1.0);
        }
        (coords, labels)
    }

    fn decode(&self, session: &mut Session, embedding: &Embedding, prompt: &Prompt, previous: Option<Vec<f32>>) -> Result<Decoded> {
        let spec = &self.spec;
        let wrap = |e: ort::Error| Error::new(SegStatus::SEG_INTERNAL, format!("cannot build a decoder input: {e}"));
        let mut inputs: Vec<(std::borrow::Cow<'_, str>, SessionInputValue<'_>)> = Vec::new();
        for (role, name) in &spec.decoder_features {
            let (_, shape, data) = embedding.features.iter().find(|(r, _, _)| r == role).expect("checked when the spec was detected");
            // Borrowed, not copied: the embedding of a 1024 model is about 17 MB.
            inputs.push((name.as_str().into(), TensorRef::from_array_view((shape.clone(), data.as_slice())).map_err(wrap)?.into()));
        }
        let (coords, labels) = self.prompt_tensors(prompt, (embedding.width, embedding.height));
        let n = labels.len();
        inputs.push((spec.point_coords.as_str().into(), Tensor::from_array(([1usize, n, 2], coords)).map_err(wrap)?.into()));
        let labels: SessionInputValue<'_> = match spec.label_type {
            NumberType::F32 => Tensor::from_array(([1usize, n], labels)).map_err(wrap)?.into(),
            NumberType::I64 => {
                Tensor::from_array(([1usize, n], labels.iter().map(|l| *l as i64).collect::<Vec<_>>())).map_err(wrap)?.into()
            }
            NumberType::I32 => {
                Tensor::from_array(([1usize, n], labels.iter().map(|l| *l as i32).collect::<Vec<_>>())).map_err(wrap)?.into()
            }
        };
        inputs.push((spec.point_labels.as_str().into(), labels));
        let (mh, mw) = spec.mask_input_size;
        let has_mask = previous.is_some() as u8 as f32;
        let mask = previous.filter(|p| p.len() == mh * mw).unwrap_or_else(|| vec![0f32; mh * mw]);
        inputs.push((spec.mask_input.as_str().into(), Tensor::from_array(([1usize, 1, mh, mw], mask)).map_err(wrap)?.into()));
        let count: i64 = spec.has_mask_input_shape.iter().product::<i64>().max(1);
        inputs.push((
            spec.has_mask_input.as_str().into(),
            Tensor::from_array((spec.has_mask_input_shape.clone(), vec![has_mask; count as usize])).map_err(wrap)?.into(),
        ));
        if let Some((name, ty)) = &spec.orig_im_size {
            let (h, w) = (embedding.height, embedding.width);
            let v: SessionInputValue<'_> = match ty {
                NumberType::I64 => Tensor::from_array(([2usize], vec![h as i64, w as i64])).map_err(wrap)?.into(),
                NumberType::I32 => Tensor::from_array(([2usize], vec![h as i32, w as i32])).map_err(wrap)?.into(),
                NumberType::F32 => Tensor::from_array(([2usize], vec![h as f32, w as f32])).map_err(wrap)?.into(),
            };
            inputs.push((name.as_str().into(), v));
        }

        let outputs = session.run(inputs).map_err(|e| Error::inference(format!("SAM2 decoder run failed: {}", e.message())))?;
        let read = |name: &str| -> Result<(Vec<i64>, Vec<f32>)> {
            let (shape, data) = outputs[name]
                .try_extract_tensor::<f32>()
                .map_err(|e| Error::inference(format!("cannot read decoder output '{name}': {e}")))?;
            Ok((shape.to_vec(), data.to_vec()))
        };
        let masks = read(&spec.masks_output)?;
        let iou = read(&spec.iou_output)?.1;
        let low_res = spec.low_res_output.as_deref().map(read).transpose()?;
        Ok(Decoded { masks, iou, low_res })
    }

    fn finish(&self, d: Decoded, (w, h): (usize, usize), want_all: bool) -> Result<Sam2Output> {
        let (shape, logits) = d.masks;
        let bad = || Error::unsupported_model(format!("decoder mask output has shape {shape:?}, expected [1,K,h,w]"));
        let [_, k, mh, mw] = <[i64; 4]>::try_from(shape.as_slice()).map_err(|_| bad())?.map(|v| v.max(0) as usize);
        if k == 0 || d.iou.len() < k || logits.len() != k * mh * mw {
            return Err(bad());
        }
        // With 4 masks the first is the single-mask token: choose among the multimask outputs.
        let first = if k == 4 { 1 } else { 0 };
        let chosen = (first..k).max_by(|a, b| d.iou[*a].total_cmp(&d.iou[*b])).unwrap_or(0);
        let plane = |i: usize| &logits[i * mh * mw..(i + 1) * mh * mw];
        let to_mask = |i: usize| -> Result<Vec<u8>> {
            let full = self.upsample(plane(i), (mw, mh), (w, h))?;
            Ok(full.iter().map(|v| if *v > 0.0 { 255 } else { 0 }).collect())
        };
        let mask = to_mask(chosen)?;
        let all_masks = if want_all { Some((0..k).map(to_mask).collect::<Result<Vec<_>>>()?) } else { None };

        // Low-res logits for refinement: the separate low-res output, the mask output when it is
        // low-res, else recovered from the full-size logits (see `sample_at_centres`).
        let (lh, lw) = self.spec.mask_input_size;
        let low_res = match &d.low_res {
            Some((s, data)) if s.len() == 4 && (s[2] as usize, s[3] as usize) == (lh, lw) && data.len() >= (chosen + 1) * lh * lw => {
                data[chosen * lh * lw..(chosen + 1) * lh * lw].to_vec()
            }
            _ if (mh, mw) == (lh, lw) => plane(chosen).to_vec(),
            _ => sample_at_centres(plane(chosen), (mw, mh), (lw, lh)),
        };
        let low_res = low_res.into_iter().map(|v| v.clamp(-LOGIT_CLAMP, LOGIT_CLAMP)).collect();
        Ok(Sam2Output {
            width: w,
            height: h,
            mask,
            chosen,
            scores: d.iou[..k].to_vec(),
            all_masks,
            low_res,
            low_res_size: (lw, lh),
            stats: Sam2Stats::default(),
        })
    }

    /// Logits of size (mw, mh) to the image size: directly for SAM2 (stretched input); for SAM1
    /// through the padded S x S frame, cropped to the image's part.
    fn upsample(&self, logits: &[f32], (mw, mh): (usize, usize), (w, h): (usize, usize)) -> Result<Vec<f32>> {
        if (mw, mh) == (w, h) {
            return Ok(logits.to_vec());
        }
        let bilinear = SegResizeFilter::SEG_RESIZE_BILINEAR;
        match self.spec.family {
            Family::Sam2 => resize_f32(logits, (mw, mh), (w, h), bilinear),
            Family::Sam1 => {
                let s = self.spec.image_size;
                let frame = resize_f32(logits, (mw, mh), (s, s), bilinear)?;
                let k = s as f64 / w.max(h) as f64;
                let (cw, ch) = (((w as f64 * k).round() as usize).clamp(1, s), ((h as f64 * k).round() as usize).clamp(1, s));
                let crop: Vec<f32> = (0..ch).flat_map(|y| frame[y * s..y * s + cw].iter().copied()).collect();
                resize_f32(&crop, (cw, ch), (w, h), bilinear)
            }
        }
    }
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

struct Decoded {
    masks: (Vec<i64>, Vec<f32>),
    iou: Vec<f32>,
    low_res: Option<(Vec<i64>, Vec<f32>)>,
}

/// Points and box must be finite and inside the image; labels 0 or 1; at least one point or a box.
pub fn validate_prompt(prompt: &Prompt, w: usize, h: usize) -> Result<()> {
    if prompt.points.is_empty() && prompt.bbox.is_none() {
        return Err(Error::invalid("no prompt: give at least one point or a box"));
    }
    if prompt.points.len() > 1024 {
        return Err(Error::invalid(format!("{} points: at most 1024 are accepted", prompt.points.len())));
    }
    let inside = |x: f32, y: f32, what: &str| -> Result<()> {
        if !(x.is_finite() && y.is_finite()) {
            return Err(Error::invalid(format!("{what} ({x}, {y}) is not a finite coordinate")));
        }
        if x < 0.0 || y < 0.0 || x > w as f32 || y > h as f32 {
            return Err(Error::invalid(format!("{what} ({x}, {y}) lies outside the {w}x{h} image")));
        }
        Ok(())
    };
    for (i, p) in prompt.points.iter().enumerate() {
        inside(p.x, p.y, &format!("point {i}"))?;
        if p.label != 0 && p.label != 1 {
            return Err(Error::invalid(format!("point {i} has label {}: use 1 (foreground) or 0 (background)", p.label)));
        }
    }
    if let Some(b) = prompt.bbox {
        inside(b.x1, b.y1, "box corner 1")?;
        inside(b.x2, b.y2, "box corner 2")?;
        if !(b.x2 > b.x1 && b.y2 > b.y1) {
            return Err(Error::invalid(format!("box ({}, {})-({}, {}) must have x2 > x1 and y2 > y1", b.x1, b.y1, b.x2, b.y2)));
        }
    }
    Ok(())
}
