//! One optimised graph shared by the sessions of a pool, weights included.
//!
//! ONNX Runtime can serialise a session's optimised graph in its own format (ORT format, a
//! flatbuffer). Sessions loaded from those bytes with `session.use_ort_model_bytes_for_initializers`
//! read their weights in place instead of copying them. What they would still each hold are the
//! weights their kernels pre-pack (MatMul/Conv blocks rearranged for the CPU): ONNX Runtime caches
//! those in a pre-packed weights container only for initializers the caller added with
//! `AddInitializer`. So the graph's initializers are also handed to every session as such values —
//! views of the same bytes, nothing copied — and all sessions share one container.

use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ort::memory::MemoryInfo;
use ort::session::builder::{PrepackedWeights, SessionBuilder};
use ort::AsPointer;

/// The serialised graph, the values viewing its initializers, and the container of the weights
/// pre-packed from them. Declared in drop order: values before the bytes they point into.
struct Inner {
    initializers: Vec<(CString, *mut ort::sys::OrtValue)>,
    /// Cleared when ONNX Runtime refused them: some kernels pre-pack weights they cannot cache
    /// (fp16 or quantised convolutions) and then refuse shared initializers altogether.
    initializers_accepted: AtomicBool,
    prepacked: PrepackedWeights,
    bytes: Vec<u8>,
}

// SAFETY: the values are read-only views of `bytes`, which never change after construction;
// ONNX Runtime reads shared initializers from any session's threads.
unsafe impl Send for Inner {}
// SAFETY: as for Send: nothing reachable from `Inner` is written after construction.
unsafe impl Sync for Inner {}

impl Drop for Inner {
    fn drop(&mut self) {
        let api = ort::api();
        for (_, value) in self.initializers.drain(..) {
            // SAFETY: created by CreateTensorWithDataAsOrtValue below, released once. Every session
            // that used it holds this `Inner` alive, so none is left.
            unsafe { (api.ReleaseValue)(value) };
        }
    }
}

/// ONNX Runtime's serialisation of an optimised graph, shared (cheaply cloned) by the sessions of a
/// pool. Sessions built from it must keep a clone for as long as they live.
#[derive(Clone)]
pub struct SharedGraph(Arc<Inner>);

impl SharedGraph {
    /// Wraps the bytes ONNX Runtime wrote. Initializers that cannot be viewed (strings, a layout
    /// this reader does not know) are simply not shared: sessions then keep their own pre-packed
    /// copy of those.
    pub fn new(bytes: Vec<u8>) -> SharedGraph {
        let mut inner =
            Inner { initializers: Vec::new(), initializers_accepted: AtomicBool::new(true), prepacked: PrepackedWeights::new(), bytes };
        let views = initializer_views(&inner.bytes).unwrap_or_default();
        let memory = MemoryInfo::default();
        let api = ort::api();
        for view in views {
            let Ok(name) = CString::new(view.name) else { continue };
            let data = inner.bytes[view.data.clone()].as_ptr().cast_mut().cast::<c_void>();
            let mut value = std::ptr::null_mut();
            // SAFETY: the data range lies inside `bytes` (checked by the reader), which outlives the
            // value (drop order of `Inner`); ONNX Runtime does not write to initializers.
            let status = unsafe {
                (api.CreateTensorWithDataAsOrtValue)(
                    memory.ptr(),
                    data,
                    view.data.len(),
                    view.dims.as_ptr(),
                    view.dims.len(),
                    view.element_type,
                    &mut value,
                )
            };
            if status.0.is_null() && !value.is_null() {
                inner.initializers.push((name, value));
            } else if !status.0.is_null() {
                // SAFETY: a status ONNX Runtime returned, released once.
                unsafe { (api.ReleaseStatus)(status.0) };
            }
        }
        SharedGraph(Arc::new(inner))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0.bytes
    }

    /// Bytes of the serialised graph.
    pub fn byte_len(&self) -> usize {
        self.0.bytes.len()
    }

    /// Initializers handed to sessions as shared values (0 once ONNX Runtime refused them).
    pub fn shared_initializers(&self) -> usize {
        if self.sharing_initializers() {
            self.0.initializers.len()
        } else {
            0
        }
    }

    /// Whether sessions get the shared initializers (until ONNX Runtime refused them once).
    pub fn sharing_initializers(&self) -> bool {
        !self.0.initializers.is_empty() && self.0.initializers_accepted.load(Ordering::Relaxed)
    }

    /// Sessions of this graph stop getting shared initializers: they still read their weights from
    /// the graph's bytes, and pre-pack their own.
    pub fn stop_sharing_initializers(&self) {
        self.0.initializers_accepted.store(false, Ordering::Relaxed);
    }

    /// Adds the shared initializers and the common pre-packed weights container to a builder.
    pub fn share_with(&self, builder: SessionBuilder) -> std::result::Result<SessionBuilder, String> {
        let api = ort::api();
        for (name, value) in &self.0.initializers {
            // SAFETY: the builder's options pointer is valid while the builder lives; ONNX Runtime
            // keeps the value pointer (not a copy), which lives as long as this graph, and the
            // session built from this builder holds a clone of the graph.
            let status = unsafe { (api.AddInitializer)(builder.ptr().cast_mut(), name.as_ptr(), value.cast_const()) };
            if !status.0.is_null() {
                // SAFETY: a live status's message is a NUL-terminated string it owns; copied before
                // the status is released, once.
                let message = unsafe { std::ffi::CStr::from_ptr((api.GetErrorMessage)(status.0)).to_string_lossy().into_owned() };
                // SAFETY: as above.
                unsafe { (api.ReleaseStatus)(status.0) };
                return Err(format!("cannot share initializer {name:?}: {message}"));
            }
        }
        builder.with_prepacked_weights(&self.0.prepacked).map_err(|e| e.message().to_string())
    }
}

