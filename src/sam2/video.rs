//! SAM2 video tracking: the official `SAM2VideoPredictor` (sam2 1.1.0) rebuilt on four
//! ONNX modules exported by `models/sam2/export_sam2_video.py` (image encoder, memory attention,
//! memory encoder, mask decoder with object pointer and object score) plus `video_metadata.json`.
//!
//! `models/sam2/video_ort_tracker.py` is the specification; every rule here names the Python
//! function it mirrors. The memory bank per object holds, like the predictor's `output_dict_per_obj`:
//! * conditioning frames: frames clicked before they were tracked (memory at t_pos 0, always used);
//! * non-conditioning frames: tracked frames (and corrections on tracked frames); the previous
//!   `num_maskmem - 1` of them give memories at t_pos `num_maskmem - t_rel`;
//! * object pointers: those of conditioning frames up to the current one, then those of the
//!   previous `min(num_frames, max_obj_ptrs_in_encoder) - 1` frames, each with its signed frame
//!   distance / (`min(num_frames, max_obj_ptrs_in_encoder) - 1`);
//! * clicks not yet consolidated ("temp"): their memory is encoded (from the binarised mask) when
//!   tracking next runs (`propagate_in_video_preflight`).
//!
//! Memory features are stored rounded to bfloat16, as the predictor stores them.
//!
//! Usage: [`VideoModel::from_dir`], then a [`Tracker`]: [`Tracker::add_frame`] for each frame in
//! order, [`Tracker::add_points`] on any frame already added (and still held), then
//! [`Tracker::propagate`] (the official `propagate_in_video`, forward, over the frames added so far)
//! or, streaming, [`Tracker::track_frame`] for each new frame.
//!
//! **Memory bound** ([`TrackerOptions::keep_frames`]): with `Some(k)` the tracker keeps the encoder
//! outputs of the `k` most recently added frames only (plus frames whose clicks are not yet
//! consolidated); clicking on or tracking an older frame is then an error. Tracked outputs of frames
//! more than `max(num_maskmem - 1, max_ptrs - 1)` frames before the oldest frame still held are
//! dropped too: no frame that can still be tracked would select them. Conditioning outputs (small:
//! memory features, pointer, low-res logits) are always kept. With `None` (the default) everything
//! is kept, as the official predictor does (which keeps every frame's pixels).

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use ort::session::{RunOptions, SessionInputValue};
use ort::value::{Tensor, TensorRef};
use serde::{Deserialize, Serialize};

use crate::control::{self, Stage};
use crate::engine::io::f32_output;
use crate::engine::providers::ProviderReport;
use crate::engine::{read_model_file, GraphSharing, PoolStats, SessionPool};
use crate::error::{Error, ErrorKind, Result};
use crate::image::resize::resize_pil_bicubic;
use crate::image::ImageView;
use crate::options::Options;
use crate::runtime::RuntimeInfo;

/// Most points one `add_points` call takes.
pub const MAX_VIDEO_POINTS: usize = 64;

/// `video_metadata.json`: the model constants the tracker needs (other keys are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct VideoMetadata {
    pub format_version: u32,
    pub files: VideoFiles,
    pub io: VideoIo,
    pub image_size: usize,
    pub low_res_size: usize,
    pub hidden_dim: usize,
    pub num_maskmem: usize,
    pub max_cond_frames_in_attn: i64,
    pub memory_temporal_stride_for_eval: i64,
    pub max_obj_ptrs_in_encoder: usize,
    pub add_tpos_enc_to_obj_ptrs: bool,
    pub proj_tpos_enc_in_obj_ptrs: bool,
    pub use_signed_tpos_enc_to_obj_ptrs: bool,
    pub only_obj_ptrs_in_the_past_for_eval: bool,
    pub directly_add_no_mem_embed: bool,
    pub multimask_output_in_sam: bool,
    pub multimask_output_for_tracking: bool,
    pub multimask_min_pt_num: usize,
    pub multimask_max_pt_num: usize,
    pub no_obj_score: f32,
    pub mask_input_clamp: f32,
    pub maskmem_features_storage_dtype: String,
    pub predictor: PredictorSettings,
    pub preprocessing: Preprocessing,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct VideoFiles {
    pub image_encoder: String,
    pub memory_attention: String,
    pub memory_encoder: String,
    pub mask_decoder: String,
}

