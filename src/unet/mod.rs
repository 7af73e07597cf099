//! The UNet pipeline: image -> tensor -> ONNX Runtime -> mask at the image's size, written into the
//! caller's buffer. `spec` reads the model, `postprocess` turns scores into the mask, `cleanup`
//! cleans binary masks, `tiling` runs large images tile by tile.

pub mod cleanup;
pub mod normalisation;
pub mod postprocess;
pub mod spec;
pub mod tiling;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use half::f16;
use half::slice::HalfFloatSliceExt;
use ort::session::Session;
use serde::Serialize;

use crate::alloc;
use crate::control::{self, Stage};
use crate::engine::declared_io::declared_io;
use crate::engine::external_data::ExternalData;
use crate::engine::io::{inputs_of, outputs_of, TensorInfo};
use crate::engine::providers::tensorrt::profile::{Derived, ShapeProfile};
use crate::engine::providers::PerModel;
use crate::engine::{read_model_file, Batch, Budget, CacheReport, GraphSharing, PoolStats, ProviderReport, SessionPool};
use crate::error::{Error, ErrorKind, Result};
use crate::image::intensity::{applies, mapped_bytes, mapping_for, resolve_bytes, Intensity, Mapping};
use crate::image::tensor::{Element, Fit, Normalisation, Preprocessor, TensorData};
use crate::image::{check_size, ImageView, MaskMut};
use crate::options::{Options, ThresholdMode, TileMode};
use crate::session_core::{CoreInfo, SessionCore};

use postprocess::{scores_to_mask, ScoreMaps};
pub use spec::UnetSpec;
use tiling::{Blend, TileGrid, MAX_TILES};

/// What one run measured: milliseconds per stage and the size the model ran at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RunStats {
    pub preprocess_ms: f64,
    pub inference_ms: f64,
    pub postprocess_ms: f64,
    pub model_width: usize,
    pub model_height: usize,
    /// Tiles the image was cut into; 0 when the whole image was resized.
    pub tiles: usize,
}

/// What one run wrote into the caller's mask, and what it measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnetRun {
    /// 1 for binary models (mask 0/255), else the number of classes (mask = class index).
    pub classes: usize,
    /// The threshold applied (Otsu's value in Otsu mode); `NaN` for multi-class models.
    pub threshold: f32,
    /// Pixels of the mask that are not 0.
    pub foreground_pixels: u64,
    pub stats: RunStats,
}

/// A mask of its own, for callers without a buffer of their own (the CLI, tests).
#[derive(Debug, Clone, PartialEq)]
pub struct UnetMask {
    pub width: usize,
    pub height: usize,
    /// Row-major, `width * height`.
    pub mask: Vec<u8>,
    pub probability: Option<Vec<f32>>,
    pub run: UnetRun,
}

/// A UNet segmentation model ready to run from any thread.
pub struct UnetSegmenter {
    /// The options (the normalisation in use written into them) and the intensity setting.
    core: SessionCore,
    spec: UnetSpec,
    inputs: Vec<TensorInfo>,
    outputs: Vec<TensorInfo>,
    sessions: SessionPool<Preprocessor>,
    normalisation: normalisation::Decision,
}

/// What `seg_session_info` and `segrt info` report.
#[derive(Debug, Clone, Serialize)]
pub struct SessionInfo<'a> {
    pub kind: &'static str,
    pub inputs: &'a [TensorInfo],
    pub outputs: &'a [TensorInfo],
    pub interpretation: &'a UnetSpec,
    /// The pixel normalisation in use and where it came from (caller, model metadata, default).
    pub normalisation: &'a normalisation::Decision,
    /// The intensity stage, the provider, the threads and ONNX Runtime (as every pipeline reports them).
    #[serde(flatten)]
    pub session: CoreInfo<'a>,
    /// The handle's sessions: cap, alive, busy, built, waits, memory per session.
    pub pool: PoolStats,
    /// What the model cache did: status (off, hit, miss, rebuilt, unwritable, bypassed), file, note.
    pub cache: &'a CacheReport,
    /// Resident memory the first session added, including ONNX Runtime's one-time set-up.
    pub bytes_first_session: Option<u64>,
    pub model_bytes: usize,
}

/// Score maps of a multi-class model on a huge image are refused above this (tiled mode keeps them all).
const MAX_TILED_SCORE_BYTES: u64 = 4 << 30;

impl UnetSegmenter {
    pub fn from_file(path: &Path, options: Options) -> Result<Self> {
        options.validate()?;
        Self::build(read_model_file(path, options.max_model_bytes)?, Some(path), options, Arc::default())
    }

