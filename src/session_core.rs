//! What every pipeline handle (`UnetSegmenter`, `Sam2Segmenter`, the video model) holds besides
//! its models: the user's options and the intensity setting, changed from any thread; and the part
//! of the session info each reports alike (the intensity stage, the provider, the threads, ONNX
//! Runtime).

use serde::Serialize;

use crate::engine::ProviderReport;
use crate::error::Result;
use crate::image::intensity::{describe, Intensity, IntensitySetting};
use crate::options::Options;
use crate::runtime::RuntimeInfo;

/// A handle's options and intensity setting (see the module documentation).
#[derive(Debug)]
pub struct SessionCore {
    options: Options,
    intensity: IntensitySetting,
}

/// The part of `seg_session_info` every pipeline reports alike.
#[derive(Debug, Clone, Serialize)]
pub struct CoreInfo<'a> {
    /// The intensity stage in use (before the model's normalisation), as its formula.
    pub intensity: String,
    /// The provider of the handle's main model (the encoder's for SAM2).
    pub provider: &'a ProviderReport,
    pub intra_threads: String,
    pub onnxruntime: RuntimeInfo,
}

impl SessionCore {
    /// The options a handle was built with (checked by then), and no intensity setting.
    pub fn new(options: Options) -> Self {
        SessionCore { options, intensity: IntensitySetting::default() }
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The intensity stage for later calls (None = the default; see [`crate::image::intensity`]).
    /// Any thread, any time: a call in progress keeps the setting it started with.
    pub fn set_intensity(&self, intensity: Option<Intensity>) -> Result<()> {
        self.intensity.set(intensity)
    }

    /// The setting now; a call takes it once, at its start.
    pub fn intensity(&self) -> Option<Intensity> {
        self.intensity.get()
    }

    /// The info every pipeline reports, with the provider of its main model.
    pub fn info<'a>(&self, provider: &'a ProviderReport) -> CoreInfo<'a> {
        CoreInfo {
            intensity: describe(self.intensity().as_ref()),
            provider,
            intra_threads: intra_threads_text(self.options.intra_threads),
            onnxruntime: RuntimeInfo::current(),
        }
    }
}

/// How `seg_session_info` describes the threads a session runs on.
pub fn intra_threads_text(n: usize) -> String {
    match n {
        0 => "the process-wide ONNX Runtime thread pool (one thread per physical core), shared by every session".into(),
        n => format!("{n} (a pool of the session's own)"),
    }
}