/// Input and output names of one module, in order.
#[derive(Debug, Clone, Deserialize)]
pub struct ModuleIo {
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct VideoIo {
    pub image_encoder: ModuleIo,
    pub memory_attention: ModuleIo,
    pub memory_encoder: ModuleIo,
    pub mask_decoder: ModuleIo,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PredictorSettings {
    pub non_overlap_masks: bool,
    pub clear_non_cond_mem_around_input: bool,
    pub add_all_frames_to_correct_as_cond: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Preprocessing {
    pub mean: [f32; 3],
    pub std: [f32; 3],
}

impl VideoMetadata {
    pub fn parse(json: &str) -> Result<Self> {
        let m: VideoMetadata =
            serde_json::from_str(json).map_err(|e| Error::new(ErrorKind::ModelInvalid, format!("video_metadata.json: {e}")))?;
        m.check()?;
        Ok(m)
    }

    /// The settings this tracker implements (as video_ort_tracker.py asserts them).
    fn check(&self) -> Result<()> {
        let unsupported = |what: &str| Err(Error::unsupported_model(format!("video_metadata.json: {what} is not supported")));
        if self.format_version != 1 {
            return unsupported(&format!("format_version {}", self.format_version));
        }
        if self.max_cond_frames_in_attn != -1 {
            return unsupported("max_cond_frames_in_attn other than -1");
        }
        if self.memory_temporal_stride_for_eval != 1 {
            return unsupported("memory_temporal_stride_for_eval other than 1");
        }
        if !(self.add_tpos_enc_to_obj_ptrs && self.proj_tpos_enc_in_obj_ptrs) {
            return unsupported("object pointers without projected temporal encoding");
        }
        if !self.directly_add_no_mem_embed {
            return unsupported("directly_add_no_mem_embed = false");
        }
        if self.predictor.add_all_frames_to_correct_as_cond
            || self.predictor.clear_non_cond_mem_around_input
            || self.predictor.non_overlap_masks
        {
            return unsupported("add_all_frames_to_correct_as_cond / clear_non_cond_mem_around_input / non_overlap_masks");
        }
        if !matches!(self.maskmem_features_storage_dtype.as_str(), "bfloat16" | "float32") {
            return unsupported(&format!("maskmem_features_storage_dtype '{}'", self.maskmem_features_storage_dtype));
        }
        if self.image_size == 0
            || self.low_res_size == 0
            || self.hidden_dim == 0
            || self.num_maskmem == 0
            || self.max_obj_ptrs_in_encoder == 0
        {
            return Err(Error::new(ErrorKind::ModelInvalid, "video_metadata.json: a size is 0"));
        }
        Ok(())
    }
}

/// A video model as `seg_session_info` describes it.
#[derive(Debug, Clone, Serialize)]
pub struct VideoInfo<'a> {
    pub kind: &'static str,
    pub image_size: usize,
    pub low_res_size: usize,
    pub num_maskmem: usize,
    pub max_obj_ptrs_in_encoder: usize,
    pub files: &'a VideoFiles,
    pub provider: &'a ProviderReport,
    pub intra_threads: String,
    pub image_encoder_pool: PoolStats,
    pub memory_attention_pool: PoolStats,
    pub memory_encoder_pool: PoolStats,
    pub mask_decoder_pool: PoolStats,
    pub onnxruntime: RuntimeInfo,
}

/// The four modules and their metadata; shareable between trackers (each tracker holds an `Arc`).
pub struct VideoModel {
    meta: VideoMetadata,
    options: Options,
    /// Run options that release the CPU arena's unused blocks after a run.
    shrink_arena: RunOptions,
    image_encoder: SessionPool,
    memory_attention: SessionPool,
    memory_encoder: SessionPool,
    mask_decoder: SessionPool,
}

/// One module output: shape and values.
#[derive(Debug, Clone)]
struct Array {
    shape: Vec<i64>,
    data: Vec<f32>,
}

impl Array {
    fn view(&self) -> Result<SessionInputValue<'_>> {
        Ok(TensorRef::from_array_view((self.shape.clone(), self.data.as_slice())).map_err(input_error)?.into())
    }
}

fn input_error(e: ort::Error) -> Error {
    Error::internal(format!("cannot build a video module input: {e}"))
}

fn owned<T: ort::value::PrimitiveTensorElementType + std::fmt::Debug + Clone + 'static>(
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
        let pool = |file: &str, what: &str, sharing: GraphSharing| -> Result<SessionPool> {
            let path = dir.join(file);
            let bytes = read_model_file(&path, options.max_model_bytes).map_err(|e| e.context(what))?;
            SessionPool::new(bytes, Some(&path), &options, sharing).map_err(|e| e.context(what))
        };
        // As for image SAM2: the big image encoder saves its shared graph only if its pool grows.
        Ok(VideoModel {
            image_encoder: pool(&meta.files.image_encoder, "video image encoder", GraphSharing::AtFirstGrowth)?,
            memory_attention: pool(&meta.files.memory_attention, "video memory attention", GraphSharing::AtCreation)?,
            memory_encoder: pool(&meta.files.memory_encoder, "video memory encoder", GraphSharing::AtCreation)?,
            mask_decoder: pool(&meta.files.mask_decoder, "video mask decoder", GraphSharing::AtCreation)?,
            meta,
            options,
            shrink_arena: shrink_arena_options()?,
        })
    }

    pub fn metadata(&self) -> &VideoMetadata {
        &self.meta
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The execution provider of the image encoder (every module is created with the same options).
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
            provider: self.provider(),
            intra_threads: crate::unet::intra_threads_text(self.options.intra_threads),
            image_encoder_pool: self.image_encoder.stats(),
            memory_attention_pool: self.memory_attention.stats(),
            memory_encoder_pool: self.memory_encoder.stats(),
            mask_decoder_pool: self.mask_decoder.stats(),
            onnxruntime: RuntimeInfo::current(),
        }
    }

    /// Runs one module; returns its outputs in the order the metadata lists them.
    fn run(&self, module: Module, inputs: Vec<SessionInputValue<'_>>) -> Result<Vec<Array>> {
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
            // Its inputs grow with the memory (up to num_maskmem frames and 16 pointers): with the
            // arena's blocks sized as requested, each larger attention matrix (~470 MB at real size)
            // took a new block and kept it (7.6 GB by frame 17). Unused blocks go back after its runs.
            let shrinks = matches!(module, Module::MemoryAttention);
            // Under a call control the run can be terminated from another thread.
            let run = control::run_options(|o| if shrinks { o.set(SHRINK_ARENA.0, SHRINK_ARENA.1) } else { Ok(()) })?;
            let outputs = match (&run, shrinks) {
                (Some(options), _) => session.run_with_options(named, options),
                (None, true) => session.run_with_options(named, &self.shrink_arena),
                (None, false) => session.run(named),
            }
            .map_err(|e| control::run_error(&e, what))?;
            io.outputs.iter().map(|name| f32_output(&outputs, name, what).map(|(shape, data)| Array { shape, data })).collect()
        })
    }
}

