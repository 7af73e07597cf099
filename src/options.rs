//! Everything a session can be told: execution provider, threads, pools, limits, pre- and
//! post-processing. Plain Rust types; the C ABI's versions and their integer values live in `ffi`.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// Which execution provider runs the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    Cpu,
    /// NVIDIA CUDA (the onnxruntime-gpu build, CUDA 13 + cuDNN 9).
    Cuda,
    /// NVIDIA TensorRT (the onnxruntime-gpu build plus TensorRT).
    TensorRt,
    /// DirectML on any DirectX 12 GPU (Windows, the onnxruntime-directml build).
    DirectMl,
    /// Intel OpenVINO (the onnxruntime-openvino build).
    OpenVino,
}

impl Provider {
    pub const ALL: [Provider; 5] = [Provider::Cpu, Provider::Cuda, Provider::TensorRt, Provider::DirectMl, Provider::OpenVino];

    /// The name ONNX Runtime lists in `GetAvailableProviders` for builds that include it.
    pub fn ort_name(self) -> &'static str {
        match self {
            Provider::Cpu => "CPUExecutionProvider",
            Provider::Cuda => "CUDAExecutionProvider",
            Provider::TensorRt => "TensorrtExecutionProvider",
            Provider::DirectMl => "DmlExecutionProvider",
            Provider::OpenVino => "OpenVINOExecutionProvider",
        }
    }

    /// "CPU", "CUDA:0", ...: how reports name the provider on a device.
    pub fn display_name(self, device_id: i32) -> String {
        match self {
            Provider::Cpu => "CPU".into(),
            Provider::Cuda => format!("CUDA:{device_id}"),
            Provider::TensorRt => format!("TensorRT:{device_id}"),
            Provider::DirectMl => format!("DirectML:{device_id}"),
            Provider::OpenVino => "OpenVINO".into(),
        }
    }
}

/// What happens when the requested execution provider cannot be initialised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderPolicy {
    /// Creating the session fails with ONNX Runtime's reason.
    Require,
    /// The session runs on the CPU; the reason is reported.
    Fallback,
}

/// Filter used to resize images (Pillow's definitions, except `BilinearNoAntialias`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResizeFilter {
    Nearest,
    Bilinear,
    Bicubic,
    Lanczos3,
    /// 2x2 bilinear interpolation without antialiasing when shrinking, as OpenCV's `INTER_LINEAR`.
    BilinearNoAntialias,
}

/// Channel order a 3-channel model expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChannelOrder {
    Rgb,
    Bgr,
}

/// Whether a 1-channel output is turned into probabilities with a sigmoid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sigmoid {
    /// When the output holds values outside [0, 1] (logits).
    Auto,
    On,
    Off,
}

/// How a 1-channel probability map becomes a binary mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThresholdMode {
    /// `probability > threshold`.
    Fixed,
    /// Otsu's threshold on each image's probability histogram.
    Otsu,
}

/// Whether large images are segmented tile by tile at their own resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TileMode {
    /// The whole image is resized to the model's input size.
    Off,
    /// Always tile.
    On,
    /// Tile when the image is more than twice the tile's width or height.
    Auto,
}

/// Where the optimised model is cached between processes (see `engine::cache`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum CacheMode {
    /// No cache: every session build runs ONNX Runtime's graph optimiser.
    #[default]
    Off,
    /// A folder `segrt-cache` next to each model file. Needs a model file: an in-memory model
    /// with this mode is refused (`InvalidArgument`).
    BesideModel,
    /// This folder (created if missing).
    Dir(PathBuf),
}

/// What happens to ONNX Runtime's working buffers (the process-wide CPU arena's blocks) after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ArenaPolicy {
    /// The image encoders and the video memory attention (runs of seconds with hundreds of
    /// megabytes of working buffers) release them once the process is idle (`engine::idle_release`:
    /// about 2 s after the last such run, never under a run); decoder clicks, UNet runs and the other
    /// video modules keep them for the next run. What a desktop host wants: a batch encodes at the
    /// kept speed, the memory of an encode goes back when the user looks at the result, clicks stay fast.
    #[default]
    Auto,
    /// Every run keeps them for the next (fastest repeated calls; the process holds the largest
    /// call's buffers until its last handle is freed).
    Keep,
    /// Every run releases them (least memory between calls; each call faults its buffers in again).
    Release,
}

