//! `SegOptions`: what every session is created with, read by the versioned contract and turned
//! into the library's `Options`.

use std::ffi::c_char;

use crate::error::{Error, Result};
use crate::options::{
    ArenaPolicy, CacheMode, ChannelOrder, ConvSearch, GpuOptions, Options, Provider, ProviderPolicy, ResizeFilter, Sigmoid, ThresholdMode,
    TileMode, TrtProfiles,
};

use super::boundary::{utf8_path, utf8_str};
use super::enums::{
    SegArena, SegCacheMode, SegChannelOrder, SegConvSearch, SegDecoderProvider, SegOvPrecision, SegProvider, SegProviderPolicy,
    SegResizeFilter, SegSigmoid, SegThresholdMode, SegTileMode, SegTrtProfiles,
};
use super::versioned::{read_versioned, versioned};

/// Default limit on the pixels of one image (`SegOptions::max_pixels`): refuses absurd sizes
/// before anything is allocated.
pub const SEG_DEFAULT_MAX_PIXELS: u64 = 100_000_000;

/// Session options. Declare the size, then take the defaults:
/// `SegOptions o = { .struct_size = sizeof o }; seg_options_default(&o);` (see "Versioned structs" in the docs).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SegOptions {
    /// `sizeof(SegOptions)` as the caller was compiled with.
    pub struct_size: u32,
    /// A `SegProvider` value (default CPU).
    pub provider: i32,
    /// GPU index for GPU providers (default 0).
    pub device_id: i32,
    /// A `SegProviderPolicy` value (default REQUIRE: fail rather than silently run on the CPU).
    pub provider_policy: i32,
    /// ONNX Runtime intra-op threads: 0 (default) = the process-wide ONNX Runtime thread pool shared
    /// by every session (a thread per physical core); N = a pool of N threads of each session's own.
    /// At most 4 x the machine's logical cores.
    pub intra_threads: i32,
    /// Model input width/height for models with dynamic axes; 0 = the image size rounded to `size_multiple`.
    pub input_width: i32,
    pub input_height: i32,
    /// Dynamic axes are rounded to a multiple of this (default 32).
    pub size_multiple: i32,
    /// A `SegResizeFilter` value (default BILINEAR).
    pub resize_filter: i32,
    /// A `SegChannelOrder` value for 3-channel models (default RGB).
    pub channel_order: i32,
    /// Input normalisation: `(pixel * scale - mean[c]) / std[c]` (defaults 1/255, 0, 1). Left at
    /// all three defaults, a normalisation the model's metadata states is used instead; see
    /// `seg_session_info` "normalisation".
    pub scale: f32,
    pub mean: [f32; 3],
    pub std: [f32; 3],
    /// A `SegSigmoid` value (default AUTO).
    pub sigmoid: i32,
    /// A `SegThresholdMode` value (default FIXED).
    pub threshold_mode: i32,
    /// Threshold for FIXED mode, in [0, 1] (default 0.5).
    pub threshold: f32,
    /// Remove foreground regions smaller than this many pixels (0 = off).
    pub min_area: u32,
    /// Morphological closing with a k x k square (0 = off).
    pub close_kernel: u32,
    /// Non-zero: fill holes inside foreground regions.
    pub fill_holes: u32,
    /// Must be 0 (explicit padding: segrt never copies undefined bytes into a caller's struct).
    pub reserved0: u32,
    /// Refuse images with more pixels than this (default 100 000 000), before a byte is read: it also
    /// turns a descriptor that claims more memory than its buffer has into `SEG_IMAGE_TOO_LARGE`; a
    /// host that raises it vouches that its descriptors describe readable memory.
    pub max_pixels: u64,
    /// Absolute UTF-8 path of the ONNX Runtime library, or NULL for the default search.
    /// Only read during `seg_create*`.
    pub ort_path: *const c_char,
    /// A `SegTileMode` value (default OFF: the whole image is resized to the model's input size).
    pub tile_mode: i32,
    /// Tile size in image pixels for models with dynamic height/width; 0 = `input_width/height`
    /// when set, else 512. A model's fixed input size always wins.
    pub tile_width: i32,
    pub tile_height: i32,
    /// Pixels shared by neighbouring tiles, where their scores are blended (default 64).
    pub tile_overlap: i32,
    /// Tiles per ONNX Runtime run when the model's batch axis is dynamic (default 4; 1..=64).
    pub tile_batch: i32,
    /// Most ONNX Runtime sessions the handle keeps for concurrent calls; calls beyond wait their
    /// turn in order. 0 (default) = one per physical core. See `seg_session_info` "pool".
    pub max_sessions: i32,
    /// Model files and in-memory models larger than this are refused before they are read
    /// (`SEG_MODEL_INVALID`); 0 = default 2 GiB (ONNX's protobuf limit).
    pub max_model_bytes: u64,
    /// Memory budget of one UNet or segment-everything call: segrt's own buffers (input tensors, score
    /// maps, tiles; for a UNet, the float planes and percentile samples of the intensity stage that
    /// 16-bit and float images go through) and ONNX Runtime's working memory for its runs, which the first run of a model at an
    /// input size measures (one tile, one prompt); tile and prompt batches then shrink to what fits. A call that cannot fit is refused with
    /// `SEG_OUT_OF_MEMORY` and the figures. 0 = default 8 GiB. The model's weights are not counted.
    pub max_memory_bytes: u64,
    /// UTF-8 name of the UNet output to read when the model has several, or NULL for the only
    /// segmentation map (a float output with the input's spatial size). Only read during `seg_create*`.
    pub output_name: *const c_char,
    /// A `SegCacheMode` value (default OFF): cache ONNX Runtime's optimised model so later starts
    /// skip its graph optimiser. Only read during `seg_create*`.
    pub cache_mode: i32,
    /// A `SegArena` value (default AUTO): whether runs give ONNX Runtime's working buffers back to
    /// the system or keep them for the next run. `uint32_t`, not `int32_t` like the other enums: in
    /// the first release of ABI 1 this field was padding that had to be 0, which is AUTO.
    pub arena: u32,
    /// UTF-8 folder of the cache for `SEG_CACHE_DIR` (created if missing); must be NULL otherwise.
    /// Only read during `seg_create*`.
    pub cache_dir: *const c_char,
    // ---- Appended in a later release of ABI 1; a host built before sets a struct_size that ends
    // here, and these fields take their defaults. ----
    /// Must be 0. Reserved: ABI 1's first hosts check that a struct 16 bytes longer than theirs
    /// with a non-zero byte there is refused, so no field may take these bytes.
    pub reserved2: [u32; 4],
    /// Most bytes the CUDA provider's memory arena may hold on the GPU (ONNX Runtime's
    /// `gpu_mem_limit`, for `SEG_PROVIDER_CUDA` and the CUDA provider behind `SEG_PROVIDER_TENSORRT`;
    /// TensorRT's own engines and workspace are not counted); 0 (default) = no limit. A model that
    /// does not fit fails to load: `SEG_PROVIDER_UNAVAILABLE`, or the CPU under `SEG_PROVIDER_FALLBACK`.
    pub gpu_mem_limit: u64,
    /// A `SegConvSearch` value (default AUTO: cuDNN's heuristics).
    pub conv_search: i32,
    /// Non-zero: a session where ONNX Runtime places nodes of the model on the CPU although a GPU
    /// provider was requested is refused (`SEG_PROVIDER_UNAVAILABLE` under REQUIRE; under FALLBACK
    /// the whole model runs on the CPU). 0 (default): such a session runs, and `seg_session_info`
    /// reports it ("in_use": "CUDA:0 (partly: ...)", "nodes" per provider).
    pub require_all_nodes: u32,
    /// UTF-8 folder (created if missing) for TensorRT's engine and timing caches: engines are built
    /// at the first start and loaded at later ones. NULL (default): TensorRT builds its engines at
    /// every start. Only read during `seg_create*`.
    pub trt_cache_dir: *const c_char,
    /// Non-zero: TensorRT may build FP16 engines (faster on tensor cores; results differ slightly).
    pub trt_fp16: u32,
    /// A `SegDecoderProvider` value (default SAME: where `provider` says): where a SAM2 handle's
    /// prompt decoder and a tracker's mask decoder and memory encoder run, e.g. the encoder on
    /// TensorRT and the decoder on CUDA, or the decoder on the CPU. `device_id`, the policy and the
    /// GPU options apply to both; `seg_session_info` reports each one's provider.
    pub decoder_provider: i32,
    // ---- Appended in a later release of ABI 1. ----
    /// A `SegTrtProfiles` value (default AUTO): whether TensorRT is given shape profiles derived from
    /// the model's dynamic axes and the sizes segrt feeds them; `seg_session_info` reports each
    /// model's profile, or why it has none.
    pub trt_profiles: i32,
    /// Must be 0 (explicit padding).
    pub reserved3: u32,
    // ---- Appended in a later release of ABI 1: OpenVINO (`SEG_PROVIDER_OPENVINO`, and a decoder on
    // `SEG_DECODER_PROVIDER_OPENVINO`). ----
    /// UTF-8 OpenVINO device: "CPU", "GPU", "GPU.<n>" (several GPUs; the integrated one is GPU.0), "NPU",
    /// "AUTO", or "AUTO:<devices>" (e.g. "AUTO:GPU,CPU": OpenVINO picks, in that order of preference);
    /// case-insensitive. NULL (default) = "CPU". A device OpenVINO does not find is
    /// `SEG_PROVIDER_UNAVAILABLE` under REQUIRE, the CPU under FALLBACK. Only read during `seg_create*`.
    pub ov_device: *const c_char,
    /// A `SegOvPrecision` value (default DEFAULT: the device's own precision).
    pub ov_precision: i32,
    /// OpenVINO's own inference threads; 0 (default) = OpenVINO's (a thread per core).
    pub ov_threads: i32,
    /// Absolute UTF-8 folder where OpenVINO keeps the models it compiled (one `.blob` per model), so a
    /// second start skips compiling them; NULL (default) = none. Only read during `seg_create*`.
    pub ov_cache_dir: *const c_char,
    /// OpenVINO's parallel inference streams, 1..=255 (1: one image at a time, the least latency);
    /// 0 (default) = OpenVINO's.
    pub ov_streams: i32,
    /// Must be 0 (explicit padding).
    pub reserved4: u32,
}

