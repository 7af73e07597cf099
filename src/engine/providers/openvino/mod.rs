//! Intel OpenVINO (the onnxruntime-openvino build, 1.24.1 its last): what its provider is told
//! (`options`: device, precision, model cache folder, threads, streams). It needs no library beside
//! ONNX Runtime's own files: OpenVINO's plugins are found beside `libopenvino`.
//!
//! What it cannot run, seen with 1.24.1 on a CPU: a SAM2 tracker's image and memory encoders
//! (session creation fails: "vision_pos_enc node not found in graph cache", "maskmem_pos_enc ...":
//! a constant output OpenVINO folds away), transformers' SAM2/SAM3 vision encoders ("doesn't support
//! Reshape operation with dynamic rank"), and on 1.24.1 SAM2's hiera image encoders too: segrt turns
//! ONNX Runtime's constant folding off before 1.28 (runtime/release.rs), and unfolded, their window
//! Reshapes have no static rank (folded, OpenVINO compiled them but their masks changed from session to
//! session). Those failures reach the provider policy with the plain reason `unsupported_model` gives
//! (errors.rs).

pub mod options;

use ort::ep::{self, ArbitrarilyConfigurableExecutionProvider, ExecutionProviderDispatch};

use crate::error::{Error, Result};
use crate::options::Options;

pub use options::{Device, OpenVinoOptions, Precision};

/// The OpenVINO provider with the user's options (refused in segrt's words before ONNX Runtime
/// sees them when they cannot work).
pub(crate) fn dispatch(options: &Options) -> Result<ExecutionProviderDispatch> {
    let mut ep = ep::OpenVINO::default();
    for (key, value) in provider_options(options)? {
        ep = ep.with_arbitrary_config(key, value);
    }
    Ok(ep.build().error_on_failure())
}

/// The OpenVINO provider's options, as ONNX Runtime's keys.
pub fn provider_options(options: &Options) -> Result<Vec<(&'static str, String)>> {
    options.gpu.openvino.provider_options().map_err(Error::invalid)
}

/// The plain reason for an OpenVINO failure on a model it cannot compile, when segrt knows it.
pub fn unsupported_model(message: &str) -> Option<&'static str> {
    if message.contains("pos_enc node not found in graph cache") {
        Some(
            "OpenVINO cannot compile this model (a SAM2 tracker's image or memory encoder: OpenVINO folds away its \
             positional-encoding output): run it on the CPU (fallback policy, or the CPU provider for this model)",
        )
    } else if message.contains("Reshape operation with dynamic rank") {
        Some(
            "OpenVINO cannot compile this model (a Reshape of dynamic rank, as in transformers' SAM2/SAM3 vision \
             encoders, and in SAM2's hiera image encoders under ONNX Runtime before 1.28, whose constant folding \
             segrt turns off): run it on the CPU (fallback policy, or the CPU provider for this model)",
        )
    } else {
        None
    }
}
