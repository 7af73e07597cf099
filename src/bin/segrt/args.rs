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

/// What happens to ONNX Runtime's working buffers after each run (see docs/src/guide/threads-and-memory.md).
#[derive(clap::Args, Clone)]
pub struct ArenaArgs {
    /// After each run, give ONNX Runtime's working buffers back (release) or keep them for the next
    /// (keep); auto: the image encoders release, clicks and UNet runs keep
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