/// `sizeof(SegOptions)` of ABI 1's first release, before the GPU fields were appended.
pub const SEG_OPTIONS_SIZE_V1_0: usize = std::mem::offset_of!(SegOptions, reserved2);
/// `sizeof(SegOptions)` with the GPU fields, before `trt_profiles` was appended.
pub const SEG_OPTIONS_SIZE_GPU: usize = std::mem::offset_of!(SegOptions, trt_profiles);
/// `sizeof(SegOptions)` with `trt_profiles`, before the OpenVINO fields were appended.
pub const SEG_OPTIONS_SIZE_TRT_PROFILES: usize = std::mem::offset_of!(SegOptions, ov_device);
// The published layouts (64-bit targets): ABI 1.0's, that with the reserved block, the GPU fields,
// `trt_profiles`, and the OpenVINO fields.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(
    SEG_OPTIONS_SIZE_V1_0.is_multiple_of(8)
        && SEG_OPTIONS_SIZE_GPU == SEG_OPTIONS_SIZE_V1_0 + 16 + 32
        && SEG_OPTIONS_SIZE_TRT_PROFILES == SEG_OPTIONS_SIZE_GPU + 8
        && size_of::<SegOptions>() == SEG_OPTIONS_SIZE_TRT_PROFILES + 32
);

