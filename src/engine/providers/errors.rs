//! ONNX Runtime's execution-provider failures in plain words: what is wrong on this machine and
//! what to install, for an operator who never saw ONNX Runtime's source paths and C++ signatures.
//! ONNX Runtime's own text always follows the plain reason (a support request needs it).

use crate::options::{Options, Provider};

use super::cuda::{loaded_cuda_major, min_driver};
use super::{libraries, vendor_libraries};

/// The stage a provider failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Appending the provider to the session options (its library loads, the device is opened).
    Register,
    /// ONNX Runtime building the session (weights uploaded, kernels and engines created).
    CreateSession,
}

/// "CUDA:0 could not be initialised: <plain reason> (ONNX Runtime: <its text>)", or ONNX Runtime's
/// text alone when it says nothing segrt recognises.
pub fn provider_failure(provider: Provider, device_id: i32, stage: Stage, ort_message: &str, missing: &[String]) -> String {
    let name = provider.display_name(device_id);
    let at = match stage {
        Stage::Register => "",
        Stage::CreateSession => " (ONNX Runtime failed while creating the session on it)",
    };
    match plain_reason(provider, device_id, ort_message, missing) {
        Some(plain) => format!("{name} could not be initialised{at}: {plain} (ONNX Runtime: {})", ort_message.trim()),
        None => format!("{name} could not be initialised{at}: {}", ort_message.trim()),
    }
}

/// [`provider_failure`] of the provider `options` asked for, naming the vendor libraries segrt
/// expected beside ONNX Runtime and did not find (an error that does not say which library failed
/// to load is explained by them).
pub(crate) fn failure_of(options: &Options, stage: Stage, ort_message: &str) -> String {
    provider_failure(options.provider, options.device_id, stage, ort_message, &libraries::missing(&vendor_libraries(options.provider)))
}

