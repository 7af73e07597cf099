//! Building one ONNX Runtime session from model bytes: threads, the execution provider with an
//! explicit fallback policy, and ONNX Runtime's errors translated into segrt's.

use ort::session::builder::{GraphOptimizationLevel, SessionBuilder};
use ort::session::Session;

use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::options::{Options, Provider};
use crate::runtime;

use super::cache::PAYLOAD_FORMAT;
use super::providers::errors::{failure_of, Stage};
use super::providers::fallback::{all_nodes_as_required, not_all_nodes, refuse_or_fall_back};
use super::providers::libraries;
use super::providers::tensorrt::profile::Derived;
use super::providers::{self, placement, tensorrt, PerModel, ProviderReport};

/// Builds a session from model bytes on the calling thread.
pub fn build_session(model: &[u8], options: &Options) -> Result<(Session, ProviderReport)> {
    build_session_for(model, options, &PerModel::default())
}

/// [`build_session`] with what segrt derived for the model (`per_model`: TensorRT's shape profile).
pub fn build_session_for(model: &[u8], options: &Options, per_model: &PerModel) -> Result<(Session, ProviderReport)> {
    if model.is_empty() {
        return Err(Error::new(ErrorKind::ModelInvalid, "the model is empty (0 bytes)"));
    }
    let (builder, report) = prepare_builder(options, per_model)?;
    let built = commit(builder, model, options, per_model, report);
    if tensorrt::refused_the_profile(&built) && per_model.trt_profile_given(options).is_some() {
        crate::log::emit(
            LogLevel::Warn,
            "TensorRT refused segrt's shape profile (it runs only parts of this model, whose inputs the profile cannot name): \
             building the session without profiles, so TensorRT builds its engines as runs come",
        );
        drop(built);
        let without = PerModel {
            trt_profile: Derived::Undecided("TensorRT refused it: it runs only parts of this model".into()),
            external_data: per_model.external_data.clone(),
        };
        return build_session_for(model, options, &without);
    }
    built
}

/// A session builder with segrt's threads, weights sharing and execution provider, and what became
/// of the provider.
pub(super) fn prepare_builder(options: &Options, per_model: &PerModel) -> Result<(SessionBuilder, ProviderReport)> {
    let env = runtime::environment(options.ort_path.as_deref())?;
    let ort_err = |e: ort::Error<SessionBuilder>| Error::new(ErrorKind::Internal, e.to_string());
    let mut builder = Session::builder(env).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
    // By default every session runs on the environment's one global thread pool, so several
    // sessions never oversubscribe the cores; an explicit thread count gets a pool of its own.
    if options.intra_threads > 0 {
        builder = builder.with_independent_thread_pool().map_err(ort_err)?.with_intra_threads(options.intra_threads).map_err(ort_err)?;
    }
    // The process-wide CPU arena (arena.rs): working buffers shared by every session; the model's side files.
    builder = per_model.external_data.add_to(builder.with_env_allocators().map_err(ort_err)?)?;
    // No memory pattern: from its second run on, a session would allocate one block planned for all
    // of a run's tensors, beside the blocks its first run left free in the arena, which stay there:
    // +550 MB at the SAM2.1 hiera-tiny encoder's second image, +150 MB at a base-32 UNet's.
    builder = builder.with_memory_pattern(false).map_err(ort_err)?;
    // Before 1.28, ONNX Runtime's constant folding can leave a folded weight pointing at freed memory.
    if runtime::loaded().is_some_and(|rt| rt.lacks(&runtime::release::SOUND_CONSTANT_FOLDING)) {
        builder = builder.with_config_entry("optimization.disable_specified_optimizers", "ConstantFolding").map_err(ort_err)?;
    }

    // ONNX Runtime keeps where it placed each node, for the session info (see `placement`).
    builder = builder.with_config_entry(placement::RECORD_CONFIG_KEY, "1").map_err(ort_err)?;

    let requested = options.provider.display_name(options.device_id);
    let mut report = ProviderReport {
        requested: requested.clone(),
        in_use: requested.clone(),
        fallback_reason: None,
        nodes: Vec::new(),
        tensorrt_profile: tensorrt::profile_report(options, per_model),
    };
    let mut dispatch = providers::dispatch(options, per_model)?;
    // A GPU the loaded CUDA build has no kernels for is refused before the provider is registered:
    // ONNX Runtime would only fail at the first run ("no kernel image is available").
    if dispatch.is_some() && matches!(options.provider, Provider::Cuda | Provider::TensorRt) {
        if let Err(why) = providers::cuda::check_gpu(options) {
            refuse_or_fall_back(options, format!("{requested} could not be initialised: {why}"), &mut report)?;
            dispatch = None;
        }
    }
    // Test builds: the provider is taken as registered, and creating the session fails (`commit`).
    #[cfg(feature = "fault-injection")]
    let dispatch = dispatch.filter(|_| injected_provider_fault(options).is_none());
    if let Some(dispatch) = dispatch {
        libraries::preload(&providers::vendor_libraries(options.provider));
        builder = match builder.with_execution_providers(dispatch) {
            Ok(b) => b,
            Err(e) => {
                refuse_or_fall_back(options, failure_of(options, Stage::Register, e.message()), &mut report)?;
                e.recover()
            }
        };
    }
    Ok((builder, report))
}

