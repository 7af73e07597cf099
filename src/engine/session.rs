//! Building one ONNX Runtime session from model bytes: threads, the execution provider with an
//! explicit fallback policy, and ONNX Runtime's errors translated into segrt's.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ort::ep::{self, ArbitrarilyConfigurableExecutionProvider};
use ort::session::builder::{GraphOptimizationLevel, SessionBuilder};
use ort::session::Session;

use crate::alloc;
use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::options::{ConvSearch, Options, Provider, ProviderPolicy, TrtProfiles};
use crate::runtime;

use super::cache::{CacheReport, CacheStatus, Lookup, ModelCache, Optimised, PAYLOAD_FORMAT};
use super::narrow_path;
use super::placement;
use super::provider_errors::{provider_failure, Stage};
use super::providers::ProviderReport;
use super::shared_graph::SharedGraph;
use super::trt_profile::Derived;

/// Reads a model file: only a regular file (never a device, a pipe or a folder, which could block
/// or never end), no larger than `max_bytes`, read with that bound.
pub fn read_model_file(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let unreadable = |e: std::io::Error| Error::new(ErrorKind::ModelNotFound, format!("cannot read model file '{}': {e}", path.display()));
    let meta = std::fs::metadata(path).map_err(unreadable)?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a folder" } else { "not a regular file (a device, pipe or socket)" };
        return Err(Error::new(ErrorKind::ModelNotFound, format!("cannot read model file '{}': it is {what}", path.display())));
    }
    if meta.len() == 0 {
        // Files the kernel makes up (/proc, /sys) report 0 bytes whatever they hold: name both cases.
        return Err(Error::new(
            ErrorKind::ModelInvalid,
            format!("model file '{}' is empty, or not a regular file with a known size (0 bytes reported)", path.display()),
        ));
    }
    check_model_size(meta.len(), max_bytes).map_err(|e| e.context(format!("model file '{}'", path.display())))?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(meta.len() as usize).map_err(|_| alloc::out_of_memory(meta.len(), "the model file"))?;
    // The file may grow between the size check and the read: read one byte past the bound at most
    // (saturating: max_model_bytes may be u64::MAX).
    std::fs::File::open(path).and_then(|f| f.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes)).map_err(unreadable)?;
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

/// Builds a session from model bytes on the calling thread.
pub fn build_session(model: &[u8], options: &Options) -> Result<(Session, ProviderReport)> {
    if model.is_empty() {
        return Err(Error::new(ErrorKind::ModelInvalid, "the model is empty (0 bytes)"));
    }
    let (builder, report) = prepare_builder(options)?;
    let built = commit(builder, model, options, report);
    let incomplete = match &built {
        Ok((_, report)) => report.fallback_reason.as_deref().is_some_and(|r| r.contains(PROFILE_INCOMPLETE)),
        Err(e) => e.message.contains(PROFILE_INCOMPLETE),
    };
    if incomplete && options.trt_profile_given().is_some() {
        crate::log::emit(
            LogLevel::Warn,
            "TensorRT refused segrt's shape profile (it runs only parts of this model, whose inputs the profile cannot name): \
             building the session without profiles, so TensorRT builds its engines as runs come",
        );
        drop(built);
        let mut without = options.clone();
        without.gpu.shape_profile = Derived::Undecided("TensorRT refused it: it runs only parts of this model".into());
        return build_session(model, &without);
    }
    built
}