/// What the message means, when segrt recognises it. `missing`: the GPU libraries segrt expected
/// beside ONNX Runtime and did not find (named when ONNX Runtime's own error does not say which).
pub fn plain_reason(provider: Provider, device_id: i32, message: &str, missing: &[String]) -> Option<String> {
    let m = message.to_ascii_lowercase();
    let has = |s: &str| m.contains(&s.to_ascii_lowercase());
    let nvidia = matches!(provider, Provider::Cuda | Provider::TensorRt);
    if has("not enabled in this build") || has("not supported in this build") {
        let build = match provider {
            Provider::Cuda | Provider::TensorRt => "the GPU build (onnxruntime-gpu)",
            Provider::DirectMl => "the DirectML build (onnxruntime-directml)",
            Provider::OpenVino => "the OpenVINO build (onnxruntime-openvino)",
            Provider::Cpu => "another build",
        };
        return Some(format!("the ONNX Runtime library segrt loaded has no {} provider: ship {build} beside segrt", provider.ort_name()));
    }
    if nvidia && (has("driver version is insufficient") || has("cuda failure 35") || has("cudaErrorInsufficientDriver")) {
        return Some(format!(
            "the NVIDIA driver on this machine is too old for CUDA {}, which this ONNX Runtime build uses: install NVIDIA driver {} or newer",
            loaded_cuda_major(),
            min_driver()
        ));
    }
    if nvidia && (has("libcuda.so.1") || has("nvcuda.dll")) {
        return Some(format!(
            "no NVIDIA driver is installed ({} not found): install NVIDIA driver {} or newer",
            if cfg!(windows) { "nvcuda.dll" } else { "libcuda.so.1" },
            min_driver()
        ));
    }
    if nvidia && (has("no cuda-capable device") || has("cuda failure 100") || has("cudaErrorNoDevice")) {
        return Some("the NVIDIA driver sees no GPU: check the GPU with nvidia-smi, and CUDA_VISIBLE_DEVICES".into());
    }
    if nvidia && (has("invalid device ordinal") || has("cuda failure 101")) {
        return Some(format!("there is no NVIDIA GPU with device_id {device_id} on this machine (nvidia-smi lists them, from 0)"));
    }
    if has("out of memory")
        || has("cuda failure 2:")
        || has("cudaErrorMemoryAllocation")
        || has("CUBLAS_STATUS_ALLOC_FAILED")
        || has("CUDNN_STATUS_ALLOC_FAILED")
        || has("E_OUTOFMEMORY")
        || has("887a0005") // DXGI_ERROR_DEVICE_REMOVED follows a GPU memory exhaustion too
        || has("Failed to allocate memory")
    {
        return Some(
            "the GPU ran out of memory: free it (other programs, other sessions), lower SegOptions.max_sessions, \
             or set SegOptions.gpu_mem_limit"
                .into(),
        );
    }
    if let Some(lib) = missing_library_in(message) {
        let what = library_kind(&lib);
        let hint = if what.contains("TensorRT") {
            if loaded_cuda_major() == 12 {
                "install TensorRT 10 for CUDA 12 and put its libraries beside ONNX Runtime"
            } else {
                "install TensorRT 10 for CUDA 13 and put its libraries beside ONNX Runtime"
            }
        } else if what.contains("driver") {
            "install the NVIDIA driver"
        } else {
            if loaded_cuda_major() == 12 {
                "put it beside ONNX Runtime (scripts/fetch-ort.sh --flavour gpu-cuda12 --with-cuda fetches the CUDA 12 and cuDNN 9.10 ones)"
            } else {
                "put it beside ONNX Runtime (scripts/fetch-ort-gpu.sh --with-cuda fetches the CUDA and cuDNN ones)"
            }
        };
        return Some(format!("{what} {lib} could not be loaded: {hint}"));
    }
    if has("cudnn") && (has("could not load") || has("unable to load") || has("CUDNN_STATUS_SUBLIBRARY")) {
        return Some("a cuDNN 9 library could not be loaded: ship every cudnn*9 file of the cuDNN 9 package beside ONNX Runtime".into());
    }
    if has("error 126") || has("LoadLibrary failed") || has("cannot open shared object file") {
        return Some(match missing {
            [] => "a library the provider needs could not be loaded (ONNX Runtime does not say which)".into(),
            list => format!("these libraries are not beside ONNX Runtime: {}", list.join(", ")),
        });
    }
    if provider == Provider::TensorRt && (has("engine") || has("nvinfer")) {
        return Some("TensorRT could not build an engine for this model on this GPU (its log lines above say which layer)".into());
    }
    if provider == Provider::OpenVino {
        if let Some(reason) = super::openvino::unsupported_model(message) {
            return Some(reason.into());
        }
    }
    if provider == Provider::DirectMl && (has("887a0004") || has("DXGI_ERROR_UNSUPPORTED") || has("dxgi")) {
        return Some("no DirectX 12 GPU is available to DirectML on this machine (update the GPU driver)".into());
    }
    None
}

/// The library a loader message names as missing: "libcublasLt.so.13: cannot open shared object
/// file" -> "libcublasLt.so.13"; "Could not load library libcudnn_cnn.so.9" -> "libcudnn_cnn.so.9".
fn missing_library_in(message: &str) -> Option<String> {
    if let Some(at) = message.find(": cannot open shared object file") {
        let before = &message[..at];
        let start = before.rfind(|c: char| c.is_whitespace() || c == '"' || c == '\'').map_or(0, |i| i + 1);
        let lib = before[start..].trim_end_matches(':');
        if !lib.is_empty() {
            return Some(lib.rsplit('/').next().unwrap_or(lib).to_string());
        }
    }
    for marker in ["Could not load library ", "Unable to load ", "could not load library "] {
        if let Some(at) = message.find(marker) {
            let rest = &message[at + marker.len()..];
            let lib: String = rest.chars().take_while(|c| !c.is_whitespace() && *c != '"').collect();
            let lib = lib.trim_end_matches(['.', ',', ';', ':']).to_string();
            if lib.contains(".so") || lib.to_ascii_lowercase().ends_with(".dll") {
                return Some(lib.rsplit(['/', '\\']).next().unwrap_or(&lib).to_string());
            }
        }
    }
    None
}