// The layouts: ABI 1's first release, that with the reserved block (all zero: nothing new), the GPU
// fields appended, then `trt_profiles`, then the OpenVINO fields, the last being the whole struct.
versioned!(SegOptions {
    const LAYOUTS: &'static [usize] = &[
        SEG_OPTIONS_SIZE_V1_0,
        SEG_OPTIONS_SIZE_V1_0 + 16,
        SEG_OPTIONS_SIZE_GPU,
        SEG_OPTIONS_SIZE_TRT_PROFILES,
        std::mem::size_of::<SegOptions>(),
    ];
    const RESERVED_TAIL: Option<std::ops::Range<usize>> = Some(SEG_OPTIONS_SIZE_V1_0..SEG_OPTIONS_SIZE_V1_0 + 16);
});

impl SegOptions {
    pub fn defaults() -> Self {
        let o = Options::default();
        SegOptions {
            struct_size: std::mem::size_of::<SegOptions>() as u32,
            provider: SegProvider::from(o.provider) as i32,
            device_id: o.device_id,
            provider_policy: SegProviderPolicy::from(o.provider_policy) as i32,
            intra_threads: o.intra_threads as i32,
            input_width: 0,
            input_height: 0,
            size_multiple: o.size_multiple as i32,
            resize_filter: SegResizeFilter::from(o.resize_filter) as i32,
            channel_order: SegChannelOrder::from(o.channel_order) as i32,
            scale: o.scale,
            mean: o.mean,
            std: o.std,
            sigmoid: SegSigmoid::from(o.sigmoid) as i32,
            threshold_mode: SegThresholdMode::from(o.threshold_mode) as i32,
            threshold: o.threshold,
            min_area: o.min_area as u32,
            close_kernel: o.close_kernel as u32,
            fill_holes: o.fill_holes as u32,
            reserved0: 0,
            max_pixels: o.max_pixels,
            ort_path: std::ptr::null(),
            tile_mode: SegTileMode::from(o.tile_mode) as i32,
            tile_width: 0,
            tile_height: 0,
            tile_overlap: o.tile_overlap as i32,
            tile_batch: o.tile_batch as i32,
            max_sessions: 0,
            max_model_bytes: 0,
            max_memory_bytes: 0,
            output_name: std::ptr::null(),
            cache_mode: SegCacheMode::SEG_CACHE_OFF as i32,
            arena: SegArena::from(o.arena) as u32,
            cache_dir: std::ptr::null(),
            reserved2: [0; 4],
            gpu_mem_limit: 0,
            conv_search: SegConvSearch::SEG_CONV_SEARCH_AUTO as i32,
            require_all_nodes: 0,
            trt_cache_dir: std::ptr::null(),
            trt_fp16: 0,
            decoder_provider: SegDecoderProvider::SEG_DECODER_PROVIDER_SAME as i32,
            trt_profiles: SegTrtProfiles::SEG_TRT_PROFILES_AUTO as i32,
            reserved3: 0,
            ov_device: std::ptr::null(),
            ov_precision: SegOvPrecision::SEG_OV_PRECISION_DEFAULT as i32,
            ov_threads: 0,
            ov_cache_dir: std::ptr::null(),
            ov_streams: 0,
            reserved4: 0,
        }
    }