#[derive(Debug, Clone, Copy)]
enum Module {
    ImageEncoder,
    MemoryAttention,
    MemoryEncoder,
    MaskDecoder,
}

/// Milliseconds spent per module (and in pre/post-processing) since a tracker was created: callers
/// take differences around a call for per-frame figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModuleTimes {
    /// Frame pre-processing (colour conversion, resize, normalisation).
    pub preprocess_ms: f64,
    pub image_encoder_ms: f64,
    pub memory_attention_ms: f64,
    pub mask_decoder_ms: f64,
    pub memory_encoder_ms: f64,
    /// Masks at the frame's size (upsampling, thresholding).
    pub postprocess_ms: f64,
}

impl ModuleTimes {
    /// `self - earlier`, field by field.
    pub fn since(&self, earlier: &ModuleTimes) -> ModuleTimes {
        ModuleTimes {
            preprocess_ms: self.preprocess_ms - earlier.preprocess_ms,
            image_encoder_ms: self.image_encoder_ms - earlier.image_encoder_ms,
            memory_attention_ms: self.memory_attention_ms - earlier.memory_attention_ms,
            mask_decoder_ms: self.mask_decoder_ms - earlier.mask_decoder_ms,
            memory_encoder_ms: self.memory_encoder_ms - earlier.memory_encoder_ms,
            postprocess_ms: self.postprocess_ms - earlier.postprocess_ms,
        }
    }

    fn slot(&mut self, module: Module) -> &mut f64 {
        match module {
            Module::ImageEncoder => &mut self.image_encoder_ms,
            Module::MemoryAttention => &mut self.memory_attention_ms,
            Module::MemoryEncoder => &mut self.memory_encoder_ms,
            Module::MaskDecoder => &mut self.mask_decoder_ms,
        }
    }
}

fn elapsed_ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Run options whose runs end by releasing the CPU arena's blocks no tensor uses
/// (`memory.enable_memory_arena_shrinkage`).
fn shrink_arena_options() -> Result<RunOptions> {
    let internal = |e: ort::Error| Error::internal(format!("cannot set run options: {e}"));
    let mut options = RunOptions::new().map_err(internal)?;
    options.set(SHRINK_ARENA.0, SHRINK_ARENA.1).map_err(internal)?;
    Ok(options)
}

/// The run option that releases the CPU arena's unused blocks after a run.
const SHRINK_ARENA: (&str, &str) = ("memory.enable_memory_arena_shrinkage", "cpu:0");

/// float32 -> bfloat16 -> float32, round to nearest even (torch's `.to(torch.bfloat16)`).
pub fn bf16_round(x: f32) -> f32 {
    let b = x.to_bits();
    let rounding = ((b >> 16) & 1) + 0x7FFF;
    f32::from_bits(b.wrapping_add(rounding) & 0xFFFF_0000)
}

/// `torch.nn.functional.interpolate(mode="bilinear", align_corners=False)` of one `sw x sh` map to
/// `w x h` in float32, computed as the reference does (video_ort_tracker.resize_bilinear).
pub fn upsample_bilinear(src: &[f32], (sw, sh): (usize, usize), (w, h): (usize, usize)) -> Vec<f32> {
    fn axis(n_in: usize, n_out: usize) -> Vec<(usize, usize, f32)> {
        let scale = n_in as f32 / n_out as f32;
        (0..n_out)
            .map(|i| {
                let src = ((i as f32 + 0.5) * scale - 0.5).max(0.0);
                let i0 = (src.floor() as usize).min(n_in - 1);
                let i1 = (i0 + 1).min(n_in - 1);
                (i0, i1, src - i0 as f32)
            })
            .collect()
    }
    let (ys, xs) = (axis(sh, h), axis(sw, w));
    let mut out = Vec::with_capacity(w * h);
    let mut top = vec![0f32; sw];
    for &(y0, y1, ly) in &ys {
        for (x, t) in top.iter_mut().enumerate() {
            *t = src[y0 * sw + x] * (1.0 - ly) + src[y1 * sw + x] * ly;
        }
        out.extend(xs.iter().map(|&(x0, x1, lx)| top[x0] * (1.0 - lx) + top[x1] * lx));
    }
    out
}

/// The image encoder's outputs for one frame.
struct Features {
    image_embed: Array,
    vision_feat: Array,
    vision_pos_enc: Array,
    high_res_0: Array,
    high_res_1: Array,
}

/// One object's output on one frame (`FrameOut` of the specification).
#[derive(Clone)]
struct FrameOut {
    /// Low-res logits, `low_res_size`².
    pred_masks: Arc<[f32]>,
    obj_ptr: Arc<[f32]>,
    score: f32,
    /// Memory features (bfloat16-rounded), once encoded.
    maskmem: Option<Arc<Array>>,
}

#[derive(Default, Clone)]
struct ObjectState {
    cond: BTreeMap<usize, FrameOut>,
    non_cond: BTreeMap<usize, FrameOut>,
    temp_cond: BTreeMap<usize, FrameOut>,
    temp_non_cond: BTreeMap<usize, FrameOut>,
    tracked: BTreeSet<usize>,
}