    /// Loads the model, checks it is a UNet segrt can run, and creates the calling thread's session.
    pub fn from_memory(model: Vec<u8>, options: Options) -> Result<Self> {
        Self::build(model, None, options, Arc::default())
    }

    /// [`Self::from_memory`] for a model with side files (ONNX external data), given in memory.
    pub fn from_memory_with(model: Vec<u8>, options: Options, side_files: Arc<ExternalData>) -> Result<Self> {
        Self::build(model, None, options, side_files)
    }

    fn build(model: Vec<u8>, path: Option<&Path>, options: Options, side_files: Arc<ExternalData>) -> Result<Self> {
        options.validate()?;
        let per_model = PerModel::derive(&options, || Derived::new(trt_profile(&model, &options))).with_side_files(side_files);
        let sessions = SessionPool::for_model(model, path, &options, per_model, GraphSharing::AtCreation)?;
        let (spec, inputs, outputs, normalisation) = sessions.with(|s, _| {
            let spec = UnetSpec::from_session(s, options.output_name.as_deref())?;
            let metadata = s.metadata().map_err(|e| Error::inference(format!("cannot read the model's metadata: {e}")))?;
            let normalisation = normalisation::decide(&options, &|key| metadata.custom(key))?;
            Ok((spec, inputs_of(s), outputs_of(s), normalisation))
        })?;
        let mut options = options;
        (options.scale, options.mean, options.std) = (normalisation.scale, normalisation.mean, normalisation.std);
        Ok(UnetSegmenter { core: SessionCore::new(options), spec, inputs, outputs, sessions, normalisation })
    }

    pub fn spec(&self) -> &UnetSpec {
        &self.spec
    }
    /// The TensorRT shape profile runs are checked against: the one TensorRT was given (see
    /// `engine::providers::tensorrt::profile`), `None` when it got none.
    pub fn trt_profile(&self) -> Option<ShapeProfile> {
        self.sessions.trt_profile_checked().map(|p| (*p).clone())
    }
    /// The options and the intensity setting (`core().set_intensity(...)`, from any thread).
    pub fn core(&self) -> &SessionCore {
        &self.core
    }
    pub fn options(&self) -> &Options {
        self.core.options()
    }
    pub fn provider(&self) -> &ProviderReport {
        &self.sessions.provider
    }

