//! NVIDIA CUDA (the onnxruntime-gpu builds: 1.31 for CUDA 13, 1.24 for CUDA 12, both with cuDNN 9):
//! what its provider is told, the libraries each build needs, the driver it needs, and whether the
//! GPU is one the loaded build has kernels for (`archs`, read through the driver: `driver`).

pub mod archs;
pub mod driver;

use ort::ep::{self, ArbitrarilyConfigurableExecutionProvider, ExecutionProviderDispatch};

use crate::engine::providers::build::Flavour;
use crate::options::{ConvSearch, Options};
use crate::runtime;

use super::libraries::{lib, optional, GpuLibrary};

/// The oldest NVIDIA driver that runs CUDA 13.0, which onnxruntime-gpu 1.31 is built against
/// (NVIDIA's CUDA 13.0 release notes, table 3: Linux >= 580.65.06, Windows >= 580.88).
pub const CUDA13_MIN_DRIVER_LINUX: &str = "580.65.06";
pub const CUDA13_MIN_DRIVER_WINDOWS: &str = "580.88";
/// The oldest NVIDIA driver that runs CUDA 12.x libraries (minor-version compatibility, NVIDIA's
/// CUDA 12 release notes, table 3: Linux >= 525.60.13, Windows >= 527.41); onnxruntime-gpu 1.24 is
/// built with CUDA 12.8.
pub const CUDA12_MIN_DRIVER_LINUX: &str = "525.60.13";
pub const CUDA12_MIN_DRIVER_WINDOWS: &str = "527.41";

/// The CUDA major version of the loaded build: its CUDA provider's links, else what its release
/// number says (onnxruntime-gpu 1.24-1.2x: CUDA 12; 1.31: CUDA 13).
pub fn loaded_cuda_major() -> u32 {
    match runtime::loaded() {
        Some(rt) => match rt.build {
            Flavour::Cuda { cuda_major: Some(m) } => m,
            _ if rt.release.minor < 31 => 12,
            _ => 13,
        },
        None => 13,
    }
}

/// The oldest NVIDIA driver for the loaded build's CUDA.
pub fn min_driver() -> &'static str {
    match (loaded_cuda_major(), cfg!(windows)) {
        (12, false) => CUDA12_MIN_DRIVER_LINUX,
        (12, true) => CUDA12_MIN_DRIVER_WINDOWS,
        (_, false) => CUDA13_MIN_DRIVER_LINUX,
        (_, true) => CUDA13_MIN_DRIVER_WINDOWS,
    }
}

/// The CUDA vendor libraries of the loaded build.
pub fn libraries() -> &'static [GpuLibrary] {
    if loaded_cuda_major() == 12 {
        CUDA12_LIBRARIES
    } else {
        CUDA_LIBRARIES
    }
}

/// Whether the GPU `options.device_id` is one the loaded CUDA build has kernels for, read through
/// the NVIDIA driver before the provider is registered: Err names the build that would run it (a
/// GTX 10xx under the CUDA 13 build gets the CUDA 12 build, not a driver upgrade that would not
/// help). Ok when it fits, or when the driver or the build cannot be read: ONNX Runtime's own
/// error then says what is wrong, as before.
pub fn check_gpu(options: &Options) -> Result<(), String> {
    let Some(rt) = runtime::loaded() else { return Ok(()) };
    let os = if cfg!(windows) { archs::Os::Windows } else { archs::Os::Linux };
    let Some(build) = archs::build_for(&rt.version, os) else { return Ok(()) };
    let gpu = match driver::read_gpu(None, options.device_id) {
        Ok(gpu) => gpu,
        Err(e) => {
            crate::log::emit(crate::log::LogLevel::Info, &format!("the GPU's compute capability could not be read: {e}"));
            return Ok(());
        }
    };
    let (major, minor) = gpu.compute_capability;
    archs::check(build, &gpu.name, archs::ComputeCapability::new(major, minor)).map(|_| ())
}

/// The CUDA provider, registered alone or behind TensorRT.
pub(crate) fn dispatch(options: &Options) -> ExecutionProviderDispatch {
    let mut ep = ep::CUDA::default();
    for (key, value) in provider_options(options) {
        ep = ep.with_arbitrary_config(key, value);
    }
    // error_on_failure: ort's default is to log and silently run on the CPU.
    ep.build().error_on_failure()
}