/// How a tracker runs; see the module documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrackerOptions {
    /// The video's length when known. The official predictor scales object-pointer distances by
    /// `min(num_frames, max_obj_ptrs_in_encoder) - 1`; `None` assumes a video of at least
    /// `max_obj_ptrs_in_encoder` frames (exact for every such video, the streaming case).
    pub num_frames: Option<usize>,
    /// Keep the encoder outputs of this many most recent frames only (`None`: all).
    pub keep_frames: Option<usize>,
}

/// One object on one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectMask {
    pub object_id: i32,
    /// Low-res logits (`low_res_size`², row-major); `no_obj_score` everywhere where the object has no
    /// output on this frame or is absent.
    pub low_res: Vec<f32>,
    /// The mask at the frame's size, 0/255: bilinear upsampling of `low_res`, `> 0`.
    pub mask: Vec<u8>,
    /// The object-score logit (`None` when the object has no output on this frame).
    pub score: Option<f32>,
    /// `score > 0`.
    pub present: bool,
}

/// Every object on one frame, in the order objects were first prompted.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameMasks {
    pub frame: usize,
    pub width: usize,
    pub height: usize,
    pub objects: Vec<ObjectMask>,
}

/// A video (or a stack of slices) being tracked; see the module documentation.
/// Cloning is cheap (frames and outputs are shared `Arc`s): a call that may be cancelled keeps a
/// copy to put back.
#[derive(Clone)]
pub struct Tracker {
    model: Arc<VideoModel>,
    options: TrackerOptions,
    /// (width, height) of the first frame; every frame must have it.
    size: Option<(usize, usize)>,
    frames_added: usize,
    features: BTreeMap<usize, Arc<Features>>,
    /// Objects in the order they were first prompted.
    objects: Vec<(i32, ObjectState)>,
    /// `_get_maskmem_pos_enc`: one constant for all frames and objects, from the first encoding.
    maskmem_pos_enc: Option<Arc<Array>>,
    tracking_started: bool,
    /// Time per module so far (a `Cell`: modules also run from `&self` methods).
    timings: Cell<ModuleTimes>,
    /// Test hook: drop every object pointer (to show the parity test catches it).
    #[doc(hidden)]
    pub ablate_pointers: bool,
    /// Test hook: keep memory features in float32.
    #[doc(hidden)]
    pub ablate_bf16: bool,
}

impl Tracker {
    pub fn new(model: Arc<VideoModel>, options: TrackerOptions) -> Result<Self> {
        if options.keep_frames == Some(0) {
            return Err(Error::invalid("keep_frames must be at least 1"));
        }
        if options.num_frames == Some(0) {
            return Err(Error::invalid("num_frames must be at least 1"));
        }
        Ok(Tracker {
            model,
            options,
            size: None,
            frames_added: 0,
            features: BTreeMap::new(),
            objects: Vec::new(),
            maskmem_pos_enc: None,
            tracking_started: false,
            timings: Cell::default(),
            ablate_pointers: false,
            ablate_bf16: false,
        })
    }

    fn meta(&self) -> &VideoMetadata {
        &self.model.meta
    }

    /// Forgets every frame, object and memory: the tracker is as new (same model and options).
    pub fn reset(&mut self) {
        let fresh = Tracker::new(self.model.clone(), self.options).expect("options were valid when the tracker was made");
        *self = fresh;
    }

    pub fn model(&self) -> &Arc<VideoModel> {
        &self.model
    }

    pub fn options(&self) -> TrackerOptions {
        self.options
    }

    /// True once a frame was tracked: objects can no longer be added.
    pub fn tracking_started(&self) -> bool {
        self.tracking_started
    }

    /// Milliseconds per module since the tracker was created.
    pub fn timings(&self) -> ModuleTimes {
        self.timings.get()
    }

    /// Runs one module of the model, adding its time to `timings`.
    fn run(&self, module: Module, inputs: Vec<SessionInputValue<'_>>) -> Result<Vec<Array>> {
        let start = Instant::now();
        let r = self.model.run(module, inputs);
        self.add_time(|t| t.slot(module), start);
        r
    }

    fn add_time(&self, slot: impl FnOnce(&mut ModuleTimes) -> &mut f64, start: Instant) {
        let mut t = self.timings.get();
        *slot(&mut t) += elapsed_ms(start);
        self.timings.set(t);
    }

    /// Frames added so far.
    pub fn num_frames(&self) -> usize {
        self.frames_added
    }

    /// (width, height) of the frames, once one was added.
    pub fn frame_size(&self) -> Option<(usize, usize)> {
        self.size
    }

    /// Object ids in the order they were first prompted.
    pub fn object_ids(&self) -> Vec<i32> {
        self.objects.iter().map(|(id, _)| *id).collect()
    }

    /// Per-frame outputs (conditioning and tracked, all objects) held in the memory bank.
    pub fn held_outputs(&self) -> usize {
        self.objects.iter().map(|(_, o)| o.cond.len() + o.non_cond.len() + o.temp_cond.len() + o.temp_non_cond.len()).sum()
    }

    /// Frames whose encoder outputs are held.
    pub fn held_frames(&self) -> Vec<usize> {
        self.features.keys().copied().collect()
    }

