//! The four ONNX modules of a video model (image encoder, memory attention, memory encoder, mask
//! decoder) and how one of them runs.

use std::path::Path;

use ort::session::SessionInputValue;
use ort::value::{Tensor, TensorRef};
use serde::Serialize;

use crate::control::{self, Stage};
use crate::engine::io::f32_output;
use crate::engine::pool::Runs;
use crate::engine::providers::ProviderReport;
use crate::engine::{self, read_model_file, GraphSharing, PoolStats, SessionPool};
use crate::error::{Error, ErrorKind, Result};
use crate::options::Options;
use crate::session_core::{CoreInfo, SessionCore};

use super::metadata::{VideoFiles, VideoMetadata};

/// A video model as `seg_session_info` describes it.
#[derive(Debug, Clone, Serialize)]
pub struct VideoInfo<'a> {
    pub kind: &'static str,
    pub image_size: usize,
    pub low_res_size: usize,
    pub num_maskmem: usize,
    pub max_obj_ptrs_in_encoder: usize,
    pub files: &'a VideoFiles,
    /// The intensity stage, the image encoder's and memory attention's provider, the threads and
    /// ONNX Runtime (as every pipeline reports them).
    #[serde(flatten)]
    pub session: CoreInfo<'a>,
    /// The light modules' provider (mask decoder, memory encoder), which differs only with
    /// `GpuOptions::decoder_provider` or after a fallback.
    pub decoder_provider: &'a ProviderReport,
    pub image_encoder_pool: PoolStats,
    pub memory_attention_pool: PoolStats,
    pub memory_encoder_pool: PoolStats,
    pub mask_decoder_pool: PoolStats,
}

/// The four modules and their metadata; shareable between trackers (each tracker holds an `Arc`).
pub struct VideoModel {
    meta: VideoMetadata,
    /// The options and the intensity setting of the frames every track adds.
    core: SessionCore,
    image_encoder: SessionPool,
    memory_attention: SessionPool,
    memory_encoder: SessionPool,
    mask_decoder: SessionPool,
    /// xxh3-128 of the metadata and the four modules' bytes (see `identity`).
    identity: u128,
}

/// One module output: shape and values.
#[derive(Debug, Clone)]
pub(super) struct Array {
    pub(super) shape: Vec<i64>,
    pub(super) data: Vec<f32>,
}

impl Array {
    pub(super) fn view(&self) -> Result<SessionInputValue<'_>> {
        Ok(TensorRef::from_array_view((self.shape.clone(), self.data.as_slice())).map_err(input_error)?.into())
    }
}

pub(super) fn input_error(e: ort::Error) -> Error {
    Error::internal(format!("cannot build a video module input: {e}"))
}

pub(super) fn owned<T: ort::value::PrimitiveTensorElementType + std::fmt::Debug + Clone + 'static>(
    shape: Vec<i64>,
    data: Vec<T>,
) -> Result<SessionInputValue<'static>> {
    Ok(Tensor::from_array((shape, data)).map_err(input_error)?.into())
}

impl VideoModel {
    /// Reads `video_metadata.json` and the four ONNX files it names from `dir`.
    pub fn from_dir(dir: &Path, options: Options) -> Result<Self> {
        options.validate()?;
        let meta_path = dir.join("video_metadata.json");
        let json = std::fs::read_to_string(&meta_path)
            .map_err(|e| Error::new(ErrorKind::ModelNotFound, format!("cannot read '{}': {e}", meta_path.display())))?;
        let meta = VideoMetadata::parse(&json)?;
        let light = options.for_decoder();
        let identity = std::cell::Cell::new(xxhash_rust::xxh3::xxh3_128(json.as_bytes()));
        let pool = |file: &str, what: &str, sharing: GraphSharing, runs: Runs| -> Result<SessionPool> {
            let path = dir.join(file);
            let bytes = read_model_file(&path, options.max_model_bytes).map_err(|e| e.context(what))?;
            identity.set(identity.get().rotate_left(1) ^ xxhash_rust::xxh3::xxh3_128(&bytes));
            // The light modules run where a SAM2 decoder is asked to run.
            let options = if runs == Runs::Light { &light } else { &options };
            SessionPool::new(bytes, Some(&path), options, sharing).map(|pool| pool.with_runs(runs)).map_err(|e| e.context(what))
        };
        // As for image SAM2: the big image encoder saves its shared graph only if its pool grows.
        // The memory attention's inputs grow with the memory (up to num_maskmem frames and 16
        // pointers): each larger attention matrix (~470 MB at real size) needs a larger block, so
        // its runs, like the image encoder's, are heavy ones (they give the arena's blocks back).
        let image_encoder = pool(&meta.files.image_encoder, "video image encoder", GraphSharing::AtFirstGrowth, Runs::Heavy)?;
        let memory_attention = pool(&meta.files.memory_attention, "video memory attention", GraphSharing::AtCreation, Runs::Heavy)?;
        let memory_encoder = pool(&meta.files.memory_encoder, "video memory encoder", GraphSharing::AtCreation, Runs::Light)?;
        let mask_decoder = pool(&meta.files.mask_decoder, "video mask decoder", GraphSharing::AtCreation, Runs::Light)?;
        Ok(VideoModel {
            image_encoder,
            memory_attention,
            memory_encoder,
            mask_decoder,
            meta,
            core: SessionCore::new(options),
            identity: identity.get(),
        })
    }