    /// Reads a caller's options (NULL = defaults), honouring `struct_size`.
    ///
    /// # Safety
    /// `p` must be NULL or point to at least `struct_size` readable bytes, whose string fields are
    /// NULL or NUL-terminated.
    pub(crate) unsafe fn read(p: *const SegOptions) -> Result<Options> {
        if p.is_null() {
            return Ok(Options::default());
        }
        // SAFETY: forwarded from the caller.
        unsafe { read_versioned(p, SegOptions::defaults())?.options() }
    }

    /// # Safety
    /// The string fields must be NULL or NUL-terminated.
    unsafe fn options(&self) -> Result<Options> {
        let defaults = Options::default();
        for (name, zero) in [
            ("reserved0", self.reserved0 == 0),
            ("reserved2", self.reserved2 == [0; 4]),
            ("reserved3", self.reserved3 == 0),
            ("reserved4", self.reserved4 == 0),
        ] {
            if !zero {
                return Err(Error::invalid(format!(
                    "SegOptions.{name} is not 0: the host sets a field this segrt does not have; ship the segrt library of the host's release"
                )));
            }
        }
        let non_negative = |v: i32, what: &str| -> Result<usize> {
            usize::try_from(v).map_err(|_| Error::invalid(format!("SegOptions.{what} is {v}, it must not be negative")))
        };
        let input_size = match (self.input_width, self.input_height) {
            (0, 0) => None,
            (w, h) => Some((non_negative(w, "input_width")?, non_negative(h, "input_height")?)),
        };
        let tile_size = match (self.tile_width, self.tile_height) {
            (0, 0) => None,
            (w, h) => Some((non_negative(w, "tile_width")?, non_negative(h, "tile_height")?)),
        };
        let options = Options {
            // SAFETY: not NULL, so NUL-terminated (this function's contract).
            ort_path: if self.ort_path.is_null() { None } else { Some(unsafe { utf8_path(self.ort_path, "SegOptions.ort_path")? }) },
            provider: Provider::try_from(self.provider)?,
            device_id: self.device_id,
            provider_policy: ProviderPolicy::try_from(self.provider_policy)?,
            intra_threads: non_negative(self.intra_threads, "intra_threads")?,
            input_size,
            size_multiple: non_negative(self.size_multiple, "size_multiple")?,
            resize_filter: ResizeFilter::try_from(self.resize_filter)?,
            channel_order: ChannelOrder::try_from(self.channel_order)?,
            scale: self.scale,
            mean: self.mean,
            std: self.std,
            // C hosts cannot mark the defaults as their choice: left at the defaults, a
            // normalisation in the model's metadata applies (see `unet::normalisation`).
            explicit_normalisation: false,
            sigmoid: Sigmoid::try_from(self.sigmoid)?,
            threshold_mode: ThresholdMode::try_from(self.threshold_mode)?,
            threshold: self.threshold,
            min_area: self.min_area as usize,
            close_kernel: self.close_kernel as usize,
            fill_holes: self.fill_holes != 0,
            max_pixels: self.max_pixels,
            tile_mode: TileMode::try_from(self.tile_mode)?,
            tile_size,
            tile_overlap: non_negative(self.tile_overlap, "tile_overlap")?,
            tile_batch: non_negative(self.tile_batch, "tile_batch")?,
            max_sessions: non_negative(self.max_sessions, "max_sessions")?,
            max_model_bytes: if self.max_model_bytes == 0 { defaults.max_model_bytes } else { self.max_model_bytes },
            max_memory_bytes: if self.max_memory_bytes == 0 { defaults.max_memory_bytes } else { self.max_memory_bytes },
            output_name: if self.output_name.is_null() {
                None
            } else {
                // SAFETY: as for ort_path.
                Some(unsafe { utf8_str(self.output_name, "SegOptions.output_name")? })
            },
            // SAFETY: forwarded from the caller.
            cache: unsafe { self.cache()? },
            arena: ArenaPolicy::try_from(i32::try_from(self.arena).unwrap_or(i32::MAX))?,
            gpu: GpuOptions {
                require_all_nodes: self.require_all_nodes != 0,
                mem_limit: self.gpu_mem_limit,
                conv_search: ConvSearch::try_from(self.conv_search).map_err(|e| e.context("SegOptions.conv_search"))?,
                trt_cache_dir: if self.trt_cache_dir.is_null() {
                    None
                } else {
                    // SAFETY: as for ort_path.
                    Some(unsafe { utf8_path(self.trt_cache_dir, "SegOptions.trt_cache_dir")? })
                },
                trt_fp16: self.trt_fp16 != 0,
                decoder_provider: SegDecoderProvider::try_from(self.decoder_provider)
                    .map_err(|e| e.context("SegOptions.decoder_provider"))?
                    .provider(),
                trt_profiles: TrtProfiles::try_from(self.trt_profiles).map_err(|e| e.context("SegOptions.trt_profiles"))?,
                // SAFETY: forwarded from the caller.
                openvino: unsafe { self.openvino()? },
            },
        };
        // Messages name the C fields: the library's own validation speaks of options.
        options.validate().map_err(|e| e.context("SegOptions"))?;
        Ok(options)
    }
}

