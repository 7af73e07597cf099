//! Models that keep their weights in side files (ONNX external data: every model over 2 GB, and many
//! Hub exports, `vision_encoder.onnx` + `vision_encoder.onnx_data`). segrt reads a model's bytes
//! itself (bounded reads of a regular file) and hands ONNX Runtime bytes without a path, so ONNX
//! Runtime cannot find the side files (it would look in the working directory, or nowhere). segrt
//! reads them beside the model the same way and hands their contents to ONNX Runtime from memory
//! (`AddExternalInitializersFromMemory`), under the location the model names; a host that gives the
//! model in memory gives the side files too. Locations that are absolute or leave the model's folder
//! are refused, as ONNX Runtime refuses them.

use std::fmt;
use std::path::{Component, Path};
use std::sync::Arc;

use ort::session::builder::SessionBuilder;
use prost::Message;

use crate::error::{Error, ErrorKind, Result};

use super::onnx_proto::ModelProto;

/// The side files of one model: each location the model names, with its contents.
#[derive(Clone, Default, PartialEq)]
pub struct ExternalData {
    files: Vec<(String, Arc<[u8]>)>,
}

impl fmt::Debug for ExternalData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.files.iter().map(|(name, bytes)| format!("{name} ({} bytes)", bytes.len()))).finish()
    }
}

/// The side files `model` names (each once, in the order its initializers name them), checked: a
/// relative location inside the model's folder.
pub fn locations(model: &[u8]) -> Result<Vec<String>> {
    // A model that is not a protobuf names no side file: ONNX Runtime then says what is wrong with it.
    let Ok(proto) = ModelProto::decode(model) else { return Ok(Vec::new()) };
    let mut found: Vec<String> = Vec::new();
    for tensor in proto.graph.iter().flat_map(|g| &g.initializer).filter(|t| t.data_location == 1) {
        let location = tensor.external_data.iter().find(|e| e.key == "location").map(|e| e.value.clone()).ok_or_else(|| {
            Error::new(
                ErrorKind::ModelInvalid,
                format!("initializer '{}' keeps its data outside the model but names no location", tensor.name),
            )
        })?;
        check_location(&location)?;
        if !found.contains(&location) {
            found.push(location);
        }
    }
    Ok(found)
}

/// A location must be relative and stay inside the model's folder (ONNX Runtime refuses the others
/// too): no root, drive, `..` or empty name.
fn check_location(location: &str) -> Result<()> {
    let path = Path::new(location);
    let inside = !location.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if inside && !location.contains('\\') {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::ModelInvalid,
        format!("the model's external data location '{location}' is absolute or leaves the model's folder: side files must lie beside the model or below it"),
    ))
}

impl ExternalData {
    /// No side files (a model that keeps its weights inside).
    pub fn none() -> Self {
        ExternalData::default()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The side files `model` names, read beside `model_path` as the model itself is read (a regular
    /// file, at most `max_bytes` each).
    pub fn beside(model: &[u8], model_path: &Path, max_bytes: u64) -> Result<Self> {
        let folder = model_path.parent().unwrap_or(Path::new("."));
        let files = locations(model)?
            .into_iter()
            .map(|location| {
                let bytes = super::model_file::read_model_file(&folder.join(&location), max_bytes)
                    .map_err(|e| e.context(format!("the external data '{location}' of model '{}'", model_path.display())))?;
                Ok((location, Arc::from(bytes)))
            })
            .collect::<Result<_>>()?;
        Ok(ExternalData { files })
    }

    /// The side files of a model given in memory, as the host gave them (location, contents): every
    /// location the model names must be given, and nothing else.
    pub fn given(model: &[u8], given: Vec<(String, Vec<u8>)>, max_bytes: u64) -> Result<Self> {
        let wanted = locations(model)?;
        for (location, bytes) in &given {
            if !wanted.contains(location) {
                return Err(Error::invalid(format!(
                    "external data '{location}' is given but the model names no such file (it names {wanted:?})"
                )));
            }
            if bytes.len() as u64 > max_bytes {
                return Err(Error::new(
                    ErrorKind::ModelInvalid,
                    format!("external data '{location}' has {} bytes, more than the limit of {max_bytes} (max_model_bytes)", bytes.len()),
                ));
            }
        }
        if let Some(missing) = wanted.iter().find(|w| !given.iter().any(|(l, _)| l == *w)) {
            return Err(missing_error(missing));
        }
        Ok(ExternalData { files: given.into_iter().map(|(l, b)| (l, Arc::from(b))).collect() })
    }

    /// For a model given in memory without side files: an error naming the first one it needs.
    pub fn require_none(model: &[u8]) -> Result<()> {
        match locations(model)?.first() {
            Some(location) => Err(missing_error(location)),
            None => Ok(()),
        }
    }

    /// Hands the side files to a session builder (ONNX Runtime keeps pointers into them: the
    /// builder holds the buffers).
    pub fn add_to(&self, mut builder: SessionBuilder) -> Result<SessionBuilder> {
        for (location, bytes) in &self.files {
            builder = builder.with_external_initializer_file_in_memory(location, bytes.clone()).map_err(|e| {
                Error::new(ErrorKind::ModelInvalid, format!("ONNX Runtime refused the external data '{location}': {}", e.message()))
            })?;
        }
        Ok(builder)
    }

    /// Feeds every side file's name and contents to a hash (the model cache's key).
    pub fn hash_into(&self, h: &mut xxhash_rust::xxh3::Xxh3) {
        for (location, bytes) in &self.files {
            h.update(location.as_bytes());
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        }
    }

    /// Bytes of all side files.
    pub fn byte_len(&self) -> usize {
        self.files.iter().map(|(_, b)| b.len()).sum()
    }
}

/// The side files of `model`: read beside it from `model_path`, or those the host gave with it in
/// memory (`given`); a model given in memory without them that names some is refused here, with
/// what to do.
pub fn resolve(model: &[u8], model_path: Option<&Path>, given: &Arc<ExternalData>, max_bytes: u64) -> Result<Arc<ExternalData>> {
    match model_path {
        Some(path) => Ok(Arc::new(ExternalData::beside(model, path, max_bytes)?)),
        None => {
            if given.is_empty() {
                ExternalData::require_none(model)?;
            }
            Ok(given.clone())
        }
    }
}

fn missing_error(location: &str) -> Error {
    Error::new(
        ErrorKind::ModelInvalid,
        format!(
            "the model keeps weights in the side file '{location}' (ONNX external data): load it from its file (the side files \
             are read beside it), or give the side files with the model (seg_create_from_memory_with_data)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_must_stay_inside_the_models_folder() {
        for ok in ["w.onnx_data", "weights/w.bin", "./w.bin"] {
            assert!(check_location(ok).is_ok(), "{ok}");
        }
        for bad in ["", "/etc/passwd", "../w.bin", "a/../../w.bin", "C:\\w.bin", "..\\w.bin"] {
            assert!(check_location(bad).is_err(), "{bad}");
        }
    }
}
