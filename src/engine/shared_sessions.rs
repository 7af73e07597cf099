//! The sessions of a pool that share one optimised graph (see `shared_graph`): the session that
//! saves the graph, and the sessions loaded from it in place, with shared initializers.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use ort::session::builder::SessionBuilder;
use ort::session::Session;

use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::options::Options;

use super::providers::{PerModel, ProviderReport};
use super::session::{build_pooled_session, build_session_for, commit_cpu, commit_optimised, initialise, prepare_builder};
use super::shared_graph::SharedGraph;

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
pub fn build_session_sharing(
    model: &[u8],
    optimised: bool,
    options: &Options,
    per_model: &PerModel,
) -> Result<(Session, ProviderReport, Option<SharedGraph>)> {
    let (builder, provider) = prepare_builder(options, per_model)?;
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
    let session =
        if optimised { build_pooled_session(model, true, options, per_model)? } else { build_session_for(model, options, per_model)?.0 };
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
pub fn build_shared_session(graph: &SharedGraph, options: &Options, per_model: &PerModel) -> Result<PooledSession> {
    if graph.sharing_initializers() {
        match commit_shared(graph, options, per_model, true) {
            Ok(session) => return Ok(PooledSession { session, _graph: Some(graph.clone()) }),
            Err(e) => {
                graph.stop_sharing_initializers();
                let line =
                    format!("sessions of this model pre-pack their own weights: ONNX Runtime refused shared initializers ({})", e.message);
                crate::log::emit(LogLevel::Info, &line);
            }
        }
    }
    let session = commit_shared(graph, options, per_model, false)?;
    // The session points into the graph's bytes (and values): it keeps them alive.
    Ok(PooledSession { session, _graph: Some(graph.clone()) })
}

/// Loads the graph in place, with its initializers as shared values when `share_initializers`.
fn commit_shared(graph: &SharedGraph, options: &Options, per_model: &PerModel, share_initializers: bool) -> Result<Session> {
    let (builder, _) = prepare_builder(options, per_model)?;
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