/// A session builder with segrt's threads, weights sharing and execution provider, and what became
/// of the provider.
fn prepare_builder(options: &Options) -> Result<(SessionBuilder, ProviderReport)> {
    let env = runtime::environment(options.ort_path.as_deref())?;
    let ort_err = |e: ort::Error<SessionBuilder>| Error::new(ErrorKind::Internal, e.to_string());
    let mut builder = Session::builder(env).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
    // By default every session runs on the environment's one global thread pool, so several
    // sessions never oversubscribe the cores; an explicit thread count gets a pool of its own.
    if options.intra_threads > 0 {
        builder = builder.with_independent_thread_pool().map_err(ort_err)?.with_intra_threads(options.intra_threads).map_err(ort_err)?;
    }
    // The process-wide CPU arena (arena.rs): working buffers shared by every session; the model's side files.
    builder = options.external_data.add_to(builder.with_env_allocators().map_err(ort_err)?)?;
    // No memory pattern: from its second run on, a session would allocate one block planned for all
    // of a run's tensors, beside the blocks its first run left free in the arena, which stay there:
    // +550 MB at the SAM2.1 hiera-tiny encoder's second image, +150 MB at a base-32 UNet's.
    builder = builder.with_memory_pattern(false).map_err(ort_err)?;

    // ONNX Runtime keeps where it placed each node, for the session info (see `placement`).
    builder = builder.with_config_entry(placement::RECORD_CONFIG_KEY, "1").map_err(ort_err)?;

    let requested = options.provider.display_name(options.device_id);
    let tensorrt_profile = (options.provider == Provider::TensorRt).then(|| match options.gpu.trt_profiles {
        TrtProfiles::Off => "none: trt_profiles is OFF; TensorRT builds engines as runs come".to_string(),
        TrtProfiles::Auto => options.gpu.shape_profile.describe(),
    });
    if let Some(profile) = &tensorrt_profile {
        crate::log::emit(LogLevel::Info, &format!("TensorRT shape profile: {profile}"));
    }
    let mut report = ProviderReport {
        requested: requested.clone(),
        in_use: requested.clone(),
        fallback_reason: None,
        nodes: Vec::new(),
        tensorrt_profile,
    };
    let cuda = || {
        let mut ep = ep::CUDA::default();
        for (key, value) in cuda_provider_options(options) {
            ep = ep.with_arbitrary_config(key, value);
        }
        // error_on_failure: ort's default is to log and silently run on the CPU.
        ep.build().error_on_failure()
    };
    let dispatch: Option<Vec<ep::ExecutionProviderDispatch>> = match options.provider {
        Provider::Cpu => None,
        Provider::Cuda => Some(vec![cuda()]),
        // CUDA behind TensorRT: what TensorRT cannot run goes to the GPU, not to the CPU.
        Provider::TensorRt => {
            let mut trt = ep::TensorRT::default();
            for (key, value) in tensorrt_provider_options(&with_narrow_trt_cache(options)?) {
                trt = trt.with_arbitrary_config(key, value);
            }
            Some(vec![trt.build().error_on_failure(), cuda()])
        }
        Provider::DirectMl => Some(vec![ep::DirectML::default().with_device_id(options.device_id).build().error_on_failure()]),
        Provider::OpenVino => Some(vec![ep::OpenVINO::default().build().error_on_failure()]),
    };
    // Test builds: the provider is taken as registered, and creating the session fails (`commit`).
    #[cfg(feature = "fault-injection")]
    let dispatch = dispatch.filter(|_| injected_provider_fault(options).is_none());
    if let Some(dispatch) = dispatch {
        runtime::preload_gpu_libraries(options.provider);
        builder = match builder.with_execution_providers(dispatch) {
            Ok(b) => b,
            Err(e) => {
                let reason =
                    provider_failure(options.provider, options.device_id, Stage::Register, e.message(), &missing_libraries(options));
                refuse_or_fall_back(options, reason, &mut report)?;
                e.recover()
            }
        };
    }
    Ok((builder, report))
}