    pub fn metadata(&self) -> &VideoMetadata {
        &self.meta
    }

    /// A hash of the metadata and the four modules' bytes: what a saved reference must have been
    /// made with.
    pub fn identity(&self) -> u128 {
        self.identity
    }

    /// The options and the intensity setting of the frames every track of this model adds later
    /// (`core().set_intensity(...)`, from any thread).
    pub fn core(&self) -> &SessionCore {
        &self.core
    }
    pub fn options(&self) -> &Options {
        self.core.options()
    }

    /// The execution provider of the image encoder (and of the memory attention).
    pub fn provider(&self) -> &ProviderReport {
        &self.image_encoder.provider
    }

    /// What `seg_session_info` reports for a video model.
    pub fn info(&self) -> VideoInfo<'_> {
        let m = &self.meta;
        VideoInfo {
            kind: "sam2_video",
            image_size: m.image_size,
            low_res_size: m.low_res_size,
            num_maskmem: m.num_maskmem,
            max_obj_ptrs_in_encoder: m.max_obj_ptrs_in_encoder,
            files: &m.files,
            session: self.core.info(self.provider()),
            decoder_provider: &self.mask_decoder.provider,
            image_encoder_pool: self.image_encoder.stats(),
            memory_attention_pool: self.memory_attention.stats(),
            memory_encoder_pool: self.memory_encoder.stats(),
            mask_decoder_pool: self.mask_decoder.stats(),
        }
    }

    /// Runs one module; returns its outputs in the order the metadata lists them.
    pub(super) fn run(&self, module: Module, inputs: Vec<SessionInputValue<'_>>) -> Result<Vec<Array>> {
        let (pool, io, what) = match module {
            Module::ImageEncoder => (&self.image_encoder, &self.meta.io.image_encoder, "video image encoder"),
            Module::MemoryAttention => (&self.memory_attention, &self.meta.io.memory_attention, "video memory attention"),
            Module::MemoryEncoder => (&self.memory_encoder, &self.meta.io.memory_encoder, "video memory encoder"),
            Module::MaskDecoder => (&self.mask_decoder, &self.meta.io.mask_decoder, "video mask decoder"),
        };
        if inputs.len() != io.inputs.len() {
            return Err(Error::internal(format!("{what}: {} inputs for {} names", inputs.len(), io.inputs.len())));
        }
        let named: Vec<(std::borrow::Cow<'_, str>, SessionInputValue<'_>)> =
            io.inputs.iter().map(|n| std::borrow::Cow::Borrowed(n.as_str())).zip(inputs).collect();
        pool.with(|session, _| {
            control::progress(Stage::Frames, 0.0)?;
            let outputs = engine::run(session, named, pool.releases_arena(), what, |outputs| {
                io.outputs.iter().map(|name| f32_output(outputs, name, what).map(|(shape, data)| Array { shape, data })).collect()
            })?;
            control::progress(Stage::Frames, 1.0)?;
            Ok(outputs)
        })
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Module {
    ImageEncoder,
    MemoryAttention,
    MemoryEncoder,
    MaskDecoder,
}
