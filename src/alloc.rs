//! Fallible allocation of large buffers: a failed allocation must come back to the host as
//! `SEG_OUT_OF_MEMORY` with the size asked for, never abort its process.

use crate::error::{Error, ErrorKind, Result};

/// The error for `bytes` that could not be had for `what`.
pub fn out_of_memory(bytes: u64, what: &str) -> Error {
    Error::new(ErrorKind::OutOfMemory, format!("cannot allocate {} for {what}", size_text(bytes)))
}

/// A size for a message: bytes below 1 MiB (so a small budget never reads "0 MiB"), else MiB
/// with the exact byte count.
pub fn size_text(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{bytes} bytes")
    } else {
        format!("{} MiB ({bytes} bytes)", bytes >> 20)
    }
}

/// `vec![value; len]`, or `OutOfMemory` instead of an abort.
pub fn vec_of<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    resize(&mut v, len, value, what)?;
    Ok(v)
}

/// `v.resize(len, value)`, reserving fallibly first (reused buffers only grow when they must).
pub fn resize<T: Clone>(v: &mut Vec<T>, len: usize, value: T, what: &str) -> Result<()> {
    if len > v.len() {
        v.try_reserve_exact(len - v.len()).map_err(|_| out_of_memory((len * std::mem::size_of::<T>()) as u64, what))?;
    }
    v.resize(len, value);
    Ok(())
}

/// Checks that `bytes` of address space can be had now, for a library that allocates infallibly
/// (the resizer's scratch): reserving without touching costs nothing and fails where it would.
pub fn probe(bytes: usize, what: &str) -> Result<()> {
    let mut v: Vec<u8> = Vec::new();
    v.try_reserve_exact(bytes).map_err(|_| out_of_memory(bytes as u64, what))
}

/// A copy of `src`, or `OutOfMemory`.
pub fn copy_of<T: Clone>(src: &[T], what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(src.len()).map_err(|_| out_of_memory(std::mem::size_of_val(src) as u64, what))?;
    v.extend_from_slice(src);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        let e = vec_of(usize::MAX / 2, 0u8, "a test buffer").unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfMemory);
        assert!(e.message.contains("a test buffer"), "{}", e.message);
        assert_eq!(vec_of(3, 7u8, "small").unwrap(), vec![7, 7, 7]);
    }
}