/// How cuDNN chooses the algorithm of each convolution (the CUDA provider's `cudnn_conv_algo_search`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ConvSearch {
    /// segrt's choice: `Heuristic`. ONNX Runtime's own default, `Exhaustive`, benchmarks every
    /// algorithm at the first run of each input shape, taking seconds and extra GPU memory each time a
    /// UNet sees a new image size.
    #[default]
    Auto,
    /// cuDNN's heuristics pick one (fast start, usually within a few percent of the best).
    Heuristic,
    /// Every algorithm is timed at the first run of each shape (slow first runs, the fastest later).
    Exhaustive,
    /// cuDNN's default algorithm, no search (least memory).
    Default,
}

/// Whether TensorRT is given the shape profiles segrt derives for each model (see
/// `engine::providers::tensorrt::profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TrtProfiles {
    /// Profiles derived from the model's dynamic axes and the sizes segrt feeds them (tiles, tile
    /// batch, SAM2 input size, prompt batches and points), for the models where segrt decides every
    /// dynamic axis: TensorRT builds their engines when the session is created. A SAM2 decoder's
    /// profile bounds a prompt to `PROFILE_MAX_POINTS` points.
    #[default]
    Auto,
    /// No profiles: TensorRT builds an engine at the first run and again whenever a run's shape
    /// falls outside the shapes it has seen (ONNX Runtime's own behaviour).
    Off,
}

/// What GPU execution providers are told beyond the device: the user's settings, plain data; what
/// each provider makes of them is in its module under `engine::providers`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GpuOptions {
    /// Refuse a session where ONNX Runtime placed nodes of the model on the CPU although another
    /// provider was requested: the policy applies (require: `ProviderUnavailable`; fallback: the
    /// whole model on the CPU).
    pub require_all_nodes: bool,
    /// Most bytes the CUDA provider's memory arena may hold on the GPU (`gpu_mem_limit`); 0 = no limit.
    pub mem_limit: u64,
    /// cuDNN's convolution algorithm search (CUDA, and CUDA behind TensorRT).
    pub conv_search: ConvSearch,
    /// Folder of TensorRT's engine and timing caches: engines are built once and loaded at later
    /// starts. `None`: TensorRT builds its engines at every start (minutes for a SAM2 encoder).
    pub trt_cache_dir: Option<PathBuf>,
    /// Let TensorRT build FP16 engines (faster on GPUs with tensor cores; results differ slightly).
    pub trt_fp16: bool,
    /// Where a SAM2 prompt decoder runs when not where `Options::provider` says (`None`: there): the
    /// image decoder of a SAM2 handle, and a tracker's light modules (mask decoder, memory encoder).
    /// E.g. the encoder on TensorRT (one fixed shape) and the decoder, whose prompt count varies,
    /// on CUDA or the CPU; or the decoder on the CPU to keep its sessions off a GPU shared with
    /// another program. The policy applies to it as to the encoder.
    pub decoder_provider: Option<Provider>,
    /// Whether TensorRT gets shape profiles segrt derives.
    pub trt_profiles: TrtProfiles,
    /// What the OpenVINO provider is told (device, precision, model cache folder, threads, streams).
    pub openvino: crate::engine::providers::openvino::OpenVinoOptions,
}

/// The folder `CacheMode::BesideModel` uses next to the model file.
pub const BESIDE_MODEL_CACHE_DIR: &str = "segrt-cache";

impl CacheMode {
    /// The folder for a model loaded from `model_path` (`None`: from memory). `Ok(None)`: no cache.
    pub fn folder_for(&self, model_path: Option<&std::path::Path>) -> Result<Option<PathBuf>> {
        match (self, model_path) {
            (CacheMode::Off, _) => Ok(None),
            (CacheMode::Dir(dir), _) => Ok(Some(dir.clone())),
            (CacheMode::BesideModel, Some(path)) => {
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
                Ok(Some(parent.join(BESIDE_MODEL_CACHE_DIR)))
            }
            (CacheMode::BesideModel, None) => Err(Error::invalid(
                "cache mode BESIDE_MODEL needs a model file, but this model was given in memory: use a cache folder (SEG_CACHE_DIR) or no cache",
            )),
        }
    }
}

