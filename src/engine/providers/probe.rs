//! What the loaded ONNX Runtime build offers and what initialises on this machine: each execution
//! provider tried on a tiny session (`seg_providers`, `segrt providers`).

use serde::Serialize;

use crate::engine::session::build_session;
use crate::error::Result;
use crate::options::{Options, Provider, ProviderPolicy};
use crate::runtime;

/// What `seg_providers` / `segrt providers` report for one execution provider.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderProbe {
    pub name: String,
    /// The `Provider` value to put in `SegOptions::provider`.
    pub value: i32,
    pub onnxruntime_name: &'static str,
    /// The loaded ONNX Runtime build includes it (`GetAvailableProviders`).
    pub in_this_build: bool,
    /// A tiny session with it (and nothing else) was created on this machine.
    pub initialises: bool,
    /// Why it did not initialise: ONNX Runtime's own words (e.g. a missing libcublasLt.so.13).
    pub reason: Option<String>,
}

/// The execution providers the loaded ONNX Runtime build includes (its `GetAvailableProviders`).
pub fn available_providers() -> Vec<String> {
    let api = ort::api();
    let (mut list, mut n): (*mut *mut std::ffi::c_char, std::ffi::c_int) = (std::ptr::null_mut(), 0);
    // SAFETY: the C API fills a list it owns; it is read, then released with its own function.
    unsafe {
        let status = (api.GetAvailableProviders)(&mut list, &mut n);
        if !status.0.is_null() {
            (api.ReleaseStatus)(status.0);
            return Vec::new();
        }
        let names = (0..n.max(0) as usize).map(|i| std::ffi::CStr::from_ptr(*list.add(i)).to_string_lossy().into_owned()).collect();
        let status = (api.ReleaseAvailableProviders)(list, n);
        if !status.0.is_null() {
            (api.ReleaseStatus)(status.0);
        }
        names
    }
}

/// Tries each execution provider on this machine by creating a tiny session with it.
pub fn probe_providers(options: &Options) -> Result<Vec<ProviderProbe>> {
    runtime::environment(options.ort_path.as_deref())?;
    let available = available_providers();
    let model = probe_model();
    Ok(Provider::ALL
        .iter()
        .map(|&p| {
            let probe_options = Options { provider: p, provider_policy: ProviderPolicy::Require, intra_threads: 1, ..options.clone() };
            let outcome = build_session(&model, &probe_options);
            ProviderProbe {
                name: p.display_name(options.device_id),
                value: p as i32,
                onnxruntime_name: p.ort_name(),
                in_this_build: available.iter().any(|a| a == p.ort_name()),
                initialises: outcome.is_ok(),
                reason: outcome.err().map(|e| e.message),
            }
        })
        .collect())
}

/// The probe's model, encoded here (a library ships no model file): a valid two-op classifier,
/// image [1,3,32,32] -> GlobalAveragePool -> Flatten -> [1,3], enough to make every provider
/// initialise. ONNX IR 8, opset 17; the fault tests' `not_segmentation.onnx` without its producer.
fn probe_model() -> Vec<u8> {
    tiny_model(true)
}

/// One GlobalAveragePool node: `image` [1,3,32,32] -> `pooled` [1,3,1,1], no intermediate tensor
/// (what `arena::release_unused` runs with its output pre-allocated: the run takes no arena block).
pub(crate) fn pooling_model() -> Vec<u8> {
    tiny_model(false)
}

/// The probe's model, or without its Flatten node.
fn tiny_model(flatten: bool) -> Vec<u8> {
    // Protobuf: a field is its key (number << 3 | wire type), then a varint or a length and bytes.
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn number(out: &mut Vec<u8>, field: u64, v: u64) {
        varint(out, field << 3);
        varint(out, v);
    }
    fn bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
        varint(out, field << 3 | 2);
        varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }
    fn message(out: &mut Vec<u8>, field: u64, fill: impl FnOnce(&mut Vec<u8>)) {
        let mut m = Vec::new();
        fill(&mut m);
        bytes(out, field, &m);
    }
    // NodeProto: input 1, output 2, op_type 4, attribute 5 (AttributeProto: name 1, i 3, type 20).
    let node = |out: &mut Vec<u8>, input: &str, output: &str, op: &str, axis: Option<u64>| {
        message(out, 1, |n| {
            bytes(n, 1, input.as_bytes());
            bytes(n, 2, output.as_bytes());
            bytes(n, 4, op.as_bytes());
            if let Some(axis) = axis {
                message(n, 5, |a| {
                    bytes(a, 1, b"axis");
                    number(a, 3, axis);
                    number(a, 20, 2); // AttributeProto.INT
                });
            }
        });
    };
    // ValueInfoProto: name 1, type 2 -> TypeProto.tensor_type 1 -> elem_type 1 (FLOAT = 1), shape 2
    // -> dim 1 -> dim_value 1.
    let value = |out: &mut Vec<u8>, field: u64, name: &str, dims: &[u64]| {
        message(out, field, |v| {
            bytes(v, 1, name.as_bytes());
            message(v, 2, |t| {
                message(t, 1, |tensor| {
                    number(tensor, 1, 1);
                    message(tensor, 2, |shape| {
                        for d in dims {
                            message(shape, 1, |dim| number(dim, 1, *d));
                        }
                    });
                });
            });
        });
    };
    // ModelProto: ir_version 1, graph 7 (GraphProto: node 1, name 2, input 11, output 12), opset_import 8.
    let mut model = Vec::new();
    number(&mut model, 1, 8);
    message(&mut model, 7, |g| {
        node(g, "image", "pooled", "GlobalAveragePool", None);
        if flatten {
            node(g, "pooled", "class_scores", "Flatten", Some(1));
        }
        bytes(g, 2, b"not_segmentation");
        value(g, 11, "image", &[1, 3, 32, 32]);
        if flatten {
            value(g, 12, "class_scores", &[1, 3]);
        } else {
            value(g, 12, "pooled", &[1, 3, 1, 1]);
        }
    });
    message(&mut model, 8, |o| {
        bytes(o, 1, b"");
        number(o, 2, 17);
    });
    model
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_model_is_the_fault_tests_classifier() {
        let fixture = include_bytes!("../../../models/test/not_segmentation.onnx");
        // The fixture's field 2 (producer_name, 26 bytes) is the only field the probe leaves out.
        assert_eq!(&fixture[2..4], &[0x12, 26]);
        let without_producer = [&fixture[..2], &fixture[4 + 26..]].concat();
        assert_eq!(probe_model(), without_producer);
    }
}
