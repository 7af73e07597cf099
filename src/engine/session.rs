//! Building one ONNX Runtime session from model bytes: threads, the execution provider with an
//! explicit fallback policy, and ONNX Runtime's errors translated into segrt's.

use std::io::Read;
use std::path::Path;

use ort::ep;
use ort::session::builder::PrepackedWeights;
use ort::session::Session;

use crate::alloc;
use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::options::{Options, Provider, ProviderPolicy};
use crate::runtime;

use super::providers::ProviderReport;

/// Reads a model file: only a regular file (never a device, a pipe or a folder, which could block
/// or never end), no larger than `max_bytes`, read with that bound.
pub fn read_model_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let unreadable = |e: std::io::Error| Error::new(ErrorKind::ModelNotFound, format!("cannot read model file '{}': {e}", path.display()));
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a folder" } else { "not a regular file (a device, pipe or socket)" };
        return Err(Error::new(ErrorKind::ModelNotFound, format!("cannot read model file '{}': it is {what}", path.display())));
    }
    check_model_size(meta.len(), max_bytes).map_err(|e| e.context(format!("model file '{}'", path.display())))?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(meta.len() as usize).map_err(|_| alloc::out_of_memory(meta.len(), "the model file"))?;
    // The file may grow between the size check and the read: read one byte past the bound at most.
    std::fs::File::open(path).and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes)).map_err(unreadable)?;
    check_model_size(bytes.len() as u64, max_bytes).map_err(|e| e.context(format!("model file '{}'", path.display())))?;
    Ok(bytes)
}

/// A copy of in-memory model bytes, after checking their length against `max_bytes`.
pub fn read_model_bytes(model: &[u8], max_bytes: u64) -> Result<Vec<u8>> {
    check_model_size(model.len() as u64, max_bytes)?;
    alloc::copy_of(model, "the model")
}

fn check_model_size(len: u64, max_bytes: u64) -> Result<()> {
    if len == 0 {
        return Err(Error::new(ErrorKind::ModelInvalid, "the model is empty (0 bytes)"));
    }
    if len > max_bytes {
        return Err(Error::new(
            ErrorKind::ModelInvalid,
            format!("the model has {len} bytes, more than the limit of {max_bytes} (max_model_bytes)"),
        ));
    }
    Ok(())
}

/// Builds a session from model bytes on the calling thread. Sessions built with the same
/// `prepacked` container share their pre-packed weights (the sessions of one handle).
pub fn build_session(model: &[u8], options: &Options, prepacked: Option<&PrepackedWeights>) -> Result<(Session, ProviderReport)> {
    if model.is_empty() {
        return Err(Error::new(ErrorKind::ModelInvalid, "the model is empty (0 bytes)"));
    }
    let env = runtime::environment(options.ort_path.as_deref())?;
    let ort_err = |e: ort::Error<ort::session::builder::SessionBuilder>| Error::new(ErrorKind::Internal, e.to_string());
    let mut builder = Session::builder(env).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
    // By default every session runs on the environment's one global thread pool, so several
    // sessions never oversubscribe the cores; an explicit thread count gets a pool of its own.
    if options.intra_threads > 0 {
        builder = builder.with_independent_thread_pool().map_err(ort_err)?.with_intra_threads(options.intra_threads).map_err(ort_err)?;
    }
    if let Some(weights) = prepacked {
        builder = builder.with_prepacked_weights(weights).map_err(ort_err)?;
    }
    // The process-wide CPU arena (runtime.rs): working buffers shared by every session.
    builder = builder.with_env_allocators().map_err(ort_err)?;

    let requested = options.provider.display_name(options.device_id);
    let mut report = ProviderReport { requested: requested.clone(), in_use: requested.clone(), fallback_reason: None };
    let dispatch = match options.provider {
        Provider::Cpu => None,
        // error_on_failure: ort's default is to log and silently run on the CPU.
        Provider::Cuda => Some(ep::CUDA::default().with_device_id(options.device_id).build().error_on_failure()),
        Provider::TensorRt => Some(ep::TensorRT::default().with_device_id(options.device_id).build().error_on_failure()),
        Provider::DirectMl => Some(ep::DirectML::default().with_device_id(options.device_id).build().error_on_failure()),
        Provider::OpenVino => Some(ep::OpenVINO::default().build().error_on_failure()),
    };
    if let Some(dispatch) = dispatch {
        if matches!(options.provider, Provider::Cuda | Provider::TensorRt) {
            runtime::preload_gpu_libraries();
        }
        builder = match builder.with_execution_providers([dispatch]) {
            Ok(b) => b,
            Err(e) => {
                let reason = format!("{requested} could not be initialised: {}", e.message());
                if options.provider_policy == ProviderPolicy::Require {
                    return Err(Error::new(ErrorKind::ProviderUnavailable, reason + " (policy: require)"));
                }
                crate::log::emit(LogLevel::Warn, &format!("{reason}; running on the CPU (policy: fallback)"));
                report.in_use = "CPU".into();
                report.fallback_reason = Some(reason);
                e.recover()
            }
        };
    }

    let session = builder
        .commit_from_memory(model)
        .map_err(|e| Error::new(ErrorKind::ModelInvalid, format!("ONNX Runtime cannot load the model: {}", e.message())))?;
    Ok((session, report))
}

/// A failed `Session::run` as segrt's error: ONNX Runtime's own allocation failures are
/// `OutOfMemory` (its message names the size), anything else `InferenceFailed`.
pub fn run_error(e: &ort::Error, what: &str) -> Error {
    let message = e.message();
    let kind = if message.contains("Failed to allocate") || message.contains("bad_alloc") || message.contains("out of memory") {
        ErrorKind::OutOfMemory
    } else {
        ErrorKind::InferenceFailed
    };
    Error::new(kind, format!("{what} failed: {message}"))
}