/// Default limit on the pixels of one image: refuses absurd sizes before anything is allocated.
pub const DEFAULT_MAX_PIXELS: u64 = 100_000_000;

/// Default limit on the bytes of a model file (ONNX's protobuf limit: larger models need external data).
pub const DEFAULT_MAX_MODEL_BYTES: u64 = 2 << 30;

/// Default memory budget of one call's own buffers (tensors, score maps, masks, tiles).
pub const DEFAULT_MAX_MEMORY_BYTES: u64 = 8 << 30;

/// Session options with their defaults. `Options::default()` is what `seg_options_default` gives C hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Absolute path of the ONNX Runtime library to load (see `runtime` for the search order).
    pub ort_path: Option<PathBuf>,
    pub provider: Provider,
    pub device_id: i32,
    pub provider_policy: ProviderPolicy,
    /// ONNX Runtime intra-op threads of each session; 0 lets segrt choose (see `engine::pool`).
    pub intra_threads: usize,
    /// Model input size for models with dynamic height/width; `None` uses the image size
    /// rounded to `size_multiple`.
    pub input_size: Option<(usize, usize)>,
    pub size_multiple: usize,
    pub resize_filter: ResizeFilter,
    pub channel_order: ChannelOrder,
    /// Pixel values (0..255) are mapped as `(v * scale - mean[c]) / std[c]`. Left at the defaults
    /// (1/255, 0, 1), a normalisation the model's metadata states is used instead (see
    /// `unet::normalisation`).
    pub scale: f32,
    pub mean: [f32; 3],
    pub std: [f32; 3],
    /// The caller chose scale/mean/std even where they equal the defaults: the model's metadata is
    /// not consulted (the CLI sets it for `--scale`, `--mean`, `--std`).
    pub explicit_normalisation: bool,
    pub sigmoid: Sigmoid,
    pub threshold_mode: ThresholdMode,
    pub threshold: f32,
    /// Remove connected foreground regions smaller than this many pixels (0 = off).
    pub min_area: usize,
    /// Morphological closing with a k x k square (0 or 1 = off).
    pub close_kernel: usize,
    /// Fill background regions that do not touch the image border.
    pub fill_holes: bool,
    /// Images with more pixels are refused before anything is allocated.
    pub max_pixels: u64,
    pub tile_mode: TileMode,
    /// Tile size for models with dynamic height/width; `None` uses `input_size`, else 512x512.
    /// Fixed axes always win: a model trained at 256x256 gets 256x256 tiles.
    pub tile_size: Option<(usize, usize)>,
    /// Pixels shared by neighbouring tiles; their scores are blended across this band.
    pub tile_overlap: usize,
    /// Tiles per ONNX Runtime run when the model's batch axis is dynamic.
    pub tile_batch: usize,
    /// Most ONNX Runtime sessions one handle keeps (calls beyond wait their turn); 0 = one per
    /// physical core.
    pub max_sessions: usize,
    /// Model files (and in-memory models) larger than this are refused before they are read.
    pub max_model_bytes: u64,
    /// Memory budget of one call's own buffers; a larger need is refused before allocating.
    pub max_memory_bytes: u64,
    /// The UNet output to read, when the model has several (`None`: the first float map).
    pub output_name: Option<String>,
    /// Whether and where ONNX Runtime's optimised model is cached, so later starts skip the optimiser.
    pub cache: CacheMode,
    /// Whether runs give ONNX Runtime's working buffers back (see `ArenaPolicy`).
    pub arena: ArenaPolicy,
    /// GPU provider settings (memory limit, cuDNN search, TensorRT caches, where nodes may run).
    pub gpu: GpuOptions,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            ort_path: None,
            provider: Provider::Cpu,
            device_id: 0,
            provider_policy: ProviderPolicy::Require,
            intra_threads: 0,
            input_size: None,
            size_multiple: 32,
            resize_filter: ResizeFilter::Bilinear,
            channel_order: ChannelOrder::Rgb,
            scale: 1.0 / 255.0,
            mean: [0.0; 3],
            std: [1.0; 3],
            explicit_normalisation: false,
            sigmoid: Sigmoid::Auto,
            threshold_mode: ThresholdMode::Fixed,
            threshold: 0.5,
            min_area: 0,
            close_kernel: 0,
            fill_holes: false,
            max_pixels: DEFAULT_MAX_PIXELS,
            tile_mode: TileMode::Off,
            tile_size: None,
            tile_overlap: 64,
            tile_batch: 4,
            max_sessions: 0,
            max_model_bytes: DEFAULT_MAX_MODEL_BYTES,
            max_memory_bytes: DEFAULT_MAX_MEMORY_BYTES,
            output_name: None,
            cache: CacheMode::Off,
            arena: ArenaPolicy::Auto,
            gpu: GpuOptions::default(),
        }
    }
}