    /// `_load_img_as_tensor`: the frame resized to S x S as PIL's default `resize` does (bicubic,
    /// bit-exact: `resize_pil_bicubic`; no resize when the frame already is S x S), `u8 / 255`, then
    /// ImageNet mean / std, NCHW float32.
    pub fn preprocess(&self, image: &ImageView<'_>) -> Result<Vec<f32>> {
        let s = self.meta().image_size;
        let rgb = image.try_to_rgb8()?;
        let rgb = if (image.width(), image.height()) == (s, s) {
            rgb
        } else {
            resize_pil_bicubic(&rgb, (image.width(), image.height()), 3, (s, s))?
        };
        let p = &self.meta().preprocessing;
        let mut out = crate::alloc::vec_of(3 * s * s, 0f32, "a video frame tensor")?;
        for (c, plane) in out.chunks_exact_mut(s * s).enumerate() {
            for (o, px) in plane.iter_mut().zip(rgb.chunks_exact(3)) {
                let x = (px[c] as f64 / 255.0) as f32;
                *o = (x - p.mean[c]) / p.std[c];
            }
        }
        Ok(out)
    }

    /// Adds the next frame (encodes it now); returns its index. Every frame must have the first
    /// frame's size.
    pub fn add_frame(&mut self, image: &ImageView<'_>) -> Result<usize> {
        self.add_frame_sized(image, (image.width(), image.height()))
    }

    /// Adds the next frame already resized to the model's S x S by the caller (e.g. with PIL, as the
    /// official predictor does), for a video whose frames are `size` = (width, height): clicks are
    /// in those pixels and masks come at that size.
    pub fn add_resized_frame(&mut self, image: &ImageView<'_>, size: (usize, usize)) -> Result<usize> {
        let s = self.meta().image_size;
        if (image.width(), image.height()) != (s, s) {
            return Err(Error::invalid(format!(
                "a resized frame must be {s}x{s} (the model's input size), not {}x{}",
                image.width(),
                image.height()
            )));
        }
        crate::image::check_size(size.0 as i64, size.1 as i64, u64::MAX)?;
        self.add_frame_sized(image, size)
    }

    /// Refuses a next frame of `(w, h)` when the track's frames have another size.
    pub fn check_frame_size(&self, (w, h): (usize, usize)) -> Result<()> {
        match self.size {
            Some((fw, fh)) if (fw, fh) != (w, h) => Err(Error::invalid(format!(
                "frame {} is {w}x{h} but the track's frames are {fw}x{fh}: every frame must have the first frame's size",
                self.frames_added
            ))),
            _ => Ok(()),
        }
    }

    fn add_frame_sized(&mut self, image: &ImageView<'_>, (w, h): (usize, usize)) -> Result<usize> {
        self.check_frame_size((w, h))?;
        let s = self.meta().image_size as i64;
        let start = Instant::now();
        let tensor = Array { shape: vec![1, 3, s, s], data: self.preprocess(image)? };
        self.add_time(|t| &mut t.preprocess_ms, start);
        let mut o = self.run(Module::ImageEncoder, vec![tensor.view()?])?;
        if o.len() != 5 {
            return Err(Error::unsupported_model("video image encoder: expected 5 outputs"));
        }
        let mut take = || o.remove(0);
        let features =
            Features { image_embed: take(), vision_feat: take(), vision_pos_enc: take(), high_res_0: take(), high_res_1: take() };
        let t = self.frames_added;
        self.size = Some((w, h));
        self.features.insert(t, Arc::new(features));
        self.frames_added += 1;
        self.release_old();
        Ok(t)
    }

    /// Applies `keep_frames` (see the module documentation).
    fn release_old(&mut self) {
        let Some(k) = self.options.keep_frames else { return };
        let oldest = self.frames_added.saturating_sub(k);
        let pending: BTreeSet<usize> =
            self.objects.iter().flat_map(|(_, o)| o.temp_cond.keys().chain(o.temp_non_cond.keys()).copied()).collect();
        self.features.retain(|t, _| *t >= oldest || pending.contains(t));
        let window = (self.meta().num_maskmem - 1).max(self.max_ptrs() - 1);
        let keep_from = oldest.saturating_sub(window);
        for (_, o) in &mut self.objects {
            o.non_cond.retain(|t, _| *t >= keep_from);
            o.tracked.retain(|t| *t >= keep_from);
        }
    }

    fn features(&self, t: usize) -> Result<Arc<Features>> {
        if t >= self.frames_added {
            return Err(Error::invalid(format!("frame {t} was never added ({} frames so far)", self.frames_added)));
        }
        self.features.get(&t).cloned().ok_or_else(|| {
            Error::invalid(format!(
                "frame {t} is no longer held (keep_frames = {:?} keeps only the most recent frames)",
                self.options.keep_frames
            ))
        })
    }

    /// `min(num_frames, max_obj_ptrs_in_encoder)`.
    fn max_ptrs(&self) -> usize {
        let m = self.meta().max_obj_ptrs_in_encoder;
        self.options.num_frames.map_or(m, |n| n.min(m))
    }

    fn object_index(&self, id: i32) -> Option<usize> {
        self.objects.iter().position(|(o, _)| *o == id)
    }

    /// `add_new_points_or_box` with points only; see [`Tracker::add_prompt`].
    pub fn add_points(&mut self, frame: usize, object_id: i32, points: &[[f32; 2]], labels: &[i32]) -> Result<FrameMasks> {
        self.add_prompt(frame, object_id, points, labels, None)
    }

