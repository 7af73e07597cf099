//! Reading a model's bytes: from a file (only a regular file, within `max_model_bytes`, read with
//! that bound) or from the host's memory (copied after the same check).

use std::io::Read;
use std::path::Path;

use crate::alloc;
use crate::error::{Error, ErrorKind, Result};

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
