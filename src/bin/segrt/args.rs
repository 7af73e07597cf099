//! Flags and values several subcommands share: a UNet model's normalisation and output, the model
//! cache, counts, number lists and the execution provider.

use std::path::PathBuf;

use segrt::options::Provider;
use segrt::Options;

use crate::CliResult;

/// How a UNet model's input is normalised and which of its outputs is read.
#[derive(clap::Args, Clone, Default, Debug, PartialEq)]
pub struct ModelArgs {
    /// Pixel scale S in (v * S - mean) / std, v = 0..255: a number, or a fraction such as 1/255
    /// [default: 1/255, or the model's metadata]
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub scale: Option<String>,
    /// Per-channel mean subtracted after scaling (R,G,B; gray models use the first) [default: 0,0,0, or the model's metadata]
    #[arg(long, value_name = "R,G,B", allow_hyphen_values = true)]
    pub mean: Option<String>,
    /// Per-channel divisor after the mean, non-zero (R,G,B) [default: 1,1,1, or the model's metadata]
    #[arg(long, value_name = "R,G,B", allow_hyphen_values = true)]
    pub std: Option<String>,
    /// The model output to read when it has several [default: the first float output with the
    /// input's height and width]
    #[arg(long, value_name = "NAME", visible_alias = "output-name")]
    pub output: Option<String>,
}

impl ModelArgs {
    /// Whether any flag was given.
    pub fn any(&self) -> bool {
        self.scale.is_some() || self.mean.is_some() || self.std.is_some() || self.output.is_some()
    }

    /// Sets the options' normalisation and output from the flags. Any of --scale/--mean/--std makes
    /// the normalisation the caller's: flags left out take segrt's defaults, not the model's metadata.
    pub fn apply(&self, options: &mut Options) -> CliResult {
        use segrt::unet::normalisation::{parse_scale, parse_three};
        if let Some(s) = &self.scale {
            options.scale = parse_scale(s).map_err(|e| format!("--scale '{s}': {e}"))?;
        }
        if let Some(m) = &self.mean {
            options.mean = parse_three(m, false).map_err(|e| format!("--mean '{m}': {e}"))?;
        }
        if let Some(d) = &self.std {
            options.std = parse_three(d, true).map_err(|e| format!("--std '{d}': {e}"))?;
        }
        options.explicit_normalisation |= self.scale.is_some() || self.mean.is_some() || self.std.is_some();
        if let Some(name) = &self.output {
            if name.is_empty() {
                return Err("--output: give the name of one of the model's outputs (segrt info MODEL lists them)".into());
            }
            options.output_name = Some(name.clone());
        }
        Ok(())
    }
}

/// Where the optimised model is cached between runs (see docs/src/guide/model-cache.md).
#[derive(clap::Args, Clone)]
pub struct CacheArgs {
    /// Cache ONNX Runtime's optimised model in this folder (created if missing): later starts skip the optimiser
    #[arg(long, value_name = "DIR", conflicts_with = "cache")]
    cache_dir: Option<PathBuf>,
    /// Cache the optimised model in a folder `segrt-cache` next to the model file
    #[arg(long)]
    cache: bool,
}

impl CacheArgs {
    pub fn mode(&self) -> segrt::options::CacheMode {
        use segrt::options::CacheMode;
        match (&self.cache_dir, self.cache) {
            // The library takes absolute folders only; on the command line a relative one means
            // the working directory, as for every other path.
            (Some(dir), _) => CacheMode::Dir(std::path::absolute(dir).unwrap_or_else(|_| dir.clone())),
            (None, true) => CacheMode::BesideModel,
            (None, false) => CacheMode::Off,
        }
    }
}

