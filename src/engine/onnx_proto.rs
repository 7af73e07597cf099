//! The parts of ONNX's protobuf schema that segrt reads without ONNX Runtime: a graph's inputs and
//! outputs (`declared_io`) and its initializers' names and external-data locations
//! (`external_data`). Only the messages and fields needed are declared; prost skips every other
//! field (nodes, weights) without copying it.

use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub(super) struct ModelProto {
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct GraphProto {
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
}

/// A TensorProto: its name and where its weights are (the weights themselves are skipped).
#[derive(Clone, PartialEq, Message)]
pub(super) struct TensorProto {
    #[prost(string, tag = "8")]
    pub name: String,
    #[prost(message, repeated, tag = "13")]
    pub external_data: Vec<StringStringEntryProto>,
    /// 1 = EXTERNAL.
    #[prost(int32, tag = "14")]
    pub data_location: i32,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct StringStringEntryProto {
    #[prost(string, tag = "1")]
    pub key: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct ValueInfoProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct TypeProto {
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TensorTypeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct TensorTypeProto {
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    #[prost(message, optional, tag = "2")]
    pub shape: Option<ShapeProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct ShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<DimensionProto>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct DimensionProto {
    #[prost(int64, optional, tag = "1")]
    pub dim_value: Option<i64>,
}