/// The CUDA provider's options (CUDA alone, and behind TensorRT), as ONNX Runtime's keys.
pub fn provider_options(options: &Options) -> Vec<(&'static str, String)> {
    let search = match options.gpu.conv_search {
        ConvSearch::Auto | ConvSearch::Heuristic => "HEURISTIC",
        ConvSearch::Exhaustive => "EXHAUSTIVE",
        ConvSearch::Default => "DEFAULT",
    };
    let mut list = vec![("device_id", options.device_id.to_string()), ("cudnn_conv_algo_search", search.to_string())];
    if options.gpu.mem_limit > 0 {
        list.push(("gpu_mem_limit", options.gpu.mem_limit.to_string()));
        // Grow the arena by what a request needs, not by doubling: a doubling could cross the limit
        // long before the memory is used.
        list.push(("arena_extend_strategy", "kSameAsRequested".to_string()));
    }
    list
}

/// The CUDA 12 and cuDNN 9 libraries of onnxruntime-gpu 1.24's CUDA provider: its NEEDED entries
/// (cuFFT 11 among them, not optional here) and ONNX Runtime 1.24's own preload list.
#[cfg(not(windows))]
pub const CUDA12_LIBRARIES: &[GpuLibrary] = &[
    lib("libcudart.so.12"),
    lib("libcublasLt.so.12"),
    lib("libcublas.so.12"),
    optional("libnvrtc.so.12"),
    lib("libcurand.so.10"),
    lib("libcufft.so.11"),
    lib("libcudnn.so.9"),
];
/// As on Linux; the import table of 1.24.4's provider DLL names cuFFT 11, and ONNX Runtime 1.24's
/// Windows list has no cudnn_engines_tensor_ir64_9.dll (cuDNN 9.10 has none).
#[cfg(windows)]
pub const CUDA12_LIBRARIES: &[GpuLibrary] = &[
    lib("cudart64_12.dll"),
    lib("cublasLt64_12.dll"),
    lib("cublas64_12.dll"),
    optional("curand64_10.dll"),
    lib("cufft64_11.dll"),
    lib("cudnn_graph64_9.dll"),
    lib("cudnn_engines_runtime_compiled64_9.dll"),
    lib("cudnn_engines_precompiled64_9.dll"),
    lib("cudnn_heuristic64_9.dll"),
    lib("cudnn_ops64_9.dll"),
    lib("cudnn_adv64_9.dll"),
    lib("cudnn64_9.dll"),
];

/// The CUDA 13 and cuDNN 9 libraries of onnxruntime-gpu 1.31's CUDA provider: every file of ONNX
/// Runtime's own `preload_dlls` list (onnxruntime/__init__.py, `_get_nvidia_dll_paths` for CUDA 13),
/// dependencies first (the CUDA runtime, then cuBLASLt before cuBLAS, as ONNX Runtime orders them).
/// tests/gpu checks this list against ONNX Runtime's and the provider libraries' NEEDED entries.
#[cfg(not(windows))]
pub const CUDA_LIBRARIES: &[GpuLibrary] = &[
    lib("libcudart.so.13"),
    lib("libcublasLt.so.13"),
    lib("libcublas.so.13"),
    optional("libnvrtc.so.13"),
    lib("libcurand.so.10"),
    optional("libcufft.so.12"),
    // On Linux cuDNN loads its sub-libraries itself, from its own folder (ONNX Runtime does not
    // preload them either).
    lib("libcudnn.so.9"),
];
/// On Windows cuDNN 9 loads its sub-DLLs by name at its first use, which a host's PATH may resolve
/// to another copy or not at all: ONNX Runtime's list preloads every one of them. cuRAND is optional
/// here: neither ONNX Runtime's Windows list nor the import table of its CUDA provider DLL names it.
#[cfg(windows)]
pub const CUDA_LIBRARIES: &[GpuLibrary] = &[
    lib("cudart64_13.dll"),
    lib("cublasLt64_13.dll"),
    lib("cublas64_13.dll"),
    optional("curand64_10.dll"),
    optional("cufft64_12.dll"),
    lib("cudnn_graph64_9.dll"),
    lib("cudnn_engines_runtime_compiled64_9.dll"),
    lib("cudnn_engines_precompiled64_9.dll"),
    lib("cudnn_heuristic64_9.dll"),
    lib("cudnn_ops64_9.dll"),
    lib("cudnn_adv64_9.dll"),
    lib("cudnn64_9.dll"),
    lib("cudnn_engines_tensor_ir64_9.dll"),
];
