//! What a session asked for and got: the execution provider in use, why it differs from the one
//! requested, and where ONNX Runtime placed the nodes. (Which providers this machine offers is
//! `probe`'s.)

use ort::session::Session;
use serde::Serialize;

use super::placement::{self, NodeCount};

/// Which provider a session asked for, which one it got, and why they differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderReport {
    pub requested: String,
    /// The provider running the model: the one requested, "CPU" after a fallback, or the one
    /// requested with "(partly: N of M nodes on the CPU)" when ONNX Runtime placed nodes on the CPU.
    pub in_use: String,
    pub fallback_reason: Option<String>,
    /// How many of the session's nodes each ONNX Runtime provider was assigned, with their operator
    /// types (ONNX Runtime's own record, made when it partitions the graph among the providers);
    /// empty when ONNX Runtime could not say.
    pub nodes: Vec<NodeCount>,
    /// Under TensorRT: the shape profile TensorRT was given ("image 1..4x3x512x512"), or why none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensorrt_profile: Option<String>,
}

impl ProviderReport {
    /// Where this session and `other` (named `label`) run, in words: "CUDA:0", or
    /// "CUDA:0 (decoder: CPU)" when they differ.
    pub fn in_use_with(&self, label: &str, other: &ProviderReport) -> String {
        if self.in_use == other.in_use {
            self.in_use.clone()
        } else {
            format!("{} ({label}: {})", self.in_use, other.in_use)
        }
    }

    /// Reads where ONNX Runtime placed `session`'s nodes, and marks a session that runs partly on
    /// the CPU in `in_use`. A session that recorded nothing leaves `nodes` empty, with a log line.
    pub fn record_placement(&mut self, session: &Session) {
        self.nodes = match placement::of_session(session) {
            Ok(nodes) => nodes,
            Err(e) => {
                crate::log::emit(crate::log::LogLevel::Info, &format!("where ONNX Runtime placed the nodes is not known: {e}"));
                Vec::new()
            }
        };
        let cpu = self.nodes_on_cpu();
        if cpu > 0 && self.fallback_reason.is_none() {
            self.in_use = format!("{} (partly: {cpu} of {} nodes on the CPU)", self.requested, placement::total_nodes(&self.nodes));
        }
    }

    /// Nodes ONNX Runtime placed on the CPU although another provider was requested.
    pub fn nodes_on_cpu(&self) -> u64 {
        if self.requested == "CPU" {
            0
        } else {
            placement::cpu_nodes(&self.nodes)
        }
    }
}
