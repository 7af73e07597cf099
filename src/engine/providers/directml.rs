//! DirectML on any DirectX 12 GPU (Windows, the onnxruntime-directml build): what its provider is
//! told and the library it needs.

use ort::ep::{self, ExecutionProviderDispatch};

use crate::options::Options;

#[cfg(windows)]
use super::libraries::lib;
use super::libraries::GpuLibrary;

/// onnxruntime.dll of the DirectML build delay-loads DirectML.dll by name: without this preload a
/// host whose exe folder lacks it gets System32's older copy.
#[cfg(windows)]
pub const DIRECTML_LIBRARIES: &[GpuLibrary] = &[lib("DirectML.dll")];
#[cfg(not(windows))]
pub const DIRECTML_LIBRARIES: &[GpuLibrary] = &[];

/// The DirectML provider on the adapter `device_id`.
pub(crate) fn dispatch(options: &Options) -> ExecutionProviderDispatch {
    ep::DirectML::default().with_device_id(options.device_id).build().error_on_failure()
}
