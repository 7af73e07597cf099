//! NVIDIA TensorRT (the onnxruntime-gpu build plus TensorRT 10), with CUDA behind it for what
//! TensorRT does not run: what its provider is told (device, FP16, engine caches, the shape profile
//! segrt derives for the model), the libraries it needs, its cache folder and its profiles.

pub mod narrow_path;
pub mod profile;

use std::path::Path;

use ort::ep::{self, ArbitrarilyConfigurableExecutionProvider, ExecutionProviderDispatch};
use ort::session::Session;

use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::options::{Options, Provider, TrtProfiles};

use super::libraries::{lib, optional, GpuLibrary};
use super::{cuda, PerModel, ProviderReport};
use profile::ShapeProfile;

/// TensorRT, then CUDA behind it: what TensorRT cannot run goes to the GPU, not to the CPU.
pub(crate) fn dispatch(options: &Options, per_model: &PerModel) -> Result<Vec<ExecutionProviderDispatch>> {
    let mut trt = ep::TensorRT::default();
    let profile = per_model.trt_profile_given(options).map(ShapeProfile::provider_options).unwrap_or_default();
    for (key, value) in provider_options(&with_narrow_cache(options)?).into_iter().chain(profile) {
        trt = trt.with_arbitrary_config(key, value);
    }
    Ok(vec![trt.build().error_on_failure(), cuda::dispatch(options)])
}

/// The TensorRT provider's options, as ONNX Runtime's keys: the device, FP16, and with a cache
/// folder the engine and timing caches (built once, loaded at later starts). The shape profile of the
/// model follows them (`dispatch`).
pub fn provider_options(options: &Options) -> Vec<(&'static str, String)> {
    let mut list = vec![("device_id", options.device_id.to_string())];
    if options.gpu.trt_fp16 {
        list.push(("trt_fp16_enable", "1".to_string()));
    }
    if let Some(dir) = &options.gpu.trt_cache_dir {
        let dir = dir.to_string_lossy().into_owned();
        list.push(("trt_engine_cache_enable", "1".to_string()));
        list.push(("trt_engine_cache_path", dir.clone()));
        list.push(("trt_timing_cache_enable", "1".to_string()));
        list.push(("trt_timing_cache_path", dir));
    }
    list
}

/// Under TensorRT, what the session report says of its shape profile: the one given, or why none
/// (also logged).
pub(crate) fn profile_report(options: &Options, per_model: &PerModel) -> Option<String> {
    let text = (options.provider == Provider::TensorRt).then(|| match options.gpu.trt_profiles {
        TrtProfiles::Off => "none: trt_profiles is OFF; TensorRT builds engines as runs come".to_string(),
        TrtProfiles::Auto => per_model.trt_profile.describe(),
    })?;
    crate::log::emit(LogLevel::Info, &format!("TensorRT shape profile: {text}"));
    Some(text)
}

/// What ONNX Runtime's TensorRT provider says when a profile leaves out a dynamic input of a part of
/// the graph it runs (where ONNX Runtime split the model between TensorRT and CUDA, a part's inputs
/// can be tensors inside the model, which no profile of segrt's names).
const PROFILE_INCOMPLETE: &str = "provide all the dynamic shape inputs with associated profiles";

/// Whether TensorRT refused segrt's profile for this model: it ran only parts of it, whose inputs the
/// profile cannot name (the session fell back, or failed, with `PROFILE_INCOMPLETE`).
pub(crate) fn refused_the_profile(built: &Result<(Session, ProviderReport)>) -> bool {
    match built {
        Ok((_, report)) => report.fallback_reason.as_deref().is_some_and(|r| r.contains(PROFILE_INCOMPLETE)),
        Err(e) => e.message.contains(PROFILE_INCOMPLETE),
    }
}

/// `options` with the TensorRT cache folder created and named as ONNX Runtime's TensorRT provider can
/// open it (see `narrow_path`: on Windows a Unicode or deep folder goes by its short name).
fn with_narrow_cache(options: &Options) -> Result<Options> {
    let mut options = options.clone();
    if let Some(dir) = &options.gpu.trt_cache_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::new(ErrorKind::InvalidArgument, format!("cannot create the TensorRT cache folder '{}': {e}", dir.display()))
        })?;
        let narrow = narrow_path::for_narrow_api(dir, "the TensorRT cache folder")?;
        let how = if Path::new(&narrow) == dir.as_path() { String::new() } else { format!(" (the short name of '{}')", dir.display()) };
        crate::log::emit(LogLevel::Info, &format!("TensorRT engine and timing caches in '{narrow}'{how}"));
        options.gpu.trt_cache_dir = Some(narrow.into());
    }
    Ok(options)
}

/// TensorRT 10, which the TensorRT provider of onnxruntime-gpu 1.31 links: nvinfer and nvonnxparser
/// (its NEEDED entries / import table); it opens the plugin library itself.
#[cfg(not(windows))]
pub const TENSORRT_LIBRARIES: &[GpuLibrary] = &[lib("libnvinfer.so.10"), optional("libnvinfer_plugin.so.10"), lib("libnvonnxparser.so.10")];
#[cfg(windows)]
pub const TENSORRT_LIBRARIES: &[GpuLibrary] = &[lib("nvinfer_10.dll"), optional("nvinfer_plugin_10.dll"), lib("nvonnxparser_10.dll")];
