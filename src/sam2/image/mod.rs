//! The SAM2 image predictor: the image encoder runs once per image (cached per segmenter, keyed by a
//! hash of the pixels, in `embedding`), each click runs only the prompt decoder (`decode`).
//!
//! Reference behaviour (facebookresearch/sam2 `SAM2ImagePredictor`): RGB, x/255, ImageNet mean/std,
//! stretched to S x S; a click (x, y) maps to (x*S/W, y*S/H) (`prompt`); the padding point is added
//! inside SAM2 graphs; the chosen low-res logits are upsampled straight to H x W (bilinear,
//! half-pixel centres) and thresholded at 0. `spec` recognises the export conventions;
//! `everything` finds every object from a grid of prompts; `many` runs a caller's list of prompts
//! (one mask each) in as few decoder runs as the export allows.

mod decode;
mod embedding;
mod encoding;
pub mod everything;
mod features;
pub mod many;
pub mod prompt;
pub mod spec;
pub mod trt_profile;
mod zero_boxes;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use self::embedding::Embedding;
use self::encoding::Encoding;
use crate::engine::declared_io::declared_io;
use crate::engine::external_data::ExternalData;
use crate::engine::io::{inputs_of, outputs_of, TensorInfo};
use crate::engine::pool::Runs;
use crate::engine::providers::tensorrt::profile::Derived;
use crate::engine::providers::PerModel;
use crate::engine::{read_model_file, CacheReport, GraphSharing, PoolStats, ProviderReport, SessionPool};
use crate::error::{Error, ErrorKind, Result};
use crate::image::tensor::Preprocessor;
use crate::options::Options;
use crate::session_core::{CoreInfo, SessionCore};

pub use everything::{EverythingObject, EverythingOptions, EverythingResult, EverythingStats, MAX_OBJECTS};
pub use features::{EmbedTensor, ImageFeatures};
pub use many::{validate_prompts, ManyRun, ManyStats, MAX_PROMPTS};
pub use prompt::{model_space, validate_prompt, BoxPrompt, Point, Prompt, MAX_POINTS};
pub use spec::{DecoderLayout, EncoderInput, Family, Feature, NumberType, Sam2Spec};
pub use trt_profile::{PROFILE_MAX_BATCH, PROFILE_MAX_POINTS};

/// A prediction asked for without an image when none is set.
fn no_image() -> Error {
    Error::new(ErrorKind::NoImage, "no image: pass one with the prompt, or set one first")
}

/// What a segmenter keeps between calls.
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
    /// The options and the intensity setting.
    core: SessionCore,
    spec: Sam2Spec,
    encoder: SessionPool<Preprocessor>,
    decoder: SessionPool,
    io: [Vec<TensorInfo>; 4],
    state: Mutex<State>,
    /// xxh3-128 of the encoder's and the decoder's bytes (see `model_identity`).
    model_identity: u128,
}

#[derive(Debug, Clone, Serialize)]
pub struct Sam2Info<'a> {
    pub kind: &'static str,
    pub convention: &'a str,
    /// The intensity stage, the encoder's provider, the threads and ONNX Runtime (as every pipeline
    /// reports them). The decoder's provider differs only with `GpuOptions::decoder_provider` or when
    /// one of them fell back to the CPU.
    #[serde(flatten)]
    pub session: CoreInfo<'a>,
    pub encoder_inputs: &'a [TensorInfo],
    pub encoder_outputs: &'a [TensorInfo],
    pub decoder_inputs: &'a [TensorInfo],
    pub decoder_outputs: &'a [TensorInfo],
    pub interpretation: &'a Sam2Spec,
    pub decoder_provider: &'a ProviderReport,
    /// The encoder's and the decoder's sessions (see `PoolStats`).
    pub encoder_pool: PoolStats,
    pub decoder_pool: PoolStats,
    /// What the model cache did for the encoder and for the decoder (see `CacheReport`).
    pub encoder_cache: &'a CacheReport,
    pub decoder_cache: &'a CacheReport,
    /// Resident memory the first encoder + decoder sessions added.
    pub bytes_first_sessions: Option<u64>,
    pub image_cached: bool,
}

fn ms(a: Instant, b: Instant) -> f64 {
    (b - a).as_secs_f64() * 1e3
}

impl Sam2Segmenter {
    pub fn from_files(encoder: &Path, decoder: &Path, options: Options) -> Result<Self> {
        options.validate()?;
        let e = read_model_file(encoder, options.max_model_bytes).map_err(|e| e.context("encoder"))?;
        let d = read_model_file(decoder, options.max_model_bytes).map_err(|e| e.context("decoder"))?;
        Self::build(e, d, Some((encoder, decoder)), options, Default::default())
    }

    pub fn from_memory(encoder: Vec<u8>, decoder: Vec<u8>, options: Options) -> Result<Self> {
        Self::build(encoder, decoder, None, options, Default::default())
    }

    /// [`Self::from_memory`] for models with side files (ONNX external data) given in memory: the
    /// encoder's and the decoder's.
    pub fn from_memory_with(encoder: Vec<u8>, decoder: Vec<u8>, options: Options, side_files: [Arc<ExternalData>; 2]) -> Result<Self> {
        Self::build(encoder, decoder, None, options, side_files)
    }