/// GPU provider settings (see docs/src/guide/execution-providers.md).
#[derive(clap::Args, Clone)]
pub struct GpuArgs {
    /// Most MiB the CUDA provider's memory arena may hold on the GPU (0 = no limit)
    #[arg(long, value_name = "MIB", default_value_t = 0)]
    gpu_mem_limit: u64,
    /// cuDNN convolution algorithm search: auto (= heuristic), heuristic, exhaustive, default
    #[arg(long, value_enum, default_value_t = ConvSearchArg::Auto)]
    conv_search: ConvSearchArg,
    /// Fail (or with --fallback run on the CPU) when ONNX Runtime places any node on the CPU
    #[arg(long)]
    require_all_nodes: bool,
    /// Folder for TensorRT's engine and timing caches (built once, loaded at later starts)
    #[arg(long, value_name = "DIR")]
    trt_cache: Option<PathBuf>,
    /// Let TensorRT build FP16 engines
    #[arg(long)]
    trt_fp16: bool,
    /// Run a SAM2 prompt decoder (and a tracker's mask decoder and memory encoder) on this provider
    /// instead of --provider's: cpu, cuda, tensorrt, directml, openvino (the device is --provider's)
    #[arg(long, value_name = "PROVIDER", value_parser = parse_decoder_provider)]
    decoder_provider: Option<Provider>,
    /// TensorRT shape profiles: auto (derived from the model's dynamic axes and the sizes segrt feeds
    /// them, so engines are built at start) or off (engines built at first runs, again per new shape)
    #[arg(long, value_enum, default_value_t = TrtProfilesArg::Auto)]
    trt_profiles: TrtProfilesArg,
    /// OpenVINO device: CPU, GPU, GPU.<n>, NPU, AUTO, AUTO:<devices> (e.g. AUTO:GPU,CPU)
    #[arg(long, value_name = "DEVICE", default_value = "CPU", value_parser = segrt::engine::providers::openvino::Device::parse)]
    ov_device: segrt::engine::providers::openvino::Device,
    /// OpenVINO precision hint: fp32, fp16 (GPU/NPU), accuracy (the model's own); default the device's
    #[arg(long, value_enum, value_name = "PRECISION")]
    ov_precision: Option<OvPrecisionArg>,
    /// Folder where OpenVINO keeps compiled models, so that a second start skips compiling (absolute path)
    #[arg(long, value_name = "DIR")]
    ov_cache: Option<std::path::PathBuf>,
    /// OpenVINO's inference threads (default: OpenVINO's, a thread per core)
    #[arg(long, value_name = "N")]
    ov_threads: Option<usize>,
    /// OpenVINO's parallel inference streams (1: one image at a time, the least latency)
    #[arg(long, value_name = "N")]
    ov_streams: Option<u8>,
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum OvPrecisionArg {
    Fp32,
    Fp16,
    Accuracy,
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum TrtProfilesArg {
    Auto,
    Off,
}

fn parse_decoder_provider(s: &str) -> Result<Provider, String> {
    match parse_provider(s) {
        Ok((provider, _)) if !s.contains(':') => Ok(provider),
        Ok(_) => Err("give the provider's name only: the decoder runs on --provider's device".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Where the models run: the execution provider, what happens when it cannot start, its settings.
#[derive(clap::Args, Clone)]
pub struct SessionArgs {
    /// Execution provider: cpu, cuda[:ID], tensorrt[:ID], directml[:ID], openvino
    #[arg(long, default_value = "cpu")]
    provider: String,
    /// Run on the CPU when the provider cannot start (a warning gives the reason, as does "fallback_reason" in the session info), instead of failing
    #[arg(long)]
    fallback: bool,
    #[command(flatten)]
    gpu: GpuArgs,
}

/// A warning for each part that fell back to the CPU (`--fallback`), with the reason, and under
/// TensorRT the shape profile each part got: `part` is the sentence's subject and verb ("the decoder
/// runs").
pub fn warn_fallbacks(parts: &[(&str, &segrt::engine::ProviderReport)]) {
    for (part, report) in parts {
        if let Some(reason) = &report.fallback_reason {
            note!("warning: {part} on the CPU: {reason}");
        }
        note_trt_profile(part, report);
    }
}

/// Under TensorRT, the shape profile TensorRT was given, or why none ("the model runs with ...").
pub fn note_trt_profile(part: &str, report: &segrt::engine::ProviderReport) {
    if let Some(profile) = report.tensorrt_profile.as_ref().filter(|_| report.fallback_reason.is_none()) {
        note!("{part} with TensorRT shape profile: {profile}");
    }
}

impl SessionArgs {
    /// Sets the provider, its policy and the GPU settings of `options`.
    pub fn apply(&self, options: &mut Options) -> CliResult {
        (options.provider, options.device_id) = parse_provider(&self.provider)?;
        options.provider_policy =
            if self.fallback { segrt::options::ProviderPolicy::Fallback } else { segrt::options::ProviderPolicy::Require };
        options.gpu = self.gpu.options();
        Ok(())
    }
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum ConvSearchArg {
    Auto,
    Heuristic,
    Exhaustive,
    Default,
}

impl GpuArgs {
    pub fn options(&self) -> segrt::options::GpuOptions {
        use segrt::engine::providers::openvino::{OpenVinoOptions, Precision};
        use segrt::options::{ConvSearch, GpuOptions, TrtProfiles};
        GpuOptions {
            require_all_nodes: self.require_all_nodes,
            mem_limit: self.gpu_mem_limit.saturating_mul(1 << 20),
            conv_search: match self.conv_search {
                ConvSearchArg::Auto => ConvSearch::Auto,
                ConvSearchArg::Heuristic => ConvSearch::Heuristic,
                ConvSearchArg::Exhaustive => ConvSearch::Exhaustive,
                ConvSearchArg::Default => ConvSearch::Default,
            },
            trt_cache_dir: self.trt_cache.clone(),
            trt_fp16: self.trt_fp16,
            decoder_provider: self.decoder_provider,
            trt_profiles: match self.trt_profiles {
                TrtProfilesArg::Auto => TrtProfiles::Auto,
                TrtProfilesArg::Off => TrtProfiles::Off,
            },
            openvino: OpenVinoOptions {
                device: self.ov_device.clone(),
                precision: self.ov_precision.map(|p| match p {
                    OvPrecisionArg::Fp32 => Precision::Fp32,
                    OvPrecisionArg::Fp16 => Precision::Fp16,
                    OvPrecisionArg::Accuracy => Precision::Accuracy,
                }),
                cache_dir: self.ov_cache.clone(),
                threads: self.ov_threads,
                streams: self.ov_streams,
            },
        }
    }
}

/// What happens to ONNX Runtime's working buffers after each run (see docs/src/guide/threads-and-memory.md).
#[derive(clap::Args, Clone)]
pub struct ArenaArgs {
    /// After each run, give ONNX Runtime's working buffers back (release) or keep them for the next
    /// (keep); auto: the image encoders release once the process is idle (about 2 s after the last
    /// encode), clicks and UNet runs keep
    #[arg(long, value_enum, default_value_t = Arena::Auto)]
    arena: Arena,
}

#[derive(clap::ValueEnum, Clone, Copy)]
enum Arena {
    Auto,
    Keep,
    Release,
}

impl ArenaArgs {
    pub fn policy(&self) -> segrt::options::ArenaPolicy {
        use segrt::options::ArenaPolicy;
        match self.arena {
            Arena::Auto => ArenaPolicy::Auto,
            Arena::Keep => ArenaPolicy::Keep,
            Arena::Release => ArenaPolicy::Release,
        }
    }
}

/// A count given on the command line (pixels, threads, tiles): a whole number, 0 or more.
pub fn count(s: &str) -> Result<usize, String> {
    s.trim().parse().map_err(|_| "expected a whole number, 0 or more".to_string())
}

pub fn parse_numbers(s: &str, what: &str, counts: &[usize]) -> CliResult<Vec<f32>> {
    let v: Vec<f32> = s
        .split(',')
        .map(|p| p.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{what} '{s}': not a list of numbers"))?;
    if !counts.contains(&v.len()) {
        return Err(format!(
            "{what} '{s}': expected {} comma-separated numbers",
            counts.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" or ")
        )
        .into());
    }
    Ok(v)
}

pub fn parse_provider(s: &str) -> CliResult<(Provider, i32)> {
    let (name, id) = s.split_once(':').unwrap_or((s, "0"));
    let id: i32 = id.parse().map_err(|_| format!("--provider '{s}': device id must be a number"))?;
    match name.to_ascii_lowercase().as_str() {
        "cpu" => Ok((Provider::Cpu, 0)),
        "cuda" => Ok((Provider::Cuda, id)),
        "tensorrt" => Ok((Provider::TensorRt, id)),
        "directml" => Ok((Provider::DirectMl, id)),
        "openvino" => Ok((Provider::OpenVino, 0)),
        _ => {
            Err(format!("--provider '{s}': expected cpu, cuda[:ID], tensorrt[:ID], directml[:ID] or openvino (see `segrt providers`)")
                .into())
        }
    }
}

/// The intensity stage (see docs/src/guide/images.md): how 16-bit and float pixels, or 8-bit ones
/// when a flag is given, become the values the model's normalisation sees.
#[derive(clap::Args, Clone, Default, Debug, PartialEq)]
pub struct IntensityArgs {
    /// Window: CENTRE,WIDTH (low = C - W/2, high = C + W/2, in rescaled units), or a CT preset:
    /// soft-tissue (40,400), lung (-600,1500), bone (400,1800), brain (40,80); values outside are clipped
    #[arg(long, value_name = "C,W|PRESET", allow_hyphen_values = true, conflicts_with_all = ["range", "percentiles"])]
    pub window: Option<String>,
    /// Window as LOW,HIGH (MONAI a_min,a_max), or "none" to pass raw (rescaled) values through, or
    /// "min-max" for the image's own minimum and maximum
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true, conflicts_with = "percentiles")]
    pub range: Option<String>,
    /// The image's LO,HI percentiles as the window, e.g. 0.5,99.5
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub percentiles: Option<String>,
    /// Modality rescale before the window: v = stored * SLOPE + INTERCEPT (DICOM RescaleSlope, RescaleIntercept)
    #[arg(long, value_name = "SLOPE,INTERCEPT", allow_hyphen_values = true)]
    pub rescale: Option<String>,
    /// Used bits of 16-bit pixels (e.g. 12); a value above 2^N - 1 is an error [default: all]
    #[arg(long, value_name = "N", value_parser = count)]
    pub bits: Option<usize>,
    /// Output range of the window [default: 0,255, so --scale/--mean/--std apply as to 8-bit pixels]
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub out_range: Option<String>,
}

impl IntensityArgs {
    /// The stage the flags ask for; None when no flag is given (segrt's default stage).
    pub fn intensity(&self) -> CliResult<Option<segrt::image::intensity::Intensity>> {
        use segrt::image::intensity::{window, Intensity, Range, CT_PRESETS};
        if *self == IntensityArgs::default() {
            return Ok(None);
        }
        let pair = |s: &str, what: &str| -> CliResult<(f64, f64)> {
            let v = parse_numbers(s, what, &[2])?;
            Ok((v[0] as f64, v[1] as f64))
        };
        let mut i = Intensity::default();
        if let Some(w) = &self.window {
            i.range = match CT_PRESETS.iter().find(|p| p.0.eq_ignore_ascii_case(w.trim())) {
                Some((_, c, width)) => window(*c, *width),
                None => {
                    let (c, width) = pair(w, "--window").map_err(|e| {
                        let names: Vec<&str> = CT_PRESETS.iter().map(|p| p.0).collect();
                        format!("{e} (or one of the presets {})", names.join(", "))
                    })?;
                    window(c, width)
                }
            };
        }
        if let Some(r) = &self.range {
            i.range = match r.trim() {
                "none" => Range::None,
                "min-max" => Range::MinMax,
                _ => {
                    let (low, high) = pair(r, "--range")?;
                    Range::Window { low, high }
                }
            };
        }
        if let Some(p) = &self.percentiles {
            let (low, high) = pair(p, "--percentiles")?;
            i.range = Range::Percentiles { low, high };
        }
        if let Some(r) = &self.rescale {
            (i.slope, i.intercept) = pair(r, "--rescale")?;
        }
        if let Some(b) = self.bits {
            i.bits = b.min(u32::MAX as usize) as u32;
        }
        if let Some(o) = &self.out_range {
            (i.out_low, i.out_high) = pair(o, "--out-range")?;
        }
        i.validate().map_err(|e| e.message)?;
        Ok(Some(i))
    }
}