    /// `add_new_points_or_box` (`clear_old_points`): the prompt replaces earlier clicks of this
    /// object on this frame. `points` are (x, y) in the frame's pixels, `labels` 1 (positive) or 0
    /// (negative); `bbox` (x1, y1, x2, y2), also in pixels, becomes two corner points (labels 2, 3)
    /// placed before the clicks, as the predictor does. Returns every object on that frame (the
    /// prompted one with its new mask).
    /// A frame not tracked yet for this object becomes a conditioning frame; a prompt on a tracked
    /// frame is a correction (memory-conditioned, previous logits as mask input) and stays a
    /// non-conditioning frame. New objects can be added only before tracking starts.
    pub fn add_prompt(
        &mut self,
        frame: usize,
        object_id: i32,
        points: &[[f32; 2]],
        labels: &[i32],
        bbox: Option<[f32; 4]>,
    ) -> Result<FrameMasks> {
        let feats = self.features(frame)?;
        let (w, h) = self.size.ok_or_else(|| Error::internal("no frame size"))?;
        if (points.is_empty() && bbox.is_none()) || points.len() != labels.len() || points.len() > MAX_VIDEO_POINTS {
            return Err(Error::invalid(format!(
                "{} points and {} labels: give a box or 1 to {MAX_VIDEO_POINTS} points, one label each",
                points.len(),
                labels.len()
            )));
        }
        if let Some(p) = points.iter().find(|p| !p[0].is_finite() || !p[1].is_finite()) {
            return Err(Error::invalid(format!("point {p:?} is not finite")));
        }
        if let Some(l) = labels.iter().find(|l| !matches!(l, 0 | 1)) {
            return Err(Error::invalid(format!("label {l}: labels are 1 (positive) or 0 (negative)")));
        }
        if let Some(b) = bbox {
            if b.iter().any(|v| !v.is_finite()) || b[2] < b[0] || b[3] < b[1] {
                return Err(Error::invalid(format!("box {b:?}: give finite (x1, y1, x2, y2) with x1 <= x2 and y1 <= y2")));
            }
        }
        let (mut points, mut labels) = (points.to_vec(), labels.to_vec());
        if let Some(b) = bbox {
            points.splice(0..0, [[b[0], b[1]], [b[2], b[3]]]);
            labels.splice(0..0, [2, 3]);
        }
        let k = match self.object_index(object_id) {
            Some(k) => k,
            None if self.tracking_started => {
                return Err(Error::invalid(format!(
                    "object {object_id} is unknown and tracking has started: objects {:?} only (start a new tracker to add objects)",
                    self.object_ids()
                )))
            }
            None => {
                self.objects.push((object_id, ObjectState::default()));
                self.objects.len() - 1
            }
        };
        // normalize_coords: x / W * S, y / H * S in float32.
        let s = self.meta().image_size as f32;
        let coords: Vec<f32> = points.iter().flat_map(|p| [p[0] / w as f32 * s, p[1] / h as f32 * s]).collect();
        let labels = labels.as_slice();
        let o = &self.objects[k].1;
        let is_init_cond = !o.tracked.contains(&frame);
        let temp = if is_init_cond { &o.temp_cond } else { &o.temp_non_cond };
        let prev = temp.get(&frame).or_else(|| o.cond.get(&frame)).or_else(|| o.non_cond.get(&frame));
        let clamp = self.meta().mask_input_clamp;
        let prev_logits: Option<Vec<f32>> = prev.map(|p| p.pred_masks.iter().map(|v| v.clamp(-clamp, clamp)).collect());
        let out = match self.track_step(frame, &feats, is_init_cond, Some((&coords, labels)), k, false, prev_logits) {
            Ok(out) => out,
            Err(e) => {
                // An object created by this call and never predicted is forgotten again.
                let o = &self.objects[k].1;
                if o.cond.is_empty() && o.non_cond.is_empty() && o.temp_cond.is_empty() && o.temp_non_cond.is_empty() {
                    self.objects.remove(k);
                }
                return Err(e);
            }
        };
        let o = &mut self.objects[k].1;
        if is_init_cond {
            o.temp_cond.insert(frame, out);
        } else {
            o.temp_non_cond.insert(frame, out);
        }
        Ok(self.frame_masks(frame, Some(is_init_cond)))
    }

    /// `propagate_in_video` (forward): consolidates pending clicks, then tracks every frame from the
    /// first conditioning frame to the last frame added (re-tracking frames tracked before, as the
    /// predictor does). Returns each frame's masks.
    pub fn propagate(&mut self) -> Result<Vec<FrameMasks>> {
        self.preflight()?;
        let start = self.objects.iter().filter_map(|(_, o)| o.cond.keys().next().copied()).min().unwrap_or(0);
        (start..self.frames_added).map(|t| self.track_frame(t)).collect()
    }

    /// Tracks one frame (consolidating pending clicks first): every object without a conditioning
    /// output on it gets a memory-conditioned prediction, stored (with its memory) as a
    /// non-conditioning output. Streaming use: `add_frame` then `track_frame` on its index.
    pub fn track_frame(&mut self, frame: usize) -> Result<FrameMasks> {
        self.preflight()?;
        let feats = self.features(frame)?;
        self.tracking_started = true;
        for k in 0..self.objects.len() {
            if !self.objects[k].1.cond.contains_key(&frame) {
                let out = self.track_step(frame, &feats, false, None, k, true, None)?;
                self.objects[k].1.non_cond.insert(frame, out);
            }
            self.objects[k].1.tracked.insert(frame);
        }
        Ok(self.frame_masks(frame, None))
    }

