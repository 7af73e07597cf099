//! The inputs and outputs a model file declares, read from its ONNX protobuf without ONNX Runtime:
//! what a session will report, known before the session is built (TensorRT's shape profiles are
//! provider options, given when the session is created).

use prost::Message;

use super::io::TensorInfo;
use super::onnx_proto::{ModelProto, ValueInfoProto};

/// ONNX's element type numbers as ONNX Runtime names them in `TensorInfo::dtype`.
fn dtype_name(elem_type: i32) -> String {
    let name = match elem_type {
        1 => "f32",
        2 => "u8",
        3 => "i8",
        4 => "u16",
        5 => "i16",
        6 => "i32",
        7 => "i64",
        8 => "String",
        9 => "bool",
        10 => "f16",
        11 => "f64",
        12 => "u32",
        13 => "u64",
        16 => "bf16",
        other => return format!("type {other}"),
    };
    name.to_string()
}

fn tensor_info(v: &ValueInfoProto) -> TensorInfo {
    let tensor = v.r#type.as_ref().and_then(|t| t.tensor_type.as_ref());
    let shape = tensor
        .and_then(|t| t.shape.as_ref())
        .map(|s| s.dim.iter().map(|d| d.dim_value.filter(|v| *v >= 0).unwrap_or(-1)).collect())
        .unwrap_or_default();
    TensorInfo { name: v.name.clone(), dtype: tensor.map(|t| dtype_name(t.elem_type)).unwrap_or_else(|| "not a tensor".into()), shape }
}

/// The model's inputs (without initializers listed among them, which ONNX Runtime does not report
/// as inputs) and outputs, as a session would report them; `Err` when the bytes are not an ONNX model.
pub fn declared_io(model: &[u8]) -> Result<(Vec<TensorInfo>, Vec<TensorInfo>), String> {
    let model = ModelProto::decode(model).map_err(|e| format!("not an ONNX model: {e}"))?;
    let graph = model.graph.ok_or("not an ONNX model: it has no graph")?;
    let weights: std::collections::HashSet<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
    let inputs = graph.input.iter().filter(|v| !weights.contains(v.name.as_str())).map(tensor_info).collect();
    Ok((inputs, graph.output.iter().map(tensor_info).collect()))
}