impl SegOptions {
    /// # Safety
    /// `cache_dir` must be NULL or NUL-terminated.
    unsafe fn cache(&self) -> Result<CacheMode> {
        let mode = SegCacheMode::try_from(self.cache_mode).map_err(|e| e.context("SegOptions.cache_mode"))?;
        match mode {
            SegCacheMode::SEG_CACHE_DIR => {
                if self.cache_dir.is_null() {
                    return Err(Error::invalid("SegOptions.cache_mode is SEG_CACHE_DIR but SegOptions.cache_dir is NULL: give the cache folder"));
                }
                // SAFETY: not NULL, so NUL-terminated (this function's contract).
                Ok(CacheMode::Dir(unsafe { utf8_path(self.cache_dir, "SegOptions.cache_dir")? }))
            }
            _ if !self.cache_dir.is_null() => Err(Error::invalid(
                "SegOptions.cache_dir is set but SegOptions.cache_mode is not SEG_CACHE_DIR: set cache_mode = SEG_CACHE_DIR to use that folder",
            )),
            SegCacheMode::SEG_CACHE_OFF => Ok(CacheMode::Off),
            SegCacheMode::SEG_CACHE_BESIDE_MODEL => Ok(CacheMode::BesideModel),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_default_pixel_limit_is_the_librarys() {
        assert_eq!(SEG_DEFAULT_MAX_PIXELS, crate::options::DEFAULT_MAX_PIXELS);
    }

    /// Bytes of a caller's options struct: the current layout, followed by what a newer header might add.
    #[repr(C)]
    struct NewerOptions {
        options: SegOptions,
        field_from_the_future: [u8; 64],
    }

    #[test]
    fn options_are_read_by_the_versioned_contract() {
        let mut raw = SegOptions::defaults();
        raw.tile_mode = SegTileMode::SEG_TILE_ON as i32;
        raw.max_sessions = 3;
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        let o = unsafe { SegOptions::read(&raw) }.unwrap();
        assert_eq!((o.tile_mode, o.max_sessions), (TileMode::On, 3));

        // A newer host: the bytes this build does not know are accepted when zero...
        let mut newer = NewerOptions {
            options: SegOptions { struct_size: std::mem::size_of::<NewerOptions>() as u32, ..raw },
            field_from_the_future: [0; 64],
        };
        // The pointer covers the whole struct its struct_size declares, as a host's does.
        let p = |n: &NewerOptions| (n as *const NewerOptions).cast::<SegOptions>();
        // SAFETY: `p` points to the bytes struct_size declares; no strings.
        assert_eq!(unsafe { SegOptions::read(p(&newer)) }.unwrap().max_sessions, 3);
        // ... and refused, naming the offset, when the host set one of them.
        newer.field_from_the_future[3] = 1;
        // SAFETY: as above.
        let e = unsafe { SegOptions::read(p(&newer)) }.unwrap_err();
        let offset = std::mem::size_of::<SegOptions>() + 3;
        assert!(e.message.contains(&format!("byte {offset} is not zero")), "{}", e.message);

        // Smaller than the layout (an older pre-release header, or a size that cuts a field): refused.
        for size in [0, 8, 123, std::mem::size_of::<SegOptions>() as u32 - 1] {
            raw.struct_size = size;
            // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
            let e = unsafe { SegOptions::read(&raw) }.unwrap_err();
            assert!(e.message.contains(&format!("SegOptions.struct_size is {size}")), "{}", e.message);
        }
        // NULL: the defaults.
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        assert_eq!(unsafe { SegOptions::read(std::ptr::null()) }.unwrap(), Options::default());
    }

    #[test]
    fn gpu_fields_are_read_and_older_layouts_take_their_defaults() {
        let dir = c"/var/cache/segrt-trt";
        let mut raw = SegOptions::defaults();
        raw.gpu_mem_limit = 1 << 30;
        raw.conv_search = SegConvSearch::SEG_CONV_SEARCH_EXHAUSTIVE as i32;
        raw.require_all_nodes = 1;
        raw.trt_cache_dir = dir.as_ptr();
        raw.trt_fp16 = 1;
        raw.decoder_provider = SegDecoderProvider::SEG_DECODER_PROVIDER_CPU as i32;
        raw.trt_profiles = SegTrtProfiles::SEG_TRT_PROFILES_OFF as i32;
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        let o = unsafe { SegOptions::read(&raw) }.unwrap();
        let expected = GpuOptions {
            require_all_nodes: true,
            mem_limit: 1 << 30,
            conv_search: ConvSearch::Exhaustive,
            trt_cache_dir: Some("/var/cache/segrt-trt".into()),
            trt_fp16: true,
            decoder_provider: Some(Provider::Cpu),
            trt_profiles: TrtProfiles::Off,
            openvino: Default::default(),
        };
        assert_eq!(o.gpu, expected);
        // The layout before trt_profiles: its default (AUTO) and everything else read.
        raw.struct_size = SEG_OPTIONS_SIZE_GPU as u32;
        // SAFETY: as above; the struct is larger than the size declared.
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().gpu, GpuOptions { trt_profiles: TrtProfiles::Auto, ..expected.clone() });
        raw.struct_size = size_of::<SegOptions>() as u32;
        raw.reserved3 = 1;
        // SAFETY: as above.
        assert!(unsafe { SegOptions::read(&raw) }.unwrap_err().message.contains("SegOptions.reserved3 is not 0"));
        raw.reserved3 = 0;
        raw.trt_profiles = 2;
        // SAFETY: as above.
        assert!(unsafe { SegOptions::read(&raw) }.unwrap_err().message.contains("SegOptions.trt_profiles"));
        raw.trt_profiles = 0;

        // ABI 1.0's layout, and the one 16 bytes longer (its reserved block zero): the GPU fields
        // beyond are not read.
        for size in [SEG_OPTIONS_SIZE_V1_0, SEG_OPTIONS_SIZE_V1_0 + 16] {
            raw.struct_size = size as u32;
            // SAFETY: as above; the struct is larger than the size declared.
            assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().gpu, GpuOptions::default(), "struct_size {size}");
        }
        // A non-zero reserved byte: refused naming its offset, as ABI 1.0's hosts expect of a size
        // 16 bytes beyond theirs; and in the full layout.
        raw.reserved2[1] = 0x7f;
        // SAFETY: as above.
        let e = unsafe { SegOptions::read(&raw) }.unwrap_err();
        assert!(e.message.contains(&format!("byte {} is not zero", SEG_OPTIONS_SIZE_V1_0 + 4)), "{}", e.message);
        raw.struct_size = size_of::<SegOptions>() as u32;
        // SAFETY: as above.
        let e = unsafe { SegOptions::read(&raw) }.unwrap_err();
        assert!(e.message.contains("SegOptions.reserved2 is not 0"), "{}", e.message);
        // Sizes between the layouts cut a field.
        raw.reserved2 = [0; 4];
        raw.struct_size = (SEG_OPTIONS_SIZE_V1_0 + 8) as u32;
        // SAFETY: as above.
        assert!(unsafe { SegOptions::read(&raw) }.unwrap_err().message.contains("ends inside a field"));

        let mut raw = SegOptions::defaults();
        raw.conv_search = 9;
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        let e = unsafe { SegOptions::read(&raw) }.unwrap_err();
        assert!(e.message.contains("SegOptions.conv_search") && e.message.contains('9'), "{}", e.message);
    }