    /// `paths`: the encoder's and the decoder's files, when read from files (for the model cache and
    /// their side files); `side_files`: the encoder's and the decoder's side files given in memory.
    fn build(
        encoder: Vec<u8>,
        decoder: Vec<u8>,
        paths: Option<(&Path, &Path)>,
        options: Options,
        side_files: [Arc<ExternalData>; 2],
    ) -> Result<Self> {
        options.validate()?;
        let model_identity = xxhash_rust::xxh3::xxh3_128(&encoder) ^ xxhash_rust::xxh3::xxh3_128(&decoder).rotate_left(1);
        // TensorRT's shape profiles come from the pair's declared inputs and outputs, read from
        // their bytes once, and only where a profile is wanted.
        let declared = std::cell::OnceCell::new();
        let pair = || {
            declared
                .get_or_init(|| -> std::result::Result<_, String> {
                    let ((ein, eout), (din, dout)) = (declared_io(&encoder)?, declared_io(&decoder)?);
                    let io = [ein, eout, din, dout];
                    Ok((Sam2Spec::from_io(&io)?, io))
                })
                .as_ref()
                .map_err(String::clone)
        };
        let [encoder_files, decoder_files] = side_files;
        let encoder_model =
            PerModel::derive(&options, || Derived::new(pair().and_then(|(spec, io)| trt_profile::encoder_profile(spec, &io[0]))))
                .with_side_files(encoder_files);
        let decoder_options = options.for_decoder();
        let decoder_model = PerModel::derive(&decoder_options, || {
            Derived::new(pair().and_then(|(spec, io)| trt_profile::decoder_profile(spec, &io[2], &io[1])))
        })
        .with_side_files(decoder_files);
        // The two sessions are built at once: cold start is the longer of the two, not their sum.
        // Each is cached on its own (its own key, its own file).
        let (encoder, decoder) = std::thread::scope(|scope| {
            // The encoder runs once per image, so a second encoder session is rare (threads encoding
            // different images at once) while saving its graph would add ~50 % to the first start.
            // Its runs are heavy ones (they give the arena's blocks back); the decoder's are light.
            let encoder = scope.spawn(|| {
                SessionPool::for_model(encoder, paths.map(|p| p.0), &options, encoder_model, GraphSharing::AtFirstGrowth)
                    .map(|pool| pool.with_runs(Runs::Heavy))
                    .map_err(|e| e.context("encoder"))
            });
            let decoder = SessionPool::for_model(decoder, paths.map(|p| p.1), &decoder_options, decoder_model, GraphSharing::AtCreation)
                .map_err(|e| e.context("decoder"));
            let encoder = encoder.join().unwrap_or_else(|_| Err(Error::internal("building the encoder session panicked")));
            (encoder, decoder)
        });
        let (encoder, decoder) = (encoder?, decoder?);
        let (mut spec, io) = encoder
            .with(|e, _| decoder.with(|d, _| Ok((Sam2Spec::detect(e, d)?, [inputs_of(e), outputs_of(e), inputs_of(d), outputs_of(d)]))))?;
        spec.takes_zero_boxes = decoder.with(|d, _| zero_boxes::takes_zero_boxes(d, &spec, &io[2]))?;
        Ok(Sam2Segmenter {
            core: SessionCore::new(options),
            spec,
            encoder,
            decoder,
            io,
            state: Mutex::new(State::default()),
            model_identity,
        })
    }

    pub fn spec(&self) -> &Sam2Spec {
        &self.spec
    }

    /// The decoder's TensorRT shape profile runs are checked against, `None` when it got none.
    pub fn decoder_trt_profile(&self) -> Option<crate::engine::providers::tensorrt::profile::ShapeProfile> {
        self.decoder.trt_profile_checked().map(|p| (*p).clone())
    }

    /// Most prompts of one decoder run: `PROFILE_MAX_BATCH` under the decoder's TensorRT shape
    /// profile, else no bound here (memory budgets bound it).
    pub fn max_prompt_batch(&self) -> usize {
        match self.decoder.trt_profile_checked() {
            Some(_) => trt_profile::PROFILE_MAX_BATCH,
            None => usize::MAX,
        }
    }

    /// Under the decoder's TensorRT shape profile a prompt has at most `PROFILE_MAX_POINTS` points:
    /// refused before anything runs, naming the ways around it.
    pub fn check_profile_points(&self, prompt: &Prompt) -> Result<()> {
        let n = prompt.points.len();
        if n > trt_profile::PROFILE_MAX_POINTS && self.decoder.trt_profile_checked().is_some() {
            return Err(Error::invalid(format!(
                "{n} points: the decoder's TensorRT shape profile takes at most {} points per prompt; run the decoder \
                 on CUDA (decoder_provider) or turn TensorRT's profiles off (trt_profiles OFF) for more",
                trt_profile::PROFILE_MAX_POINTS
            )));
        }
        Ok(())
    }
    /// The options and the intensity setting (`core().set_intensity(...)`, from any thread; the
    /// cached embedding serves only calls under the setting it was encoded with).
    pub fn core(&self) -> &SessionCore {
        &self.core
    }
    pub fn options(&self) -> &Options {
        self.core.options()
    }
    pub fn provider(&self) -> &ProviderReport {
        &self.encoder.provider
    }
    /// The decoder's provider: the encoder's unless `GpuOptions::decoder_provider` or a fallback of
    /// one of them made them differ.
    pub fn decoder_provider(&self) -> &ProviderReport {
        &self.decoder.provider
    }
    /// Where the pair runs, in words: "CUDA:0", or "CUDA:0 (decoder: CPU)" when they differ.
    pub fn placement(&self) -> String {
        self.encoder.provider.in_use_with("decoder", &self.decoder.provider)
    }

    pub fn info(&self) -> Sam2Info<'_> {
        Sam2Info {
            kind: "sam2",
            convention: &self.spec.convention,
            session: self.core.info(&self.encoder.provider),
            encoder_inputs: &self.io[0],
            encoder_outputs: &self.io[1],
            decoder_inputs: &self.io[2],
            decoder_outputs: &self.io[3],
            interpretation: &self.spec,
            decoder_provider: &self.decoder.provider,
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

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}