    /// `propagate_in_video_preflight`: clicked outputs get their memory (binarised mask) and move
    /// to the consolidated outputs; a conditioning frame's non-conditioning output is dropped.
    fn preflight(&mut self) -> Result<()> {
        if self.objects.is_empty() {
            return Err(Error::invalid("no object to track: add points first"));
        }
        for k in 0..self.objects.len() {
            for cond in [false, true] {
                let temp = std::mem::take(if cond { &mut self.objects[k].1.temp_cond } else { &mut self.objects[k].1.temp_non_cond });
                for (t, mut out) in temp {
                    if out.maskmem.is_none() {
                        let feats = self.features(t)?;
                        out.maskmem = Some(self.encode_memory(&feats, &out.pred_masks, out.score, true)?);
                    }
                    let o = &mut self.objects[k].1;
                    if cond {
                        o.cond.insert(t, out)
                    } else {
                        o.non_cond.insert(t, out)
                    };
                }
            }
            let o = &mut self.objects[k].1;
            let cond: Vec<usize> = o.cond.keys().copied().collect();
            for t in cond {
                o.non_cond.remove(&t);
            }
            if o.cond.is_empty() {
                return Err(Error::invalid(format!(
                    "object {} has no conditioning frame: click it on a frame it was not tracked on",
                    self.objects[k].0
                )));
            }
        }
        self.release_old();
        Ok(())
    }

    /// `_consolidate_temp_output_across_obj` + `_get_orig_video_res_output` for frame `t`; with
    /// `temp` (Some(is_cond)) pending clicks of that kind come first.
    fn frame_masks(&self, t: usize, temp: Option<bool>) -> FrameMasks {
        let start = Instant::now();
        let (w, h) = self.size.unwrap_or((0, 0));
        let l = self.meta().low_res_size;
        let objects = self
            .objects
            .iter()
            .map(|(id, o)| {
                let pending = match temp {
                    Some(true) => o.temp_cond.get(&t),
                    Some(false) => o.temp_non_cond.get(&t),
                    None => None,
                };
                let out = pending.or_else(|| o.cond.get(&t)).or_else(|| o.non_cond.get(&t));
                let low_res = match out {
                    Some(out) => out.pred_masks.to_vec(),
                    None => vec![self.meta().no_obj_score; l * l],
                };
                let mask = upsample_bilinear(&low_res, (l, l), (w, h)).iter().map(|v| if *v > 0.0 { 255 } else { 0 }).collect();
                let score = out.map(|o| o.score);
                ObjectMask { object_id: *id, low_res, mask, score, present: score.is_some_and(|s| s > 0.0) }
            })
            .collect();
        self.add_time(|t| &mut t.postprocess_ms, start);
        FrameMasks { frame: t, width: w, height: h, objects }
    }

    /// `_encode_new_memory`: memory features (bfloat16-rounded) of a frame's chosen logits.
    fn encode_memory(&mut self, feats: &Features, logits: &[f32], score: f32, from_points: bool) -> Result<Arc<Array>> {
        let l = self.meta().low_res_size as i64;
        let m = self.model.clone();
        let inputs = vec![
            feats.vision_feat.view()?,
            TensorRef::from_array_view((vec![1i64, 1, l, l], logits)).map_err(input_error)?.into(),
            owned(vec![1, 1], vec![score])?,
            owned(vec![1], vec![from_points as u8 as f32])?,
        ];
        let mut r = self.run(Module::MemoryEncoder, inputs)?;
        if r.len() != 2 {
            return Err(Error::unsupported_model("video memory encoder: expected 2 outputs"));
        }
        let pos = r.pop().expect("two outputs");
        let mut feat = r.pop().expect("two outputs");
        if self.maskmem_pos_enc.is_none() {
            self.maskmem_pos_enc = Some(Arc::new(pos));
        }
        if m.meta.maskmem_features_storage_dtype == "bfloat16" && !self.ablate_bf16 {
            feat.data.iter_mut().for_each(|v| *v = bf16_round(*v));
        }
        Ok(Arc::new(feat))
    }

    /// `_prepare_memory_conditioned_features`: the memory attention over the selected memories and
    /// object pointers of object `k` for frame `t`.
    fn memory_conditioned(&self, t: usize, feats: &Features, k: usize) -> Result<Array> {
        let md = self.meta();
        let o = &self.objects[k].1;
        let nm = md.num_maskmem;
        let pos_enc = self.maskmem_pos_enc.as_ref().ok_or_else(|| Error::internal("no memory position encoding yet"))?;
        // Memories: every conditioning frame at t_pos 0, then the previous num_maskmem - 1 frames.
        let mut mems: Vec<(&Array, i64)> = Vec::new();
        for out in o.cond.values() {
            mems.push((out.maskmem.as_deref().ok_or_else(|| Error::internal("conditioning frame without memory"))?, 0));
        }
        for t_pos in 1..nm {
            let t_rel = nm - t_pos;
            let Some(prev) = t.checked_sub(t_rel) else { continue };
            if let Some(m) = o.non_cond.get(&prev).and_then(|out| out.maskmem.as_deref()) {
                mems.push((m, t_pos as i64));
            }
        }
        // Object pointers: conditioning frames up to t, then the previous max_ptrs - 1 frames.
        let max_ptrs = self.max_ptrs();
        let mut ptrs: Vec<(i64, &[f32])> = Vec::new();
        for (&s, out) in &o.cond {
            if !md.only_obj_ptrs_in_the_past_for_eval || s <= t {
                let d = t as i64 - s as i64;
                ptrs.push((if md.use_signed_tpos_enc_to_obj_ptrs { d } else { d.abs() }, &out.obj_ptr));
            }
        }
        for t_diff in 1..max_ptrs {
            let Some(s) = t.checked_sub(t_diff) else { break };
            if let Some(out) = o.non_cond.get(&s) {
                ptrs.push((t_diff as i64, &out.obj_ptr));
            }
        }
        if self.ablate_pointers {
            ptrs.clear();
        }
        let c = md.hidden_dim;
        let t_diff_max = (max_ptrs.max(2) - 1) as f32;
        let ptr_data: Vec<f32> = ptrs.iter().flat_map(|(_, p)| p.iter().copied()).collect();
        let ptr_tpos: Vec<f32> = ptrs.iter().map(|(p, _)| *p as f32 / t_diff_max).collect();
        let n = mems.len();
        if n == 0 {
            return Err(Error::internal(format!("frame {t}: no memory to condition on")));
        }
        let mut mem_shape = mems[0].0.shape.clone();
        mem_shape[0] = n as i64;
        let mem_feats: Vec<f32> = mems.iter().flat_map(|(m, _)| m.data.iter().copied()).collect();
        let mut pos_shape = pos_enc.shape.clone();
        pos_shape[0] = n as i64;
        let mem_pos: Vec<f32> = (0..n).flat_map(|_| pos_enc.data.iter().copied()).collect();
        let t_pos: Vec<i64> = mems.iter().map(|(_, p)| *p).collect();
        let inputs = vec![
            feats.vision_feat.view()?,
            feats.vision_pos_enc.view()?,
            owned(mem_shape, mem_feats)?,
            owned(pos_shape, mem_pos)?,
            owned(vec![n as i64], t_pos)?,
            owned(vec![ptrs.len() as i64, c as i64], ptr_data)?,
            owned(vec![ptrs.len() as i64], ptr_tpos)?,
        ];
        let mut r = self.run(Module::MemoryAttention, inputs)?;
        r.pop().ok_or_else(|| Error::unsupported_model("video memory attention: no output"))
    }

