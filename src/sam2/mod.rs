//! SAM2 interactive segmentation: the image encoder runs once per image (cached per handle, keyed
//! by a hash of the pixels), each click runs only the prompt decoder.
//!
//! Reference behaviour (facebookresearch/sam2 `SAM2ImagePredictor`): RGB, x/255, ImageNet mean/std,
//! stretched to S x S; a click (x, y) maps to (x*S/W, y*S/H) (`prompt`); the padding point is added
//! inside SAM2 graphs; the chosen low-res logits are upsampled straight to H x W (bilinear,
//! half-pixel centres) and thresholded at 0. `spec` recognises the export conventions.

mod encoding;
pub mod everything;
pub mod prompt;
pub mod spec;
pub mod video;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use ort::session::{Session, SessionInputValue};
use ort::value::{Tensor, TensorRef};
use serde::Serialize;

use self::encoding::Encoding;
use crate::alloc;
use crate::control::{self, Stage};
use crate::engine::io::{f32_output, inputs_of, outputs_of, TensorInfo};
use crate::engine::{read_model_file, CacheReport, GraphSharing, PoolStats, ProviderReport, SessionPool};
use crate::error::{Error, ErrorKind, Result};
use crate::image::resize::resize_f32;
use crate::image::tensor::{prepare, Element, Fit, Layout, Normalisation, Preprocessor, TensorData, TensorFormat};
use crate::image::upsample::{threshold_into, upsampled_mask};
use crate::image::{check_size, ImageView, MaskMut};
use crate::options::{ChannelOrder, Options, ResizeFilter};
use crate::runtime::RuntimeInfo;

pub use everything::{EverythingObject, EverythingOptions, EverythingResult, EverythingStats, MAX_OBJECTS};
pub use prompt::{model_space, validate_prompt, BoxPrompt, Point, Prompt, MAX_POINTS};
pub use spec::{EncoderInput, Family, Feature, NumberType, Sam2Spec};

const IMAGENET_MEAN: [f32; 3] = [0.485, 0.456, 0.406];
const IMAGENET_STD: [f32; 3] = [0.229, 0.224, 0.225];
/// The reference predictor clamps low-res logits to this before feeding them back.
const LOGIT_CLAMP: f32 = 32.0;

/// The message of a prediction asked for without an image (the C boundary names its own call).
pub const NO_IMAGE: &str = "no image: pass one with the prompt, or set one first";

/// One encoder output: its role, shape and values.
type FeatureMap = (Feature, Vec<i64>, Vec<f32>);

/// The encoder output for one image.
struct Embedding {
    key: u64,
    width: usize,
    height: usize,
    features: Vec<FeatureMap>,
}

#[derive(Default)]
struct State {
    embedding: Option<Arc<Embedding>>,
    /// The image set last (`set_image`) while its encoder runs: calls on "the image set last" wait
    /// for it; a newer image set cancels it.
    encoding: Option<Arc<Encoding<Arc<Embedding>>>>,
    /// Encodes started by calls that carry their own image, while they run: calls with the same
    /// pixels wait for them. Nothing but their own caller cancels them.
    carried: Vec<Arc<Encoding<Arc<Embedding>>>>,
    /// Chosen low-res logits of the last prediction and the image they belong to.
    previous: Option<(u64, Arc<[f32]>)>,
    /// The last segment-everything result: the image key and options it was made for.
    everything: Option<(u64, everything::EverythingOptions, Arc<everything::EverythingResult>)>,
}

/// What one prediction wrote into the caller's mask, and what comes with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sam2Run {
    pub width: usize,
    pub height: usize,
    pub chosen: usize,
    /// Predicted IoU of every mask the decoder returned.
    pub scores: Vec<f32>,
    /// The chosen low-res logits (clamped to +-32), for refinement, and their (width, height).
    pub low_res: Arc<[f32]>,
    pub low_res_size: (usize, usize),
    /// Pixels of the chosen mask that are not 0.
    pub foreground_pixels: u64,
    pub stats: Sam2Stats,
}