/// Builds the session: ONNX Runtime loads, optimises and initialises the graph here. On Windows a
/// bogus shape-inference failure is retried once: under Wine the first SAM2 image-encoder session of a
/// process failed most times with "[ShapeInferenceError] Can't merge shape info ... Inferred=4
/// Declared=5" and every later build of the same model in that process succeeded (whether Windows
/// itself does this is not known). Building alone or after a tiny session did not avoid it.
pub(super) fn initialise(builder: &mut SessionBuilder, model: &[u8]) -> ort::Result<Session> {
    let built = builder.commit_from_memory(model);
    #[cfg(windows)]
    if let Err(e) = &built {
        if e.message().contains("[ShapeInferenceError] Can't merge shape info") {
            crate::log::emit(LogLevel::Info, &format!("ONNX Runtime failed to build a session ({}); building it again", e.message()));
            return builder.commit_from_memory(model);
        }
    }
    built
}

/// Test builds only: with `SEGRT_INJECT_PROVIDER_FAULT=no-nodes` the provider "registers" and the
/// session builds with every node on the CPU, as with a provider that runs none of the model's
/// operators.
#[cfg(feature = "fault-injection")]
const INJECT_NO_NODES: &str = "no-nodes";

/// Test builds only (`fault-injection`): `SEGRT_INJECT_PROVIDER_FAULT` set to an ONNX Runtime
/// message makes a session requested on a non-CPU provider fail with it while ONNX Runtime
/// creates the session, as a GPU that runs out of memory while the weights are uploaded does.
#[cfg(feature = "fault-injection")]
fn injected_provider_fault(options: &Options) -> Option<String> {
    if options.provider == Provider::Cpu {
        return None;
    }
    std::env::var("SEGRT_INJECT_PROVIDER_FAULT").ok().filter(|m| !m.is_empty())
}

/// Builds the session with the provider `prepare_builder` registered. ONNX Runtime creates a
/// provider's resources here (GPU memory for the weights, cuDNN handles, TensorRT engines), so a
/// provider that registered can still fail now. Such a failure is a provider's, not the model's,
/// when the same model builds on the CPU: then the policy decides (`ProviderUnavailable`, or this
/// CPU session with the reason in `report`). A model that fails on the CPU too is the model's fault.
/// A session with nodes on the CPU under `require_all_nodes` is the provider's failure too.
pub(super) fn commit(
    mut builder: SessionBuilder,
    model: &[u8],
    options: &Options,
    per_model: &PerModel,
    mut report: ProviderReport,
) -> Result<(Session, ProviderReport)> {
    #[cfg(feature = "fault-injection")]
    let built = match injected_provider_fault(options).filter(|m| report.fallback_reason.is_none() && m != INJECT_NO_NODES) {
        Some(fault) => Err(fault),
        None => initialise(&mut builder, model).map_err(|e| e.message().to_string()),
    };
    #[cfg(not(feature = "fault-injection"))]
    let built = initialise(&mut builder, model).map_err(|e| e.message().to_string());
    let failure = match built {
        Ok(session) => {
            report.record_placement(&session);
            if all_nodes_as_required(&report, options) {
                return Ok((session, report));
            }
            drop(session);
            // The model built, so it is not the model's fault: the policy decides at once.
            refuse_or_fall_back(options, not_all_nodes(&report), &mut report)?;
            None
        }
        Err(message) if options.provider == Provider::Cpu || report.fallback_reason.is_some() => return Err(model_error(&message)),
        // The provider or the model? The model on the CPU tells (below).
        Err(message) => Some(failure_of(options, Stage::CreateSession, &message)),
    };
    let cpu = Options { provider: Provider::Cpu, ..options.clone() };
    let (mut cpu_builder, _) = prepare_builder(&cpu, per_model)?;
    let session = initialise(&mut cpu_builder, model).map_err(|e| model_error(e.message()))?;
    if let Some(reason) = failure {
        refuse_or_fall_back(options, reason, &mut report)?;
    }
    report.record_placement(&session);
    Ok((session, report))
}

/// A model ONNX Runtime refuses on the CPU: the model's fault.
pub(super) fn model_error(message: &str) -> Error {
    Error::new(ErrorKind::ModelInvalid, format!("ONNX Runtime cannot load the model: {message}"))
}

/// A model built on the CPU only (the graph-sharing sessions of a CPU pool).
pub(super) fn commit_cpu(mut builder: SessionBuilder, model: &[u8]) -> Result<Session> {
    initialise(&mut builder, model).map_err(|e| model_error(e.message()))
}

/// Loads a model that ONNX Runtime's optimiser already produced (for the same runtime, provider and
/// CPU): the optimiser is not run again.
pub(super) fn commit_optimised(builder: SessionBuilder, optimised: &[u8]) -> std::result::Result<Session, String> {
    let text = |e: ort::Error<SessionBuilder>| e.message().to_string();
    let mut builder = builder
        .with_optimization_level(GraphOptimizationLevel::Disable)
        .map_err(text)?
        .with_config_entry("session.load_model_format", PAYLOAD_FORMAT)
        .map_err(text)?;
    initialise(&mut builder, optimised).map_err(|e| e.message().to_string())
}

/// Builds one more session of a pool from the optimised model a cache hit gave (no optimiser run),
/// or from the original model.
pub fn build_pooled_session(model: &[u8], optimised: bool, options: &Options, per_model: &PerModel) -> Result<Session> {
    if !optimised {
        return build_session_for(model, options, per_model).map(|(s, _)| s);
    }
    let (builder, _) = prepare_builder(options, per_model)?;
    commit_optimised(builder, model)
        .map_err(|e| Error::new(ErrorKind::ModelInvalid, format!("ONNX Runtime cannot load the cached optimised model: {e}")))
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