/// The CUDA provider's options (CUDA alone, and behind TensorRT), as ONNX Runtime's keys.
pub fn cuda_provider_options(options: &Options) -> Vec<(&'static str, String)> {
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

/// The TensorRT provider's options, as ONNX Runtime's keys: the device, FP16, and with a cache
/// folder the engine and timing caches (built once, loaded at later starts).
pub fn tensorrt_provider_options(options: &Options) -> Vec<(&'static str, String)> {
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
    if let Some(profile) = options.trt_profile_given() {
        list.extend(profile.provider_options());
    }
    list
}

/// What ONNX Runtime's TensorRT provider says when a profile leaves out a dynamic input of a part of
/// the graph it runs (where ONNX Runtime split the model between TensorRT and CUDA, a part's inputs
/// can be tensors inside the model, which no profile of segrt's names).
const PROFILE_INCOMPLETE: &str = "provide all the dynamic shape inputs with associated profiles";

/// `options` with the TensorRT cache folder created and named as ONNX Runtime's TensorRT provider can
/// open it (see `narrow_path`: on Windows a Unicode or deep folder goes by its short name).
fn with_narrow_trt_cache(options: &Options) -> Result<Options> {
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

/// Builds the session: ONNX Runtime loads, optimises and initialises the graph here. On Windows a
/// bogus shape-inference failure is retried once: under Wine the first SAM2 image-encoder session of a
/// process failed most times with "[ShapeInferenceError] Can't merge shape info ... Inferred=4
/// Declared=5" and every later build of the same model in that process succeeded (whether Windows
/// itself does this is not known). Building alone or after a tiny session did not avoid it.
fn initialise(builder: &mut SessionBuilder, model: &[u8]) -> ort::Result<Session> {
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

/// Under `Require` the provider's failure is the error (`ProviderUnavailable`); under `Fallback`
/// it is logged and recorded in `report`, which then says the session runs on the CPU.
fn refuse_or_fall_back(options: &Options, reason: String, report: &mut ProviderReport) -> Result<()> {
    if options.provider_policy == ProviderPolicy::Require {
        return Err(Error::new(ErrorKind::ProviderUnavailable, reason + " (policy: require)"));
    }
    crate::log::emit(LogLevel::Warn, &format!("{reason}; running on the CPU (policy: fallback)"));
    report.in_use = "CPU".into();
    report.fallback_reason = Some(reason);
    Ok(())
}

/// The GPU libraries segrt expected beside ONNX Runtime for this provider and did not find: an
/// error that does not say which library failed to load names these.
fn missing_libraries(options: &Options) -> Vec<String> {
    runtime::missing_gpu_libraries(options.provider)
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
fn commit(mut builder: SessionBuilder, model: &[u8], options: &Options, mut report: ProviderReport) -> Result<(Session, ProviderReport)> {
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
        Err(message) => {
            Some(provider_failure(options.provider, options.device_id, Stage::CreateSession, &message, &missing_libraries(options)))
        }
    };
    let cpu = Options { provider: Provider::Cpu, ..options.clone() };
    let (mut cpu_builder, _) = prepare_builder(&cpu)?;
    let session = initialise(&mut cpu_builder, model).map_err(|e| model_error(e.message()))?;
    if let Some(reason) = failure {
        refuse_or_fall_back(options, reason, &mut report)?;
    }
    report.record_placement(&session);
    Ok((session, report))
}

/// False when `options.gpu.require_all_nodes` asks for a session with no node on the CPU and
/// `report`'s session has some.
fn all_nodes_as_required(report: &ProviderReport, options: &Options) -> bool {
    !options.gpu.require_all_nodes || report.fallback_reason.is_some() || report.nodes_on_cpu() == 0
}

/// Why a session with nodes on the CPU is refused under `require_all_nodes`.
fn not_all_nodes(report: &ProviderReport) -> String {
    format!(
        "{} runs only part of this model: ONNX Runtime placed {} of its {} nodes on the CPU ({}), and require_all_nodes \
         asks for none (the session info lists the nodes per provider)",
        report.requested,
        report.nodes_on_cpu(),
        placement::total_nodes(&report.nodes),
        placement::cpu_operators(&report.nodes),
    )
}

/// The model cache's note when a cached session had nodes on the CPU under `require_all_nodes`.
const NOT_ALL_NODES: &str = "the model cache is not used: require_all_nodes refused the cached session (nodes on the CPU)";

/// A model ONNX Runtime refuses on the CPU: the model's fault.
fn model_error(message: &str) -> Error {
    Error::new(ErrorKind::ModelInvalid, format!("ONNX Runtime cannot load the model: {message}"))
}

/// A model built on the CPU only (the graph-sharing sessions of a CPU pool).
fn commit_cpu(mut builder: SessionBuilder, model: &[u8]) -> Result<Session> {
    initialise(&mut builder, model).map_err(|e| model_error(e.message()))
}

/// Loads a model that ONNX Runtime's optimiser already produced (for the same runtime, provider and
/// CPU): the optimiser is not run again.
fn commit_optimised(builder: SessionBuilder, optimised: &[u8]) -> std::result::Result<Session, String> {
    let text = |e: ort::Error<SessionBuilder>| e.message().to_string();
    let mut builder = builder
        .with_optimization_level(GraphOptimizationLevel::Disable)
        .map_err(text)?
        .with_config_entry("session.load_model_format", PAYLOAD_FORMAT)
        .map_err(text)?;
    initialise(&mut builder, optimised).map_err(|e| e.message().to_string())
}

/// A session built through the model cache.
pub struct CachedBuild {
    pub session: Session,
    pub provider: ProviderReport,
    pub cache: CacheReport,
    /// The verified optimised model this session was loaded from (a cache hit): more sessions of the
    /// same model load it too. `None`: they build from the original model.
    pub optimised: Option<Optimised>,
}

/// Builds a session like [`build_session`], through `cache`: a valid cache file is loaded instead of
/// running the optimiser; otherwise the model is optimised and the result written for the next start.
/// A cache that cannot be read, is stale or corrupt, or cannot be written never fails the build: it
/// is rebuilt or skipped, with a log line.
pub fn build_session_cached(model: &[u8], options: &Options, cache: &ModelCache) -> Result<CachedBuild> {
    if model.is_empty() {
        return Err(Error::new(ErrorKind::ModelInvalid, "the model is empty (0 bytes)"));
    }
    let file = cache.file().display().to_string();
    let report = |status, note: Option<String>| CacheReport { status, file: Some(file.clone()), note };
    let uncached = |builder, provider, status, note: String| -> Result<CachedBuild> {
        let (session, provider) = commit(builder, model, options, provider)?;
        Ok(CachedBuild { session, provider, cache: report(status, Some(note)), optimised: None })
    };

    // Compiling providers turn parts of the graph into their own binaries, which ONNX Runtime
    // cannot save in a model.
    if matches!(options.provider, Provider::TensorRt | Provider::OpenVino | Provider::DirectMl) {
        let (builder, provider) = prepare_builder(options)?;
        let note =
            format!("the model cache is not used with {}: it compiles the graph, which ONNX Runtime cannot save", provider.requested);
        crate::log::emit(LogLevel::Info, &note);
        return uncached(builder, provider, CacheStatus::Bypassed, note);
    }

    let mut status = CacheStatus::Miss;
    let mut note = None;
    let lookup = cache.lookup(options.max_model_bytes);
    if !matches!(lookup, Lookup::Missing) {
        let (builder, provider) = prepare_builder(options)?;
        if provider.fallback_reason.is_some() {
            let note = format!("the model cache is not used: {} fell back to the CPU", provider.requested);
            crate::log::emit(LogLevel::Info, &note);
            return uncached(builder, provider, CacheStatus::Bypassed, note);
        }
        let reason = match lookup {
            Lookup::Valid(optimised) => match commit_optimised(builder, optimised.model()) {
                Ok(session) => {
                    let mut provider = provider;
                    provider.record_placement(&session);
                    if !all_nodes_as_required(&provider, options) {
                        drop(session);
                        let (builder, provider) = prepare_builder(options)?;
                        return uncached(builder, provider, CacheStatus::Bypassed, NOT_ALL_NODES.into());
                    }
                    crate::log::emit(LogLevel::Info, &format!("model cache hit: loaded the optimised model from {file}"));
                    return Ok(CachedBuild { session, provider, cache: report(CacheStatus::Hit, None), optimised: Some(optimised) });
                }
                Err(e) => format!("ONNX Runtime cannot load it: {e}"),
            },
            Lookup::Invalid(reason) => reason,
            Lookup::Missing => unreachable!("handled above"),
        };
        let line = format!("model cache file {file} is not usable: {reason}; deleting it and optimising the model again");
        crate::log::emit(LogLevel::Warn, &line);
        cache.discard();
        status = CacheStatus::Rebuilt;
        note = Some(reason);
    }

    // Optimise the original model, asking ONNX Runtime to save the result.
    let (builder, provider) = prepare_builder(options)?;
    if provider.fallback_reason.is_some() {
        let note = format!("the model cache is not used: {} fell back to the CPU", provider.requested);
        crate::log::emit(LogLevel::Info, &note);
        return uncached(builder, provider, CacheStatus::Bypassed, note);
    }
    let temp = match cache.temp_path() {
        Ok(t) => t,
        Err(e) => {
            crate::log::emit(LogLevel::Warn, &format!("model cache not written: {e}; the session runs without it"));
            return uncached(builder, provider, CacheStatus::Unwritable, e);
        }
    };
    let text = |e: ort::Error<SessionBuilder>| e.message().to_string();
    let saving = builder
        .with_optimized_model_path(&temp)
        .map_err(text)
        .and_then(|b| b.with_config_entry("session.save_model_format", PAYLOAD_FORMAT).map_err(text))
        .and_then(|mut b| initialise(&mut b, model).map_err(|e| e.message().to_string()));
    match saving {
        Ok(session) => {
            let mut provider = provider;
            provider.record_placement(&session);
            if !all_nodes_as_required(&provider, options) {
                drop(session);
                let _ = std::fs::remove_file(&temp);
                let (builder, provider) = prepare_builder(options)?;
                return uncached(builder, provider, CacheStatus::Bypassed, NOT_ALL_NODES.into());
            }
            let (status, note) = match cache.store(&temp) {
                Ok(()) => {
                    crate::log::emit(
                        LogLevel::Info,
                        &format!(
                            "model cache {}: wrote the optimised model to {file}",
                            if status == CacheStatus::Rebuilt { "rebuilt" } else { "miss" }
                        ),
                    );
                    (status, note)
                }
                Err(e) => {
                    crate::log::emit(LogLevel::Warn, &format!("model cache not written: {e}; the session runs without it"));
                    (CacheStatus::Unwritable, Some(e))
                }
            };
            Ok(CachedBuild { session, provider, cache: report(status, note), optimised: None })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            // Saving may be what failed: build again without it. A model ONNX Runtime cannot load
            // fails here too, with the usual error.
            let (builder, provider) = prepare_builder(options)?;
            let (session, provider) = commit(builder, model, options, provider)?;
            if provider.fallback_reason.is_some() {
                let note = format!("the model cache is not used: {} fell back to the CPU", provider.requested);
                crate::log::emit(LogLevel::Info, &note);
                return Ok(CachedBuild { session, provider, cache: report(CacheStatus::Bypassed, Some(note)), optimised: None });
            }
            let line =
                format!("model cache not written: ONNX Runtime could not save the optimised model ({e}); the session runs without it");
            crate::log::emit(LogLevel::Warn, &line);
            Ok(CachedBuild { session, provider, cache: report(CacheStatus::Unwritable, Some(e)), optimised: None })
        }
    }
}

/// Builds one more session of a pool from the optimised model a cache hit gave (no optimiser run),
/// or from the original model.
pub fn build_pooled_session(model: &[u8], optimised: bool, options: &Options) -> Result<Session> {
    if !optimised {
        return build_session(model, options).map(|(s, _)| s);
    }
    let (builder, _) = prepare_builder(options)?;
    commit_optimised(builder, model)
        .map_err(|e| Error::new(ErrorKind::ModelInvalid, format!("ONNX Runtime cannot load the cached optimised model: {e}")))
}

/// A session of a pool and, when it reads its weights from a [`SharedGraph`], those bytes: declared
/// after the session, they are dropped after it (ONNX Runtime keeps pointers into them).
pub struct PooledSession {
    pub session: Session,
    _graph: Option<SharedGraph>,
}

impl From<Session> for PooledSession {
    fn from(session: Session) -> Self {
        PooledSession { session, _graph: None }
    }
}

/// Builds a session from `model` (an original model, or an optimised one from the cache when
/// `optimised`) and asks ONNX Runtime to save its optimised graph in the ORT format too, so that
/// more sessions can share its weights. When the graph cannot be saved or read back (no writable
/// temporary folder, a graph ONNX Runtime cannot serialise), the session is built without it and
/// the reason logged.
pub fn build_session_sharing(model: &[u8], optimised: bool, options: &Options) -> Result<(Session, ProviderReport, Option<SharedGraph>)> {
    let (builder, provider) = prepare_builder(options)?;
    let temp = shared_graph_path();
    let text = |e: ort::Error<SessionBuilder>| e.message().to_string();
    let saving = builder
        .with_optimized_model_path(&temp)
        .map_err(text)
        .and_then(|b| b.with_config_entry("session.save_model_format", "ORT").map_err(text))
        .and_then(|b| if optimised { commit_optimised(b, model) } else { commit_cpu(b, model).map_err(|e| e.message) });
    let graph = std::fs::read(&temp);
    let _ = std::fs::remove_file(&temp);
    let failure = match (saving, graph) {
        (Ok(session), Ok(bytes)) if !bytes.is_empty() => {
            let mut provider = provider;
            provider.record_placement(&session);
            return Ok((session, provider, Some(SharedGraph::new(bytes))));
        }
        (Ok(_), Ok(_)) => "ONNX Runtime wrote an empty graph".to_string(),
        (Ok(_), Err(e)) => format!("cannot read it back from {}: {e}", temp.display()),
        (Err(e), _) => e,
    };
    // Saving may be what failed: build again without it. A model ONNX Runtime cannot load fails
    // here too, with the usual error.
    let session = if optimised { build_pooled_session(model, true, options)? } else { build_session(model, options)?.0 };
    crate::log::emit(
        LogLevel::Info,
        &format!("the sessions of this model will not share weights: saving its optimised graph failed ({failure})"),
    );
    let mut provider = provider;
    provider.record_placement(&session);
    Ok((session, provider, None))
}

/// A new file name in the temporary folder for ONNX Runtime to write a graph to (read and deleted
/// right after).
fn shared_graph_path() -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("segrt-{}-{n}.ort", std::process::id()))
}

/// Builds a session from a graph saved by [`build_session_sharing`], reading its weights in place
/// and sharing the forms pre-packed from them with the graph's other sessions: the optimiser does
/// not run again and nothing is copied. When ONNX Runtime refuses shared initializers for this
/// graph, this and later sessions pre-pack their own (logged once).
pub fn build_shared_session(graph: &SharedGraph, options: &Options) -> Result<PooledSession> {
    if graph.sharing_initializers() {
        match commit_shared(graph, options, true) {
            Ok(session) => return Ok(PooledSession { session, _graph: Some(graph.clone()) }),
            Err(e) => {
                graph.stop_sharing_initializers();
                let line =
                    format!("sessions of this model pre-pack their own weights: ONNX Runtime refused shared initializers ({})", e.message);
                crate::log::emit(LogLevel::Info, &line);
            }
        }
    }
    let session = commit_shared(graph, options, false)?;
    // The session points into the graph's bytes (and values): it keeps them alive.
    Ok(PooledSession { session, _graph: Some(graph.clone()) })
}

/// Loads the graph in place, with its initializers as shared values when `share_initializers`.
fn commit_shared(graph: &SharedGraph, options: &Options, share_initializers: bool) -> Result<Session> {
    let (builder, _) = prepare_builder(options)?;
    let text = |e: ort::Error<SessionBuilder>| Error::new(ErrorKind::Internal, e.message().to_string());
    let mut builder = builder
        .with_config_entry("session.load_model_format", "ORT")
        .map_err(text)?
        .with_config_entry("session.use_ort_model_bytes_directly", "1")
        .map_err(text)?
        .with_config_entry("session.use_ort_model_bytes_for_initializers", "1")
        .map_err(text)?;
    if share_initializers {
        builder = graph.share_with(builder).map_err(|e| Error::new(ErrorKind::Internal, e))?;
    }
    initialise(&mut builder, graph.bytes())
        .map_err(|e| Error::new(ErrorKind::ModelInvalid, format!("ONNX Runtime cannot load the shared optimised graph: {}", e.message())))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::GpuOptions;

    fn keys(list: &[(&'static str, String)]) -> Vec<String> {
        list.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn gpu_options_become_onnx_runtime_s_provider_options() {
        let mut o = Options { provider: Provider::Cuda, device_id: 1, ..Options::default() };
        // segrt's default search is cuDNN's heuristics, not ONNX Runtime's exhaustive search.
        assert_eq!(keys(&cuda_provider_options(&o)), ["device_id=1", "cudnn_conv_algo_search=HEURISTIC"]);
        assert_eq!(keys(&tensorrt_provider_options(&o)), ["device_id=1"]);

        o.gpu = GpuOptions {
            mem_limit: 2 << 30,
            conv_search: ConvSearch::Exhaustive,
            trt_cache_dir: Some(PathBuf::from("/var/cache/segrt/trt")),
            trt_fp16: true,
            ..GpuOptions::default()
        };
        assert_eq!(
            keys(&cuda_provider_options(&o)),
            ["device_id=1", "cudnn_conv_algo_search=EXHAUSTIVE", "gpu_mem_limit=2147483648", "arena_extend_strategy=kSameAsRequested"]
        );
        assert_eq!(
            keys(&tensorrt_provider_options(&o)),
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
        assert!(keys(&cuda_provider_options(&o)).contains(&"cudnn_conv_algo_search=DEFAULT".to_string()));
    }
}
