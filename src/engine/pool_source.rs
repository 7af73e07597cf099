//! What more sessions of a pool are built from (the original model, the optimised model of a cache
//! hit, the model file read again, or a shared graph), and why a pool stops growing.

use std::path::PathBuf;

use xxhash_rust::xxh3::xxh3_128;

use crate::error::Error;

use super::cache::{Lookup, ModelCache, Optimised};
use super::model_file::read_model_file;
use super::shared_graph::SharedGraph;

/// What more sessions of a pool are built from.
pub(super) enum Source {
    /// Nothing: the pool never grows (`max_sessions` 1).
    Nothing,
    /// The original model given in memory (the optimiser runs for each session).
    Original(Vec<u8>),
    /// The optimised model a cache hit gave for a model given in memory (loaded without running
    /// the optimiser).
    Optimised(Optimised),
    /// The model file, read again for the next session rather than held for the life of the handle.
    File(ModelFile),
    /// The optimised graph in ONNX Runtime's format: sessions read their weights from it in place.
    Shared(SharedGraph),
}

/// A model file the first session was built from.
pub(super) struct ModelFile {
    pub(super) path: PathBuf,
    /// xxh3-128 of the bytes the first session was built from: a file changed since is not used.
    pub(super) hash: u128,
    /// Where a cached optimised model of it may be (tried first).
    pub(super) cache: Option<ModelCache>,
}

/// What a model file gave for one more session.
pub(super) enum Loaded {
    Original(Vec<u8>),
    Optimised(Optimised),
}

impl ModelFile {
    /// The cached optimised model when valid, else the file's bytes if they are still those the
    /// first session was built from; `Err`: why the file cannot serve any more (logged by the caller).
    pub(super) fn load(&self, max_bytes: u64) -> std::result::Result<Loaded, String> {
        if let Some(Lookup::Valid(optimised)) = self.cache.as_ref().map(|c| c.lookup(max_bytes)) {
            return Ok(Loaded::Optimised(optimised));
        }
        let bytes = read_model_file(&self.path, max_bytes).map_err(|e| e.message)?;
        if xxh3_128(&bytes) != self.hash {
            return Err(format!("the model file '{}' changed since the handle was created", self.path.display()));
        }
        Ok(Loaded::Original(bytes))
    }
}

impl Loaded {
    pub(super) fn model(&self) -> (&[u8], bool) {
        match self {
            Loaded::Original(bytes) => (bytes, false),
            Loaded::Optimised(optimised) => (optimised.model(), true),
        }
    }
}

/// Why one more session was not built.
pub(super) enum Growth {
    /// The build failed: the call gets the error.
    Failed(Error),
    /// The pool cannot grow any more (its model file changed or went): the call waits for a session.
    Stopped(String),
}
