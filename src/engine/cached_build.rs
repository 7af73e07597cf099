//! Building a session through the model cache: a valid cached optimised model is loaded instead of
//! running ONNX Runtime's optimiser; otherwise the model is optimised and the result written for the
//! next start. The cache never fails a build (see `cache` for the file itself).

use ort::session::builder::SessionBuilder;
use ort::session::Session;

use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::options::{Options, Provider};

use super::cache::{CacheReport, CacheStatus, Lookup, ModelCache, Optimised, PAYLOAD_FORMAT};
use super::providers::fallback::{all_nodes_as_required, NOT_ALL_NODES};
use super::providers::{PerModel, ProviderReport};
use super::session::{commit, commit_optimised, initialise, prepare_builder};

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
pub fn build_session_cached(model: &[u8], options: &Options, per_model: &PerModel, cache: &ModelCache) -> Result<CachedBuild> {
    if model.is_empty() {
        return Err(Error::new(ErrorKind::ModelInvalid, "the model is empty (0 bytes)"));
    }
    let file = cache.file().display().to_string();
    let report = |status, note: Option<String>| CacheReport { status, file: Some(file.clone()), note };
    let uncached = |builder, provider, status, note: String| -> Result<CachedBuild> {
        let (session, provider) = commit(builder, model, options, per_model, provider)?;
        Ok(CachedBuild { session, provider, cache: report(status, Some(note)), optimised: None })
    };

    // Compiling providers turn parts of the graph into their own binaries, which ONNX Runtime
    // cannot save in a model.
    if matches!(options.provider, Provider::TensorRt | Provider::OpenVino | Provider::DirectMl) {
        let (builder, provider) = prepare_builder(options, per_model)?;
        let note =
            format!("the model cache is not used with {}: it compiles the graph, which ONNX Runtime cannot save", provider.requested);
        crate::log::emit(LogLevel::Info, &note);
        return uncached(builder, provider, CacheStatus::Bypassed, note);
    }

    let mut status = CacheStatus::Miss;
    let mut note = None;
    let lookup = cache.lookup(options.max_model_bytes);
    if !matches!(lookup, Lookup::Missing) {
        let (builder, provider) = prepare_builder(options, per_model)?;
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
                        let (builder, provider) = prepare_builder(options, per_model)?;
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
    let (builder, provider) = prepare_builder(options, per_model)?;
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
                let (builder, provider) = prepare_builder(options, per_model)?;
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
            let (builder, provider) = prepare_builder(options, per_model)?;
            let (session, provider) = commit(builder, model, options, per_model, provider)?;
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