    pub fn info(&self) -> SessionInfo<'_> {
        SessionInfo {
            kind: "unet",
            inputs: &self.inputs,
            outputs: &self.outputs,
            interpretation: &self.spec,
            normalisation: &self.normalisation,
            session: self.core.info(&self.sessions.provider),
            pool: self.sessions.stats(),
            cache: &self.sessions.cache,
            bytes_first_session: self.sessions.stats().bytes_first_session,
            model_bytes: self.sessions.model_len(),
        }
    }

    /// Segments one image into a mask of its own (see [`Self::segment_into`]).
    pub fn segment(&self, image: &ImageView<'_>, want_probability: bool) -> Result<UnetMask> {
        let (w, h) = (image.width(), image.height());
        check_size(w as i64, h as i64, self.options().max_pixels)?;
        let mut mask = alloc::vec_of(w * h, 0u8, "the mask")?;
        let mut probability = if want_probability { Some(alloc::vec_of(w * h, 0f32, "the probability map")?) } else { None };
        let run = self.segment_into(image, &mut MaskMut::new(&mut mask, w, h, 0)?, probability.as_deref_mut())?;
        Ok(UnetMask { width: w, height: h, mask, probability, run })
    }

    /// Segments one image into the caller's `mask` (the image's size); `probability` (at least
    /// width x height, row-major) receives the foreground probability when given.
    pub fn segment_into(&self, image: &ImageView<'_>, mask: &mut MaskMut<'_>, probability: Option<&mut [f32]>) -> Result<UnetRun> {
        let (w, h) = (image.width(), image.height());
        check_size(w as i64, h as i64, self.options().max_pixels)?;
        if (mask.width(), mask.height()) != (w, h) {
            return Err(Error::invalid(format!(
                "mask is {}x{} but the image is {w}x{h}: the mask must have the image's size",
                mask.width(),
                mask.height()
            )));
        }
        if probability.as_ref().is_some_and(|p| p.len() < w * h) {
            return Err(Error::new(ErrorKind::BufferTooSmall, format!("the probability buffer needs {} floats", w * h)));
        }
        // One setting for the whole call; resolved on the whole image (every tile maps alike) once
        // the call's buffers are known to fit the budget.
        let stage = self.core.intensity();
        let tile = self.tile_size();
        let tiled = match self.options().tile_mode {
            TileMode::Off => false,
            TileMode::On => true,
            TileMode::Auto => w > 2 * tile.0 || h > 2 * tile.1,
        };
        if tiled {
            self.segment_tiled(image, tile, mask, probability, stage.as_ref())
        } else {
            self.segment_whole(image, mask, probability, stage.as_ref())
        }
    }

    /// The tile size: the model's fixed axes, else `tile_size`, else `input_size`, else 512x512.
    pub fn tile_size(&self) -> (usize, usize) {
        self.spec.tile_size(self.options())
    }

    /// The whole image resized to the model's input: one run.
    fn segment_whole(
        &self,
        image: &ImageView<'_>,
        mask: &mut MaskMut<'_>,
        probability: Option<&mut [f32]>,
        stage: Option<&Intensity>,
    ) -> Result<UnetRun> {
        let (w, h) = (image.width(), image.height());
        let size = self.spec.model_size((w, h), self.options());
        check_size(size.0 as i64, size.1 as i64, self.options().max_pixels).map_err(|e| e.context("model input size"))?;
        let model_pixels = (size.0 * size.1) as u64;
        let full_map = probability.is_some() || self.options().threshold_mode == ThresholdMode::Otsu || size.0 > w || size.1 > h;
        self.check_budget(&[
            ("the input tensor", model_pixels * self.input_bytes_per_pixel()),
            ("the model output and its copy", 2 * model_pixels * self.classes() * 4),
            ("the full-size score map", if full_map { (w * h) as u64 * 4 } else { 0 }),
            ("ONNX Runtime's working memory (measured)", self.sessions.costs().per_item(size).unwrap_or(0)),
            ("the intensity stage's float planes", self.mapped_bytes(stage, image, (w, h), Some(size))),
        ])?;
        let mapping = self.resolve(stage, image)?;
        control::progress(Stage::Run, 0.0)?;
        let infer = || {
            self.infer(|pre| {
                pre.prepare(image, &self.spec.tensor_format(), size, self.options(), mapping)?;
                Ok(self.spec.input_shape(size.0, size.1))
            })
        };
        // The first run at this input size measures what ONNX Runtime needs for it.
        let run = match self.sessions.costs().per_item(size) {
            None => self.sessions.costs().measure(size, 1, infer)?,
            Some(_) => infer()?,
        };
        control::progress(Stage::Run, 1.0)?;
        let (shape, scores) = (run.shape, run.scores);
        let t2 = Instant::now();
        let maps = ScoreMaps::from_output(&shape, scores, self.spec.input_layout, size)?;
        let summary = scores_to_mask(maps, mask, probability, self.options())?;
        let stats = RunStats {
            preprocess_ms: run.preprocess_ms,
            inference_ms: run.inference_ms,
            postprocess_ms: ms(t2, Instant::now()),
            model_width: size.0,
            model_height: size.1,
            tiles: 0,
        };
        Ok(UnetRun { classes: summary.classes, threshold: summary.threshold, foreground_pixels: summary.foreground, stats })
    }

    /// The image cut into model-sized tiles at full resolution (nothing resized), run in batches
    /// when the model's batch axis is dynamic; overlapping scores are blended (see `tiling`).
    fn segment_tiled(
        &self,
        image: &ImageView<'_>,
        (tw, th): (usize, usize),
        mask: &mut MaskMut<'_>,
        probability: Option<&mut [f32]>,
        stage: Option<&Intensity>,
    ) -> Result<UnetRun> {
        let (w, h) = (image.width(), image.height());
        check_size(tw as i64, th as i64, self.options().max_pixels).map_err(|e| e.context("tile size"))?;
        let overlap = self.options().tile_overlap;
        if 2 * overlap >= tw.min(th) {
            return Err(Error::invalid(format!("tile_overlap {overlap} must be less than half the tile ({tw}x{th})")));
        }
        let classes = self.spec.classes.unwrap_or(1);
        let score_bytes = (classes as u64) * (w as u64) * (h as u64) * 4;
        if score_bytes > MAX_TILED_SCORE_BYTES {
            return Err(Error::new(
                ErrorKind::ImageTooLarge,
                format!(
                    "tiling a {w}x{h} image for a {classes}-class model needs {} MiB of score maps, more than {} MiB",
                    score_bytes >> 20,
                    MAX_TILED_SCORE_BYTES >> 20
                ),
            ));
        }
        let grid = TileGrid::new((w, h), (tw, th), overlap);
        let count = grid.xs.len() * grid.ys.len();
        if count > MAX_TILES {
            return Err(Error::invalid(format!(
                "{tw}x{th} tiles would cut the {w}x{h} image into {count} tiles (at most {MAX_TILES}): use larger tiles or a smaller overlap"
            )));
        }
        let wanted = if self.spec.batch_dynamic { self.options().tile_batch } else { 1 };
        let tile_pixels = (tw * th) as u64;
        let own_per_tile = tile_pixels * self.input_bytes_per_pixel() + 2 * tile_pixels * classes as u64 * 4;
        // Tiles are mapped one at a time, each at the tile's size.
        let tile_planes = self.mapped_bytes(stage, image, (tw, th), None);
        self.check_budget(&[
            ("the blended score maps", score_bytes),
            ("a tile's input tensor, model output and its copy", own_per_tile),
            ("ONNX Runtime's working memory for a tile (measured)", self.sessions.costs().per_item((tw, th)).unwrap_or(0)),
            ("the intensity stage's float planes of a tile", tile_planes),
        ])?;
        let mapping = self.resolve(stage, image)?;
        // Tiles per run: as many as the budget holds once ONNX Runtime's cost of a tile is known.
        let budget = Budget {
            max_memory_bytes: self.options().max_memory_bytes,
            fixed_bytes: score_bytes + tile_planes,
            own_bytes_per_item: own_per_tile,
            item: "tile",
        };
        let format = self.spec.tensor_format();
        let norm = Normalisation::from(self.options()).with_mapping(mapping);

        let mut blend = Blend::new(classes, (w, h), &grid)?;
        let (mut pre_ms, mut run_ms, mut post_ms) = (0.0, 0.0, 0.0);
        let tiles = grid.tiles();
        let mut done = 0;
        while done < tiles.len() {
            control::progress(Stage::Tiles, done as f32 / tiles.len() as f32)?;
            let batch = self.sessions.costs().batch((tw, th), wanted, &budget)?;
            let chunk = &tiles[done..tiles.len().min(done + if let Batch::Sized(n) = batch { n } else { 1 })];
            let infer = || {
                self.infer(|pre| {
                    pre.start_batch(&format, (tw, th), chunk.len())?;
                    for (i, tile) in chunk.iter().enumerate() {
                        let crop = image.crop(tile.x, tile.y, tile.w, tile.h)?;
                        pre.fill(i, &crop, &format, (tw, th), &norm, Fit::Pad)?;
                    }
                    Ok(self.spec.batch_input_shape(chunk.len(), tw, th))
                })
            };
            let run = match batch {
                Batch::Measure => self.sessions.costs().measure((tw, th), chunk.len(), infer)?,
                Batch::Sized(_) => infer()?,
            };
            done += chunk.len();
            let (shape, scores) = (run.shape, run.scores);
            let t2 = Instant::now();
            let item = scores.len() / chunk.len().max(1);
            let one = [&[1i64][..], &shape[1..]].concat(); // each tile's output shape
            for (i, tile) in chunk.iter().enumerate() {
                let tile_scores = alloc::copy_of(&scores[i * item..(i + 1) * item], "a tile's scores")?;
                let maps = ScoreMaps::from_output(&one, tile_scores, self.spec.input_layout, (tw, th))?;
                blend.add(tile, maps)?;
            }
            pre_ms += run.preprocess_ms;
            run_ms += run.inference_ms;
            post_ms += ms(t2, Instant::now());
        }
        control::progress(Stage::Tiles, 1.0)?;
        let t0 = Instant::now();
        let summary = scores_to_mask(blend.finish(), mask, probability, self.options())?;
        post_ms += ms(t0, Instant::now());
        let stats = RunStats {
            preprocess_ms: pre_ms,
            inference_ms: run_ms,
            postprocess_ms: post_ms,
            model_width: tw,
            model_height: th,
            tiles: tiles.len(),
        };
        Ok(UnetRun { classes: summary.classes, threshold: summary.threshold, foreground_pixels: summary.foreground, stats })
    }

    /// Bytes of input tensor per model pixel.
    fn input_bytes_per_pixel(&self) -> u64 {
        let element = match self.spec.input_element {
            Element::F32 => 4,
            Element::F16 => 2,
            Element::U8 => 1,
        };
        (self.spec.channels * element) as u64
    }

    /// Bytes of float planes the intensity stage maps an image (or a tile) of `size` into when it
    /// applies to `image`, resized to `target`.
    fn mapped_bytes(&self, stage: Option<&Intensity>, image: &ImageView<'_>, size: (usize, usize), target: Option<(usize, usize)>) -> u64 {
        if !applies(stage, image) {
            return 0;
        }
        mapped_bytes(size, image.format().colours(), self.spec.channels, target)
    }

    /// The intensity stage resolved on the whole image, its percentile samples first checked against
    /// the budget (they are freed before the call's other buffers exist).
    fn resolve(&self, stage: Option<&Intensity>, image: &ImageView<'_>) -> Result<Option<Mapping>> {
        self.check_budget(&[("the percentile samples", resolve_bytes(stage, image))])?;
        mapping_for(stage, image)
    }

    /// Output classes (1 when the model leaves them dynamic).
    fn classes(&self) -> u64 {
        self.spec.classes.unwrap_or(1) as u64
    }

    /// Refuses a call whose buffers would exceed `max_memory_bytes`, before anything is allocated:
    /// segrt's own, and ONNX Runtime's working memory where a run at this size measured it.
    fn check_budget(&self, parts: &[(&str, u64)]) -> Result<()> {
        let total: u64 = parts.iter().map(|(_, b)| b).sum();
        if total <= self.options().max_memory_bytes {
            return Ok(());
        }
        let list: Vec<String> = parts.iter().filter(|(_, b)| *b > 0).map(|(what, b)| format!("{what} {}", alloc::size_text(*b))).collect();
        Err(Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "this call needs {} ({}), more than the max_memory_bytes budget of {}; raise it, or use tiling for large images",
                alloc::size_text(total),
                list.join(", "),
                alloc::size_text(self.options().max_memory_bytes)
            ),
        ))
    }

    /// One ONNX Runtime run on a session of this model, its input built by `prepare` in the
    /// session's own buffers once the session is ours: a call waiting for a session holds no tensor,
    /// so memory follows the sessions, not the host's threads.
    fn infer(&self, prepare: impl FnOnce(&mut Preprocessor) -> Result<[i64; 4]>) -> Result<Inference> {
        self.sessions.with(|session, pre| {
            let started = Instant::now();
            let shape = prepare(pre)?;
            let prepared = Instant::now();
            // Test builds only: a panic deep inside a run, while a session is in use.
            #[cfg(feature = "fault-injection")]
            if std::env::var_os("SEGRT_INJECT_PANIC").is_some() {
                panic!("injected panic (fault-injection build, SEGRT_INJECT_PANIC is set)");
            }
            let out = run_once(session, &self.spec, shape, pre.tensor(), self.sessions.releases_arena());
            let ran = Instant::now();
            pre.shrink();
            let (shape, scores) = out?;
            Ok(Inference { shape, scores, preprocess_ms: ms(started, prepared), inference_ms: ms(prepared, ran) })
        })
    }
}

