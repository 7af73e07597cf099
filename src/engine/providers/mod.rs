//! The execution providers: everything segrt knows about running a model somewhere other than
//! ONNX Runtime's own CPU provider, modelled on the `ort` crate's `ep` folder: a module per provider
//! owning what it is told, the libraries it needs and its own knowledge, and beside them what the
//! providers share.
//!
//! | where | what |
//! |---|---|
//! | `cuda`, `tensorrt/`, `directml`, `openvino` | one module per provider: `dispatch` (the provider as ONNX Runtime is given it), `provider_options` (its keys, from the user's `options::GpuOptions`), its vendor library list (`*_LIBRARIES`), its own checks and constants (CUDA's driver, TensorRT's cache folder and shape profiles) |
//! | `libraries` | loading a provider's vendor libraries (`vendor_libraries`, below) by absolute path before it is registered; which are missing |
//! | `fallback` | the provider policy: refuse, or run on the CPU with the reason; `require_all_nodes` |
//! | `errors` | ONNX Runtime's provider failures in plain words |
//! | `per_model` | what segrt derives per model for its provider (TensorRT's shape profile), passed beside the user's options |
//! | `report` | what a session asked for and got (`ProviderReport`) |
//! | `placement` | where ONNX Runtime placed a session's nodes |
//! | `probe` | which providers the loaded build offers and which initialise here |
//! | `build` | which ONNX Runtime build was loaded (CPU, CUDA 12/13, DirectML, OpenVINO), from its providers and its CUDA provider's links |
//!
//! A new provider option: the setting in `options::GpuOptions` (plain data, validated there), its
//! ONNX Runtime key in that provider's `provider_options` (with a unit test of the keys below), then
//! the C field (`ffi::options`) and the CLI flag (`bin/segrt/args.rs`).

pub mod build;
pub mod cuda;
pub mod directml;
pub mod errors;
pub mod fallback;
pub mod libraries;
pub mod openvino;
pub mod per_model;
pub mod placement;
pub mod probe;
pub mod report;
pub mod tensorrt;

use ort::ep::ExecutionProviderDispatch;

use crate::error::Result;
use crate::options::{Options, Provider};

pub use libraries::GpuLibrary;
pub use per_model::PerModel;
pub use probe::{probe_providers, ProviderProbe};
pub use report::ProviderReport;

/// The execution providers ONNX Runtime is given for `options.provider`, in order (`None`: the CPU,
/// ONNX Runtime's own). Each fails loudly when it cannot be registered (`error_on_failure`): the
/// provider policy then decides, not ort's silent fallback.
pub(crate) fn dispatch(options: &Options, per_model: &PerModel) -> Result<Option<Vec<ExecutionProviderDispatch>>> {
    Ok(match options.provider {
        Provider::Cpu => None,
        Provider::Cuda => Some(vec![cuda::dispatch(options)]),
        Provider::TensorRt => Some(tensorrt::dispatch(options, per_model)?),
        Provider::DirectMl => Some(vec![directml::dispatch(options)]),
        Provider::OpenVino => Some(vec![openvino::dispatch(options)?]),
    })
}

/// The libraries segrt preloads for `provider`, in loading order (TensorRT runs behind CUDA: both lists).
pub fn vendor_libraries(provider: Provider) -> Vec<GpuLibrary> {
    match provider {
        Provider::Cuda => cuda::libraries().to_vec(),
        Provider::TensorRt => cuda::libraries().iter().chain(tensorrt::TENSORRT_LIBRARIES).copied().collect(),
        Provider::DirectMl => directml::DIRECTML_LIBRARIES.to_vec(),
        Provider::Cpu | Provider::OpenVino => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::options::{ConvSearch, GpuOptions};

    fn keys(list: &[(&'static str, String)]) -> Vec<String> {
        list.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn gpu_options_become_onnx_runtime_s_provider_options() {
        let mut o = Options { provider: Provider::Cuda, device_id: 1, ..Options::default() };
        // segrt's default search is cuDNN's heuristics, not ONNX Runtime's exhaustive search.
        assert_eq!(keys(&cuda::provider_options(&o)), ["device_id=1", "cudnn_conv_algo_search=HEURISTIC"]);
        assert_eq!(keys(&tensorrt::provider_options(&o)), ["device_id=1"]);

        o.gpu = GpuOptions {
            mem_limit: 2 << 30,
            conv_search: ConvSearch::Exhaustive,
            trt_cache_dir: Some(PathBuf::from("/var/cache/segrt/trt")),
            trt_fp16: true,
            ..GpuOptions::default()
        };
        assert_eq!(
            keys(&cuda::provider_options(&o)),
            ["device_id=1", "cudnn_conv_algo_search=EXHAUSTIVE", "gpu_mem_limit=2147483648", "arena_extend_strategy=kSameAsRequested"]
        );
        assert_eq!(
            keys(&tensorrt::provider_options(&o)),
            [
                "device_id=1",
                "trt_fp16_enable=1",
                "trt_engine_cache_enable=1",
                "trt_engine_cache_path=/var/cache/segrt/trt",
                "trt_timing_cache_enable=1",
                "trt_timing_cache_path=/var/cache/segrt/trt"
            ]
        );
        o.gpu.conv_search = ConvSearch::Default;
        assert!(keys(&cuda::provider_options(&o)).contains(&"cudnn_conv_algo_search=DEFAULT".to_string()));
    }
}