/// Where one initializer's data lies in the serialised graph.
struct InitializerView {
    name: String,
    dims: Vec<i64>,
    element_type: ort::sys::ONNXTensorElementDataType,
    data: std::ops::Range<usize>,
}

/// The graph's initializers with inline data, read from the flatbuffer (schema: ONNX Runtime's
/// `ort.fbs`: InferenceSession.model -> Model.graph -> Graph.initializers -> Tensor). `None` when
/// the bytes do not look like an ORT-format model; every offset is bounds-checked.
fn initializer_views(bytes: &[u8]) -> Option<Vec<InitializerView>> {
    if bytes.get(4..8)? != b"ORTM" {
        return None;
    }
    let root = Table::root(bytes)?;
    let graph = root.table(1)?.table(7)?;
    let (first, count) = graph.vector(0)?;
    let mut views = Vec::with_capacity(count);
    for k in 0..count {
        let at = first.checked_add(k.checked_mul(4)?)?;
        let tensor = Table::at(bytes, at.checked_add(read_u32(bytes, at)? as usize)?)?;
        let Some(name) = tensor.string(0) else { continue };
        let element_type = tensor.i32(3, 0);
        let Some(size) = element_size(element_type) else { continue };
        let dims: Vec<i64> = match tensor.vector(2) {
            Some((start, n)) => (0..n).map(|i| read_i64(bytes, start + 8 * i)).collect::<Option<_>>()?,
            None => Vec::new(),
        };
        let Some((data_start, data_len)) = tensor.vector(4) else { continue };
        let elements = dims.iter().try_fold(1usize, |acc, d| usize::try_from(*d).ok().and_then(|d| acc.checked_mul(d)));
        // Only data that is exactly the tensor, aligned for its element type.
        if data_len == 0 || elements.and_then(|e| e.checked_mul(size)) != Some(data_len) || data_start % size != 0 {
            continue;
        }
        bytes.get(data_start..data_start + data_len)?;
        views.push(InitializerView {
            name: name.to_owned(),
            dims,
            element_type: tensor_type(element_type)?,
            data: data_start..data_start + data_len,
        });
    }
    Some(views)
}

/// Bytes per element of the ONNX tensor types shared (not strings).
fn element_size(onnx_type: i32) -> Option<usize> {
    match onnx_type {
        1 | 6 | 12 => Some(4),      // float, int32, uint32
        2 | 3 | 9 => Some(1),       // uint8, int8, bool
        4 | 5 | 10 | 16 => Some(2), // uint16, int16, float16, bfloat16
        7 | 11 | 13 => Some(8),     // int64, double, uint64
        _ => None,
    }
}

fn tensor_type(onnx_type: i32) -> Option<ort::sys::ONNXTensorElementDataType> {
    use ort::sys::ONNXTensorElementDataType as T;
    Some(match onnx_type {
        1 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
        2 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,
        3 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
        4 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16,
        5 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,
        6 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
        7 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
        9 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
        10 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
        11 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
        12 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,
        13 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,
        16 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
        _ => return None,
    })
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at.checked_add(2)?)?.try_into().ok()?))
}

fn read_i64(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

/// A flatbuffer table: its position and its vtable's.
struct Table<'a> {
    bytes: &'a [u8],
    at: usize,
    vtable: usize,
}

impl<'a> Table<'a> {
    fn root(bytes: &'a [u8]) -> Option<Table<'a>> {
        Table::at(bytes, read_u32(bytes, 0)? as usize)
    }

    fn at(bytes: &'a [u8], at: usize) -> Option<Table<'a>> {
        let back = read_u32(bytes, at)? as i32 as i64;
        let vtable = usize::try_from(at as i64 - back).ok()?;
        read_u16(bytes, vtable)?;
        Some(Table { bytes, at, vtable })
    }

    /// Where field `index` lies, if present.
    fn field(&self, index: usize) -> Option<usize> {
        let vtable_len = read_u16(self.bytes, self.vtable)? as usize;
        let slot = 4 + 2 * index;
        if slot + 2 > vtable_len {
            return None;
        }
        match read_u16(self.bytes, self.vtable + slot)? {
            0 => None,
            offset => self.at.checked_add(offset as usize),
        }
    }

    /// The target of an offset field.
    fn target(&self, index: usize) -> Option<usize> {
        let at = self.field(index)?;
        at.checked_add(read_u32(self.bytes, at)? as usize)
    }

    fn table(&self, index: usize) -> Option<Table<'a>> {
        Table::at(self.bytes, self.target(index)?)
    }

    /// A vector field: where its first element lies and how many there are.
    fn vector(&self, index: usize) -> Option<(usize, usize)> {
        let at = self.target(index)?;
        Some((at.checked_add(4)?, read_u32(self.bytes, at)? as usize))
    }

    fn string(&self, index: usize) -> Option<&'a str> {
        let (start, len) = self.vector(index)?;
        std::str::from_utf8(self.bytes.get(start..start.checked_add(len)?)?).ok()
    }

    fn i32(&self, index: usize, default: i32) -> i32 {
        self.field(index).and_then(|at| read_u32(self.bytes, at)).map_or(default, |v| v as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_an_ort_graph_give_no_views() {
        assert!(initializer_views(b"").is_none());
        assert!(initializer_views(b"\x08\x00\x00\x00ORTM").is_none());
        let mut junk = vec![0xffu8; 64];
        junk[4..8].copy_from_slice(b"ORTM");
        assert!(initializer_views(&junk).is_none());
    }
}