/// "the CUDA runtime library", "the cuDNN 9 library", ... for a library file name.
fn library_kind(lib: &str) -> String {
    let l = lib.to_ascii_lowercase();
    let kind = if l.starts_with("libcuda.") || l.starts_with("nvcuda") {
        "the NVIDIA driver library"
    } else if l.contains("cudnn") {
        "the cuDNN 9 library"
    } else if l.contains("nvinfer") || l.contains("nvonnxparser") {
        "the TensorRT 10 library"
    } else if l.contains("cublas") || l.contains("cudart") || l.contains("curand") || l.contains("cufft") || l.contains("nvrtc") {
        // The CUDA release the file names (libcublasLt.so.12), else the loaded build's.
        let major = super::build::cuda_major(&[lib.to_string()]).unwrap_or_else(loaded_cuda_major);
        return format!("the CUDA {major} library");
    } else if l.contains("directml") {
        "the DirectML library"
    } else {
        "the library"
    };
    kind.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::providers::cuda::CUDA13_MIN_DRIVER_LINUX;

    fn cuda(message: &str) -> String {
        provider_failure(Provider::Cuda, 0, Stage::Register, message, &[])
    }

    #[test]
    fn known_cuda_failures_are_said_in_plain_words_with_onnx_runtime_s_text_after() {
        // Seen with the GPU wheel on a machine with Debian's 535 driver library and no GPU.
        let old = "/onnxruntime_src/onnxruntime/core/providers/cuda/cuda_provider_options.h:187 Parse Failed to parse provider \
                   option \"device_id\": CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0";
        let s = cuda(old);
        assert!(s.starts_with("CUDA:0 could not be initialised: the NVIDIA driver on this machine is too old for CUDA 13"), "{s}");
        assert!(s.contains(CUDA13_MIN_DRIVER_LINUX) && s.ends_with("GPU=0)"), "{s}");
        let s = cuda("Failed to load library libonnxruntime_providers_cuda.so with error: libcuda.so.1: cannot open shared object file: No such file or directory");
        assert!(s.contains("no NVIDIA driver is installed (libcuda.so.1 not found)"), "{s}");
        let s = cuda("... with error: libcublasLt.so.13: cannot open shared object file: No such file or directory");
        assert!(s.contains("the CUDA 13 library libcublasLt.so.13 could not be loaded"), "{s}");
        // A CUDA 12 build's library is named for its own CUDA release.
        let s = cuda("... with error: libcufft.so.11: cannot open shared object file: No such file or directory");
        assert!(s.contains("library libcufft.so.11 could not be loaded"), "{s}");
        let s = cuda("... with error: libcublasLt.so.12: cannot open shared object file: No such file or directory");
        assert!(s.contains("the CUDA 12 library libcublasLt.so.12 could not be loaded"), "{s}");
        let s = provider_failure(
            Provider::Cuda,
            1,
            Stage::CreateSession,
            "CUDA failure 2: out of memory ; GPU=1 ; file=cuda_allocator.cc ; expr=cudaMalloc((void**)&p, size);",
            &[],
        );
        assert!(s.contains("(ONNX Runtime failed while creating the session on it): the GPU ran out of memory"), "{s}");
        let s = cuda("Could not load library libcudnn_cnn.so.9. Error: libcudnn_cnn.so.9: cannot open shared object file");
        assert!(s.contains("the cuDNN 9 library libcudnn_cnn.so.9 could not be loaded"), "{s}");
        let s = provider_failure(Provider::TensorRt, 0, Stage::Register, "libnvinfer.so.10: cannot open shared object file", &[]);
        assert!(s.contains("the TensorRT 10 library libnvinfer.so.10"), "{s}");
        let s = cuda("CUDA failure 101: invalid device ordinal");
        assert!(s.contains("device_id 0"), "{s}");
    }

    #[test]
    fn a_windows_load_failure_names_the_files_segrt_did_not_find() {
        let msg = "LoadLibrary failed with error 126 \"\" when trying to load \"C:\\app\\onnxruntime_providers_cuda.dll\"";
        let s = provider_failure(Provider::Cuda, 0, Stage::Register, msg, &["cudnn64_9.dll".into(), "cublasLt64_13.dll".into()]);
        assert!(s.contains("these libraries are not beside ONNX Runtime: cudnn64_9.dll, cublasLt64_13.dll"), "{s}");
    }

    #[test]
    fn unknown_messages_are_passed_on_as_they_are() {
        assert_eq!(cuda("something new"), "CUDA:0 could not be initialised: something new");
        let s = provider_failure(Provider::Cuda, 0, Stage::Register, "CUDA execution provider is not enabled in this build.", &[]);
        assert!(s.contains("has no CUDAExecutionProvider provider: ship the GPU build (onnxruntime-gpu)"), "{s}");
    }
}