    #[test]
    fn option_values_are_checked_and_messages_name_the_c_field() {
        let mut raw = SegOptions::defaults();
        raw.size_multiple = -1;
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        assert!(unsafe { SegOptions::read(&raw) }.unwrap_err().message.contains("SegOptions.size_multiple is -1"));
        let mut raw = SegOptions::defaults();
        raw.threshold = 2.0;
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        let e = unsafe { SegOptions::read(&raw) }.unwrap_err();
        assert!(e.message.starts_with("SegOptions: threshold 2"), "{}", e.message);
        let mut raw = SegOptions::defaults();
        raw.max_memory_bytes = 0; // 0 means the default, not "no memory"
                                  // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().max_memory_bytes, crate::options::DEFAULT_MAX_MEMORY_BYTES);
    }

    #[test]
    fn cache_options_are_read_and_checked() {
        let dir = c"/tmp/segrt cache";
        let mut raw = SegOptions::defaults();
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().cache, CacheMode::Off);
        raw.cache_mode = SegCacheMode::SEG_CACHE_DIR as i32;
        raw.cache_dir = dir.as_ptr();
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().cache, CacheMode::Dir("/tmp/segrt cache".into()));
        raw.cache_mode = SegCacheMode::SEG_CACHE_BESIDE_MODEL as i32;
        raw.cache_dir = std::ptr::null();
        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        assert_eq!(unsafe { SegOptions::read(&raw) }.unwrap().cache, CacheMode::BesideModel);

        // SAFETY: a live local struct whose strings are NULL or NUL-terminated literals.
        let refused = |mode: i32, dir: *const c_char| unsafe {
            let raw = SegOptions { cache_mode: mode, cache_dir: dir, ..SegOptions::defaults() };
            SegOptions::read(&raw).unwrap_err()
        };
        let e = refused(7, std::ptr::null());
        assert!(e.message.contains("SegOptions.cache_mode") && e.message.contains("7"), "{}", e.message);
        let e = refused(SegCacheMode::SEG_CACHE_DIR as i32, std::ptr::null());
        assert!(e.message.contains("cache_dir is NULL"), "{}", e.message);
        let e = refused(SegCacheMode::SEG_CACHE_DIR as i32, c"".as_ptr());
        assert!(e.message.contains("cache_dir is empty"), "{}", e.message);
        let e = refused(SegCacheMode::SEG_CACHE_OFF as i32, dir.as_ptr());
        assert!(e.message.contains("not SEG_CACHE_DIR"), "{}", e.message);
    }
}
