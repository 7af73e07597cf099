//! What a session's model declares: its inputs and outputs as ONNX Runtime reports them.

use ort::session::{Session, SessionOutputs};
use ort::value::ValueType;
use serde::Serialize;

use crate::error::{Error, Result};

/// One model input or output as reported by ONNX Runtime. `-1` marks a dynamic dimension.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorInfo {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<i64>,
}

impl TensorInfo {
    pub fn new(name: &str, dtype: &str, shape: &[i64]) -> Self {
        TensorInfo { name: name.to_string(), dtype: dtype.to_string(), shape: shape.to_vec() }
    }

    fn of(name: &str, ty: &ValueType) -> Self {
        match ty {
            ValueType::Tensor { ty, shape, .. } => {
                TensorInfo { name: name.to_string(), dtype: ty.to_string(), shape: shape.iter().copied().collect() }
            }
            other => TensorInfo { name: name.to_string(), dtype: format!("{other:?}"), shape: vec![] },
        }
    }
}

pub fn inputs_of(session: &Session) -> Vec<TensorInfo> {
    session.inputs().iter().map(|o| TensorInfo::of(o.name(), o.dtype())).collect()
}
pub fn outputs_of(session: &Session) -> Vec<TensorInfo> {
    session.outputs().iter().map(|o| TensorInfo::of(o.name(), o.dtype())).collect()
}

/// "name f32[1,3,256,256]" lists for error messages and `segrt info`.
pub fn describe(infos: &[TensorInfo]) -> String {
    infos
        .iter()
        .map(|t| {
            let dims: Vec<String> = t.shape.iter().map(|d| if *d < 0 { "?".into() } else { d.to_string() }).collect();
            format!("{} {}[{}]", t.name, t.dtype, dims.join(","))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A float output of a run: its shape and a copy of its data (allocated fallibly), so the session can
/// go back to its pool. `what` names the model in errors ("SAM2 decoder", "video memory encoder").
pub fn f32_output(outputs: &SessionOutputs<'_>, name: &str, what: &str) -> Result<(Vec<i64>, Vec<f32>)> {
    let value = outputs.get(name).ok_or_else(|| Error::unsupported_model(format!("{what}: no output '{name}'")))?;
    let (shape, data) =
        value.try_extract_tensor::<f32>().map_err(|e| Error::inference(format!("cannot read {what} output '{name}': {e}")))?;
    Ok((shape.to_vec(), crate::alloc::copy_of(data, what)?))
}