/// One prediction with masks of its own, for callers without buffers (the CLI, tests).
#[derive(Debug, Clone, PartialEq)]
pub struct Sam2Output {
    /// The chosen mask, 0/255, width x height.
    pub mask: Vec<u8>,
    /// Every mask (0/255) when asked for.
    pub all_masks: Option<Vec<Vec<u8>>>,
    pub run: Sam2Run,
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
    encoder: SessionPool<Preprocessor>,
    decoder: SessionPool,
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
    pub intra_threads: String,
    /// The encoder's and the decoder's sessions (see `PoolStats`).
    pub encoder_pool: PoolStats,
    pub decoder_pool: PoolStats,
    /// What the model cache did for the encoder and for the decoder (see `CacheReport`).
    pub encoder_cache: &'a CacheReport,
    pub decoder_cache: &'a CacheReport,
    /// Resident memory the first encoder + decoder sessions added.
    pub bytes_first_sessions: Option<u64>,
    pub image_cached: bool,
    pub onnxruntime: RuntimeInfo,
}

fn ms(a: Instant, b: Instant) -> f64 {
    (b - a).as_secs_f64() * 1e3
}

impl Sam2Segmenter {
    pub fn from_files(encoder: &Path, decoder: &Path, options: Options) -> Result<Self> {
        options.validate()?;
        let e = read_model_file(encoder, options.max_model_bytes).map_err(|e| e.context("encoder"))?;
        let d = read_model_file(decoder, options.max_model_bytes).map_err(|e| e.context("decoder"))?;
        Self::build(e, d, Some((encoder, decoder)), options)
    }

    pub fn from_memory(encoder: Vec<u8>, decoder: Vec<u8>, options: Options) -> Result<Self> {
        Self::build(encoder, decoder, None, options)
    }