/// The TensorRT shape profile of the model in `model` under `options` (see `UnetSpec::trt_profile`).
fn trt_profile(model: &[u8], options: &Options) -> std::result::Result<Option<ShapeProfile>, String> {
    let (inputs, outputs) = declared_io(model)?;
    UnetSpec::from_io(&inputs, &outputs, options.output_name.as_deref())?.trt_profile(&inputs, options)
}

/// A run's output and its timings (pre-processing is timed once the session is ours).
struct Inference {
    shape: Vec<i64>,
    scores: Vec<f32>,
    preprocess_ms: f64,
    inference_ms: f64,
}

fn ms(a: Instant, b: Instant) -> f64 {
    (b - a).as_secs_f64() * 1e3
}

/// One `session.run`; returns the output's shape and its values as f32.
fn run_once(
    session: &mut Session,
    spec: &UnetSpec,
    shape: [i64; 4],
    tensor: &TensorData,
    release_arena: crate::engine::ArenaRelease,
) -> Result<(Vec<i64>, Vec<f32>)> {
    let input = tensor.input(shape.to_vec())?;
    let inputs = ort::inputs![spec.input_name.as_str() => input];
    crate::engine::run(session, inputs, release_arena, "ONNX Runtime run", |outputs| {
        let value = &outputs[spec.output_name.as_str()];
        let bad = |e: ort::Error| Error::inference(format!("cannot read output '{}': {e}", spec.output_name));
        match spec.output_element {
            Element::F32 => {
                let (s, data) = value.try_extract_tensor::<f32>().map_err(bad)?;
                Ok((s.to_vec(), alloc::copy_of(data, "the model output")?))
            }
            Element::F16 => {
                let (s, data) = value.try_extract_tensor::<f16>().map_err(bad)?;
                let mut out = alloc::vec_of(data.len(), 0f32, "the model output")?;
                data.convert_to_f32_slice(&mut out);
                Ok((s.to_vec(), out))
            }
            Element::U8 => Err(Error::internal("a UNet output is never read as u8")),
        }
    })
}