/// Logical cores of this machine (at least 1).
pub fn logical_cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// More intra-op threads than this per session only slows ONNX Runtime down (and its pool takes
/// seconds to start): a bound of a few threads per logical core.
pub fn max_intra_threads() -> usize {
    4 * logical_cores()
}

/// Sessions per handle beyond this are refused: each holds its own working memory.
pub const MAX_SESSIONS: usize = 256;

impl Options {
    /// The options of a SAM2 prompt decoder: these, on `gpu.decoder_provider` where one is set.
    pub fn for_decoder(&self) -> Options {
        let mut options = self.clone();
        if let Some(provider) = self.gpu.decoder_provider {
            options.provider = provider;
        }
        options
    }

    /// A size option (`None`: not set) is positive and within `max_pixels`.
    fn check_size(&self, size: Option<(usize, usize)>, what: &str) -> Result<()> {
        match size {
            Some((w, h)) if w == 0 || h == 0 || (w as u64) * (h as u64) > self.max_pixels => {
                Err(Error::invalid(format!("{what} {w}x{h} must be positive and within max_pixels")))
            }
            _ => Ok(()),
        }
    }

    /// Rejects values that cannot work, with a message naming the option.
    pub fn validate(&self) -> Result<()> {
        if !(self.threshold.is_finite() && (0.0..=1.0).contains(&self.threshold)) {
            return Err(Error::invalid(format!("threshold {} must be within [0, 1]", self.threshold)));
        }
        if !self.scale.is_finite() || self.scale == 0.0 {
            return Err(Error::invalid(format!("scale {} must be finite and non-zero", self.scale)));
        }
        if self.mean.iter().any(|m| !m.is_finite()) || self.std.iter().any(|s| !s.is_finite() || *s == 0.0) {
            return Err(Error::invalid(format!("mean {:?} must be finite and std {:?} finite and non-zero", self.mean, self.std)));
        }
        if self.size_multiple == 0 || self.size_multiple > 4096 {
            return Err(Error::invalid(format!("size_multiple {} must be within 1..=4096", self.size_multiple)));
        }
        self.check_size(self.input_size, "input size")?;
        if self.close_kernel > 255 {
            return Err(Error::invalid(format!("close_kernel {} is larger than 255", self.close_kernel)));
        }
        if self.max_pixels == 0 {
            return Err(Error::invalid("max_pixels must be positive"));
        }
        if self.device_id < 0 {
            return Err(Error::invalid(format!("device_id {} must not be negative", self.device_id)));
        }
        self.check_size(self.tile_size, "tile size")?;
        if self.tile_overlap > 4096 {
            return Err(Error::invalid(format!("tile_overlap {} is larger than 4096", self.tile_overlap)));
        }
        if !(1..=64).contains(&self.tile_batch) {
            return Err(Error::invalid(format!("tile_batch {} must be within 1..=64", self.tile_batch)));
        }
        if self.intra_threads > max_intra_threads() {
            return Err(Error::invalid(format!(
                "intra_threads {} is more than {} (4 x the {} logical cores of this machine): more threads only slow ONNX Runtime down; use 0 to let segrt choose",
                self.intra_threads,
                max_intra_threads(),
                logical_cores()
            )));
        }
        if self.max_sessions > MAX_SESSIONS {
            return Err(Error::invalid(format!(
                "max_sessions {} is more than {MAX_SESSIONS}; use 0 for one per physical core",
                self.max_sessions
            )));
        }
        if self.max_model_bytes == 0 || self.max_memory_bytes == 0 {
            return Err(Error::invalid("max_model_bytes and max_memory_bytes must be positive"));
        }
        if self.output_name.as_deref() == Some("") {
            return Err(Error::invalid("output_name is empty"));
        }
        if let CacheMode::Dir(dir) = &self.cache {
            if dir.as_os_str().is_empty() {
                return Err(Error::invalid("cache folder (cache_dir) is empty"));
            }
            // One rule with ort_path: what segrt writes, or loads code from, is never resolved
            // against the working directory, which a host does not always control.
            if !dir.is_absolute() {
                return Err(Error::invalid(format!("cache folder (cache_dir) '{}' is relative: give an absolute path", dir.display())));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_each_bad_value_is_named() {
        Options::default().validate().unwrap();
        let cases: Vec<(Options, &str)> = vec![
            (Options { threshold: f32::NAN, ..Options::default() }, "threshold"),
            (Options { threshold: 1.5, ..Options::default() }, "threshold"),
            (Options { scale: 0.0, ..Options::default() }, "scale"),
            (Options { std: [1.0, 0.0, 1.0], ..Options::default() }, "std"),
            (Options { size_multiple: 0, ..Options::default() }, "size_multiple"),
            (Options { input_size: Some((0, 10)), ..Options::default() }, "input size"),
            (Options { close_kernel: 256, ..Options::default() }, "close_kernel"),
            (Options { max_pixels: 0, ..Options::default() }, "max_pixels"),
            (Options { device_id: -1, ..Options::default() }, "device_id"),
            (Options { tile_batch: 0, ..Options::default() }, "tile_batch"),
            (Options { tile_overlap: 5000, ..Options::default() }, "tile_overlap"),
            (Options { intra_threads: max_intra_threads() + 1, ..Options::default() }, "intra_threads"),
            (Options { max_sessions: MAX_SESSIONS + 1, ..Options::default() }, "max_sessions"),
            (Options { max_memory_bytes: 0, ..Options::default() }, "max_memory_bytes"),
            (Options { output_name: Some(String::new()), ..Options::default() }, "output_name"),
            (Options { cache: CacheMode::Dir(PathBuf::new()), ..Options::default() }, "cache_dir"),
            (Options { cache: CacheMode::Dir("segrt-cache".into()), ..Options::default() }, "cache_dir"),
        ];
        for (options, field) in cases {
            let e = options.validate().unwrap_err();
            assert!(e.message.contains(field), "{field}: {}", e.message);
        }
        Options { intra_threads: max_intra_threads(), max_sessions: MAX_SESSIONS, ..Options::default() }.validate().unwrap();
    }

    #[test]
    fn the_cache_folder_follows_the_mode() {
        let model = std::path::Path::new("/models/unet.onnx");
        assert_eq!(CacheMode::Off.folder_for(Some(model)).unwrap(), None);
        assert_eq!(CacheMode::BesideModel.folder_for(Some(model)).unwrap(), Some(PathBuf::from("/models/segrt-cache")));
        assert_eq!(
            CacheMode::BesideModel.folder_for(Some(std::path::Path::new("unet.onnx"))).unwrap(),
            Some(PathBuf::from("./segrt-cache"))
        );
        assert_eq!(CacheMode::Dir("/c".into()).folder_for(None).unwrap(), Some(PathBuf::from("/c")));
        let e = CacheMode::BesideModel.folder_for(None).unwrap_err();
        assert!(e.message.contains("BESIDE_MODEL") && e.message.contains("memory"), "{}", e.message);
    }
}