    /// `paths`: the encoder's and the decoder's files, when read from files (for the model cache).
    fn build(encoder: Vec<u8>, decoder: Vec<u8>, paths: Option<(&Path, &Path)>, options: Options) -> Result<Self> {
        options.validate()?;
        // The two sessions are built at once: cold start is the longer of the two, not their sum.
        // Each is cached on its own (its own key, its own file).
        let (encoder, decoder) = std::thread::scope(|scope| {
            // The encoder runs once per image, so a second encoder session is rare (threads encoding
            // different images at once) while saving its graph would add ~50 % to the first start.
            let encoder = scope.spawn(|| {
                SessionPool::new(encoder, paths.map(|p| p.0), &options, GraphSharing::AtFirstGrowth).map_err(|e| e.context("encoder"))
            });
            let decoder =
                SessionPool::new(decoder, paths.map(|p| p.1), &options, GraphSharing::AtCreation).map_err(|e| e.context("decoder"));
            let encoder = encoder.join().unwrap_or_else(|_| Err(Error::internal("building the encoder session panicked")));
            (encoder, decoder)
        });
        let (encoder, decoder) = (encoder?, decoder?);
        let (spec, io) = encoder
            .with(|e, _| decoder.with(|d, _| Ok((Sam2Spec::detect(e, d)?, [inputs_of(e), outputs_of(e), inputs_of(d), outputs_of(d)]))))?;
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
            intra_threads: crate::unet::intra_threads_text(self.options.intra_threads),
            encoder_pool: self.encoder.stats(),
            decoder_pool: self.decoder.stats(),
            encoder_cache: &self.encoder.cache,
            decoder_cache: &self.decoder.cache,
            bytes_first_sessions: self
                .encoder
                .stats()
                .bytes_first_session
                .zip(self.decoder.stats().bytes_first_session)
                .map(|(a, b)| a + b),
            image_cached: self.state().embedding.is_some(),
            onnxruntime: RuntimeInfo::current(),
        }
    }

    /// (width, height) of the image set last (cached, or still being encoded), if any.
    pub fn cached_image_size(&self) -> Option<(usize, usize)> {
        let state = self.state();
        state.encoding.as_ref().map(|e| e.size).or(state.embedding.as_ref().map(|e| (e.width, e.height)))
    }

    /// (width, height) of the low-res logits the decoder takes as `mask_input` and returns.
    pub fn low_res_size(&self) -> (usize, usize) {
        let (h, w) = self.spec.mask_input_size;
        (w, h)
    }

    /// Forgets the cached image and the previous mask, and cancels an encode in flight.
    pub fn reset(&self) {
        let old = std::mem::take(&mut *self.state());
        if let Some(encoding) = old.encoding {
            encoding.superseded.cancel();
        }
    }

    /// Encodes `image` now unless it is the cached one (or is being encoded by another call: then
    /// waits for that). Returns (pre-processing ms, encoder ms), both 0 when no encoder ran here.
    /// Any thread: a host encodes an image as soon as it shows it, and clicks arriving meanwhile
    /// wait only for the rest of this encode; setting a newer image cancels this one.
    pub fn set_image(&self, image: &ImageView<'_>) -> Result<(f64, f64)> {
        check_size(image.width() as i64, image.height() as i64, self.options.max_pixels)?;
        let (_, stats) = self.embedding_for(Some(image), Some(image.content_hash()), true)?;
        Ok((stats.encoder_preprocess_ms, stats.encoder_ms))
    }

    /// The embedding of `image` (whose content hash is `key`), or with `None` of the image set
    /// last: the cached one, the one another call is encoding (waited for), or encoded here.
    /// `set_last` (a `set_image` call) makes the image the image set last, cancelling an encode of
    /// another image set before; a call that carries its image never cancels another's encode, and
    /// when the encode it waited for is cancelled it encodes its image itself.
    fn embedding_for(&self, image: Option<&ImageView<'_>>, key: Option<u64>, set_last: bool) -> Result<(Arc<Embedding>, Sam2Stats)> {
        let reused = Sam2Stats { encoder_reused: true, ..Sam2Stats::default() };
        loop {
            let started = {
                let mut state = self.state();
                if set_last && state.encoding.as_ref().is_some_and(|e| key != Some(e.key)) {
                    // A newer image: the encode of the one set before is no longer wanted.
                    if let Some(older) = state.encoding.take() {
                        older.superseded.cancel();
                    }
                }
                let pending = match key {
                    None => state.encoding.clone(),
                    Some(k) => state.encoding.iter().chain(&state.carried).find(|e| e.key == k).cloned(),
                };
                let cached = state.embedding.clone().filter(|e| key.is_none_or(|k| k == e.key));
                match (pending, cached, image, key) {
                    (Some(encoding), ..) => {
                        drop(state);
                        match encoding.wait() {
                            Ok(embedding) => return Ok((embedding, reused)),
                            // Someone else's encode of these pixels was cancelled: a call with its
                            // own image (and its own control not cancelled) encodes it itself.
                            Err(e) if e.kind == ErrorKind::Cancelled && key.is_some() && control::checkpoint().is_ok() => continue,
                            Err(e) => return Err(e),
                        }
                    }
                    (None, Some(embedding), ..) => return Ok((embedding, reused)),
                    (None, None, Some(img), Some(k)) => {
                        let encoding = Encoding::start(k, (img.width(), img.height()));
                        if set_last {
                            state.encoding = Some(encoding.clone());
                        } else {
                            state.carried.push(encoding.clone());
                        }
                        encoding
                    }
                    _ => return Err(Error::invalid(NO_IMAGE)),
                }
            };
            let image = image.expect("an encode starts only with an image");
            let result = if set_last {
                control::also(started.superseded.clone(), || self.encode(image, started.key))
            } else {
                self.encode(image, started.key)
            };
            {
                let mut state = self.state();
                // The image set last is installed while it still is that (not replaced nor reset);
                // a carried image as the cached one unless an image set last is on its way.
                let install = if state.encoding.as_ref().is_some_and(|e| Arc::ptr_eq(e, &started)) {
                    state.encoding = None;
                    true
                } else {
                    let before = state.carried.len();
                    state.carried.retain(|e| !Arc::ptr_eq(e, &started));
                    state.carried.len() < before && state.encoding.is_none()
                };
                if let (true, Ok((embedding, _))) = (install, &result) {
                    if state.previous.as_ref().is_some_and(|(k, _)| *k != embedding.key) {
                        state.previous = None;
                    }
                    state.embedding = Some(embedding.clone());
                }
            }
            started.finish(result.as_ref().map(|(e, _)| e.clone()).map_err(Clone::clone));
            return result.map_err(|e| {
                let replaced = started.superseded.is_cancelled() && e.kind == ErrorKind::Cancelled;
                if replaced {
                    Error::new(ErrorKind::Cancelled, "the encode was cancelled: a newer image was set on this handle, or it was reset")
                } else {
                    e
                }
            });
        }
    }

    /// Runs the encoder on `image` (without holding the state lock: clicks on the cached image go
    /// on meanwhile).
    fn encode(&self, image: &ImageView<'_>, key: u64) -> Result<(Arc<Embedding>, Sam2Stats)> {
        let t0 = Instant::now();
        let mut t1 = t0;
        let features = self.run_encoder(image, &mut t1)?;
        let stats = Sam2Stats { encoder_preprocess_ms: ms(t0, t1), encoder_ms: ms(t1, Instant::now()), ..Sam2Stats::default() };
        Ok((Arc::new(Embedding { key, width: image.width(), height: image.height(), features }), stats))
    }

    /// How the encoder wants `image`: RGB, resized to the model (stretched for SAM2, long side +
    /// zero padding for SAM1), ImageNet-normalised float32 or raw uint8, NCHW.
    fn encoder_format(&self, (w, h): (usize, usize)) -> (TensorFormat, Normalisation, Fit) {
        let s = self.spec.image_size;
        let fit = match self.spec.family {
            Family::Sam2 => Fit::Resize,
            Family::Sam1 => {
                let k = s as f64 / w.max(h) as f64;
                let side = |v: usize| ((v as f64 * k).round() as usize).clamp(1, s);
                Fit::Place { width: side(w), height: side(h) }
            }
        };
        let (element, norm) = match self.spec.encoder_input {
            EncoderInput::NormalizedF32 => (
                Element::F32,
                Normalisation {
                    scale: 1.0 / 255.0,
                    mean: IMAGENET_MEAN,
                    std: IMAGENET_STD,
                    channel_order: ChannelOrder::Rgb,
                    filter: ResizeFilter::Bilinear,
                },
            ),
            EncoderInput::RawU8 => (
                Element::U8,
                Normalisation {
                    scale: 1.0,
                    mean: [0.0; 3],
                    std: [1.0; 3],
                    channel_order: ChannelOrder::Rgb,
                    filter: ResizeFilter::Bilinear,
                },
            ),
        };
        (TensorFormat { channels: 3, layout: Layout::Nchw, element }, norm, fit)
    }

    /// The encoder's input tensor for `image`, in fresh buffers (for benchmarks and tools).
    pub fn encoder_tensor(&self, image: &ImageView<'_>) -> Result<TensorData> {
        let s = self.spec.image_size;
        let (format, norm, fit) = self.encoder_format((image.width(), image.height()));
        prepare(image, &format, (s, s), &norm, fit)
    }

    /// The encoder run on `image`, its input built by the shared pre-processing in the thread's
    /// reused buffers.
    fn run_encoder(&self, image: &ImageView<'_>, prepared: &mut Instant) -> Result<Vec<FeatureMap>> {
        let s = self.spec.image_size;
        let (format, norm, fit) = self.encoder_format((image.width(), image.height()));
        // The input is built in the session's own buffers once the session is ours.
        self.encoder.with(|session, pre| {
            pre.start_batch(&format, (s, s), 1)?;
            pre.fill(0, image, &format, (s, s), &norm, fit)?;
            *prepared = Instant::now();
            let features = {
                let input = pre.tensor().input(vec![1, 3, s as i64, s as i64])?;
                let inputs = ort::inputs![self.spec.encoder_input_name.as_str() => input];
                control::progress(Stage::Encode, 0.0)?;
                let run = control::run_options(|_| Ok(()))?;
                let outputs = match &run {
                    Some(options) => session.run_with_options(inputs, options),
                    None => session.run(inputs),
                }
                .map_err(|e| control::run_error(&e, "SAM2 encoder run"))?;
                control::progress(Stage::Encode, 1.0)?;
                let mut features = Vec::new();
                for (role, name) in &self.spec.encoder_outputs {
                    let (shape, data) = f32_output(&outputs, name, "SAM2 encoder")?;
                    features.push((*role, shape, data));
                }
                features
            };
            pre.shrink();
            Ok(features)
        })
    }

    /// Runs the decoder for `prompt` on `image` (or, when `None`, on the image set last), with masks
    /// of its own.
    pub fn predict(&self, image: Option<&ImageView<'_>>, prompt: &Prompt, want_all: bool) -> Result<Sam2Output> {
        let (w, h) = match image {
            Some(img) => (img.width(), img.height()),
            None => self.cached_image_size().ok_or_else(|| Error::invalid(NO_IMAGE))?,
        };
        check_size(w as i64, h as i64, self.options.max_pixels)?;
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
            validate_prompt(prompt, w, h)
        };
        let (lw, lh) = self.low_res_size();
        if prompt.mask_input.as_ref().is_some_and(|m| m.len() != lw * lh) {
            return Err(Error::invalid(format!("mask_input must hold {lw}x{lh} = {} low-res logits", lw * lh)));
        }
        // The state is read once: the cached embedding (when it serves) and the previous logits.
        let key = image.map(|img| check_size(img.width() as i64, img.height() as i64, self.options.max_pixels).map(|_| img.content_hash()));
        let key = key.transpose()?;
        // Check what can be checked before paying for (or waiting for) an encoder run.
        if let Some((w, h)) = image.map(|img| (img.width(), img.height())).or_else(|| self.cached_image_size()) {
            size_check((w, h))?;
        }
        let (embedding, encoder_stats) = self.embedding_for(image, key, false)?;
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

    fn decode(&self, session: &mut Session, embedding: &Embedding, prompt: &Prompt, previous: Option<&[f32]>) -> Result<Decoded> {
        let spec = &self.spec;
        let wrap = |e: ort::Error| Error::internal(format!("cannot build a decoder input: {e}"));
        let mut inputs: Vec<(std::borrow::Cow<'_, str>, SessionInputValue<'_>)> = Vec::new();
        for (role, name) in &spec.decoder_features {
            let (_, shape, data) = embedding.features.iter().find(|(r, _, _)| r == role).expect("checked when the spec was detected");
            // Borrowed, not copied: the embedding of a 1024 model is about 17 MB.
            inputs.push((name.as_str().into(), TensorRef::from_array_view((shape.clone(), data.as_slice())).map_err(wrap)?.into()));
        }
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

        let run = control::run_options(|_| Ok(()))?;
        let outputs = match &run {
            Some(options) => session.run_with_options(inputs, options),
            None => session.run(inputs),
        }
        .map_err(|e| control::run_error(&e, "SAM2 decoder run"))?;
        let read = |name: &str| f32_output(&outputs, name, "SAM2 decoder");
        let masks = read(&spec.masks_output)?;
        let iou = read(&spec.iou_output)?.1;
        let low_res = spec.low_res_output.as_deref().map(read).transpose()?;
        Ok(Decoded { masks, iou, low_res })
    }

    /// The decoder's outputs into the caller's masks, and the chosen low-res logits.
    fn finish(&self, d: Decoded, mask: &mut MaskMut<'_>, all_masks: Option<&mut [u8]>) -> Result<Sam2Run> {
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
        // With 4 masks the first is the single-mask token: choose among the multimask outputs.
        let first = if k == 4 { 1 } else { 0 };
        let chosen = (first..k).max_by(|a, b| d.iou[*a].total_cmp(&d.iou[*b])).unwrap_or(0);
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
    fn mask_into(&self, logits: &[f32], (mw, mh): (usize, usize), mask: &mut MaskMut<'_>) -> Result<u64> {
        let (w, h) = (mask.width(), mask.height());
        if self.spec.family == Family::Sam2 && w >= mw && h >= mh {
            return Ok(upsampled_mask(logits, (mw, mh), mask, 0.0, false));
        }
        let full = self.upsample(logits, (mw, mh), (w, h))?;
        Ok(threshold_into(&full, 0.0, mask))
    }

    /// Logits of size (mw, mh) to the image size: directly for SAM2 (stretched input); for SAM1
    /// through the padded S x S frame, cropped to the image's part.
    fn upsample(&self, logits: &[f32], (mw, mh): (usize, usize), (w, h): (usize, usize)) -> Result<Vec<f32>> {
        if (mw, mh) == (w, h) {
            return alloc::copy_of(logits, "the logits");
        }
        let bilinear = ResizeFilter::Bilinear;
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
fn orig_im_size_input(ty: NumberType, embedding: &Embedding) -> ort::Result<SessionInputValue<'static>> {
    number_input(ty, vec![2], &[embedding.height as f32, embedding.width as f32])
}