    /// `track_step` (+ `_forward_sam_heads`, `_encode_memory_in_output`) for object `k` on frame `t`.
    #[allow(clippy::too_many_arguments)]
    fn track_step(
        &mut self,
        t: usize,
        feats: &Features,
        is_init_cond: bool,
        points: Option<(&[f32], &[i32])>,
        k: usize,
        run_mem_encoder: bool,
        prev_logits: Option<Vec<f32>>,
    ) -> Result<FrameOut> {
        let m = self.model.clone();
        let md = &m.meta;
        let pix = if is_init_cond { feats.image_embed.clone() } else { self.memory_conditioned(t, feats, k)? };
        let (coords, labels) = match points {
            Some((c, l)) => (c.to_vec(), l.to_vec()),
            None => (vec![0.0, 0.0], vec![-1]),
        };
        let n_points = points.map_or(0, |(_, l)| l.len());
        let multimask = md.multimask_output_in_sam
            && (is_init_cond || md.multimask_output_for_tracking)
            && (md.multimask_min_pt_num..=md.multimask_max_pt_num).contains(&n_points);
        let l = md.low_res_size;
        let has_mask = prev_logits.is_some();
        let mask_in = prev_logits.unwrap_or_else(|| vec![0.0; l * l]);
        let n = labels.len() as i64;
        let inputs = vec![
            pix.view()?,
            feats.high_res_0.view()?,
            feats.high_res_1.view()?,
            owned(vec![1, n, 2], coords)?,
            owned(vec![1, n], labels)?,
            owned(vec![1, 1, l as i64, l as i64], mask_in)?,
            owned(vec![1], vec![has_mask as u8 as f32])?,
            owned(vec![1], vec![multimask as u8 as f32])?,
        ];
        let d = self.run(Module::MaskDecoder, inputs)?;
        if d.len() != 4 || d[0].data.len() != l * l || d[2].data.len() != md.hidden_dim || d[3].data.is_empty() {
            return Err(Error::unsupported_model("video mask decoder: unexpected outputs"));
        }
        let score = d[3].data[0];
        let mut out = FrameOut { pred_masks: d[0].data.clone().into(), obj_ptr: d[2].data.clone().into(), score, maskmem: None };
        if run_mem_encoder {
            out.maskmem = Some(self.encode_memory(feats, &d[0].data, score, points.is_some())?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_to_nearest_even() {
        // 1 + 2^-8 is halfway between two bfloat16 values: ties go to the even one (1.0).
        assert_eq!(bf16_round(1.0 + 2f32.powi(-8)), 1.0);
        // 1 + 3 * 2^-8 is halfway too: the even neighbour is 1 + 2^-6.
        assert_eq!(bf16_round(1.0 + 3.0 * 2f32.powi(-8)), 1.0 + 2f32.powi(-6));
        assert_eq!(bf16_round(-2.5), -2.5);
        assert_eq!(bf16_round(1.0 + 2f32.powi(-7) + 2f32.powi(-10)), 1.0 + 2f32.powi(-7));
    }

    #[test]
    fn upsampling_keeps_corners_and_interpolates_between_centres() {
        let src = [0.0, 1.0, 2.0, 3.0];
        let out = upsample_bilinear(&src, (2, 2), (4, 4));
        assert_eq!(out[0], 0.0);
        assert_eq!(out[15], 3.0);
        // Output x = 1 sits at source x = 0.25: a quarter of the way to the right neighbour.
        assert_eq!(out[1], 0.25);
    }

    #[test]
    fn metadata_with_unsupported_settings_is_refused() {
        let json = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/models/sam2/video/video_metadata.json")).unwrap();
        assert!(VideoMetadata::parse(&json).is_ok());
        let changed = json.replace("\"memory_temporal_stride_for_eval\": 1", "\"memory_temporal_stride_for_eval\": 2");
        assert_ne!(changed, json);
        assert_eq!(VideoMetadata::parse(&changed).unwrap_err().kind, ErrorKind::ModelUnsupported);
        assert_eq!(VideoMetadata::parse("{}").unwrap_err().kind, ErrorKind::ModelInvalid);
    }
}
