//! The UNet pipeline: image -> tensor -> ONNX Runtime -> mask at the image's size.
//!
//! A `UnetSegmenter` keeps the model bytes and options; each calling thread lazily gets its own
//! ONNX Runtime session (`Session::run` needs `&mut self`), so any number of threads can share
//! one segmenter without locks on the hot path.

use std::path::Path;
use std::time::Instant;

use half::f16;
use half::slice::HalfFloatSliceExt;
use ort::session::Session;
use ort::value::TensorRef;
use serde::Serialize;

use crate::engine::{read_model_file, ProviderReport, ThreadSessions};
use crate::error::{Error, Result, SegStatus};
use crate::image::{check_size, ImageView};
use crate::model::{inputs_of, outputs_of, Element, TensorInfo, UnetSpec};
use crate::options::Options;
use crate::postprocess::{segment, ScoreMaps, Segmentation};
use crate::runtime::RuntimeInfo;
use crate::preprocess::{model_size, prepare, TensorData};

/// What one run measured: milliseconds per stage and the size the model ran at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RunStats {
    pub preprocess_ms: f64,
    pub inference_ms: f64,
    pub postprocess_ms: f64,
    pub model_width: usize,
    pub model_height: usize,
}

/// A UNet segmentation model ready to run from any thread.
pub struct UnetSegmenter {
    options: Options,
    spec: UnetSpec,
    inputs: Vec<TensorInfo>,
    outputs: Vec<TensorInfo>,
    sessions: ThreadSessions,
}

/// What `seg_session_info` and `segrt info` report.
#[derive(Debug, Clone, Serialize)]
pub struct SessionInfo<'a> {
    pub kind: &'static str,
    pub inputs: &'a [TensorInfo],
    pub outputs: &'a [TensorInfo],
    pub interpretation: &'a UnetSpec,
    pub provider: &'a ProviderReport,
    pub intra_threads: String,
    /// Threads holding a session of this model now (a thread's session is released when it exits).
    pub threads_with_session: usize,
    /// Sessions created so far, including released ones.
    pub sessions_created: usize,
    /// Resident memory the first session added, including ONNX Runtime's one-time set-up.
    pub bytes_first_session: Option<u64>,
    /// Resident memory an extra calling thread's session added (null until a second thread ran).
    pub bytes_per_extra_thread: Option<u64>,
    pub model_bytes: usize,
    pub onnxruntime: RuntimeInfo,
}



impl UnetSegmenter {
    pub fn from_file(path: &Path, options: Options) -> Result<Self> {
        Self::from_memory(read_model_file(path)?, options)
    }

    /// Loads the model, checks it is a UNet segrt can run, and creates the calling thread's session.
    pub fn from_memory(model: Vec<u8>, options: Options) -> Result<Self> {
        options.validate()?;
        let sessions = ThreadSessions::new(model, &options)?;
        let (spec, inputs, outputs) = sessions.with(|s| Ok((UnetSpec::from_session(s)?, inputs_of(s), outputs_of(s))))?;
        Ok(UnetSegmenter { options, spec, inputs, outputs, sessions })
    }

    pub fn spec(&self) -> &UnetSpec {
        &self.spec
    }
    pub fn options(&self) -> &Options {
        &self.options
    }
    pub fn provider(&self) -> &ProviderReport {
        &self.sessions.provider
    }

    pub fn info(&self) -> SessionInfo<'_> {
        SessionInfo {
            kind: "unet",
            inputs: &self.inputs,
            outputs: &self.outputs,
            interpretation: &self.spec,
            provider: &self.sessions.provider,
            intra_threads: match self.options.intra_threads {
                0 => "ONNX Runtime default (one per physical core)".into(),
                n => n.to_string(),
            },
            threads_with_session: self.sessions.threads(),
            sessions_created: self.sessions.sessions_created(),
            bytes_first_session: self.sessions.session_bytes,
            bytes_per_extra_thread: self.sessions.extra_session_bytes(),
            model_bytes: self.sessions.model_len(),
            onnxruntime: RuntimeInfo::current(),
        }
    }

    /// Segments one image. The mask has the image's size.
    pub fn segment(&self, image: &ImageView<'_>, want_probability: bool) -> Result<(Segmentation, RunStats)> {
        check_size(image.width() as i64, image.height() as i64, self.options.max_pixels)?;
        let t0 = Instant::now();
        let size = model_size(&self.spec, (image.width(), image.height()), &self.options);
        check_size(size.0 as i64, size.1 as i64, self.options.max_pixels)
            .map_err(|e| e.context("model input size"))?;
        let tensor = prepare(image, &self.spec, size, &self.options)?;
        let t1 = Instant::now();
        let (shape, scores) = self.sessions.with(|session| {
            // Test builds only: a panic deep inside a run, while the thread's session is locked.
            #[cfg(feature = "fault-injection")]
            if std::env::var_os("SEGRT_INJECT_PANIC").is_some() {
                panic!("injected panic (fault-injection build, SEGRT_INJECT_PANIC is set)");
            }
            run_once(session, &self.spec, size, &tensor)
        })?;
        let t2 = Instant::now();
        let maps = ScoreMaps::from_output(&shape, &scores, self.spec.input_layout, size)?;
        let seg = segment(maps, (image.width(), image.height()), &self.options, want_probability)?;
        let t3 = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        Ok((
            seg,
            RunStats {
                preprocess_ms: ms(t0, t1),
                inference_ms: ms(t1, t2),
                postprocess_ms: ms(t2, t3),
                model_width: size.0,
                model_height: size.1,
            },
        ))
    }
}

/// One `session.run`; returns the output's shape and its values as f32.
fn run_once(session: &mut Session, spec: &UnetSpec, (w, h): (usize, usize), tensor: &TensorData) -> Result<(Vec<i64>, Vec<f32>)> {
    let shape = spec.input_shape(w, h).to_vec();
    let input = match tensor {
        TensorData::F32(v) => TensorRef::from_array_view((shape, v.as_slice())).map(|t| t.into_dyn()),
        TensorData::F16(v) => TensorRef::from_array_view((shape, v.as_slice())).map(|t| t.into_dyn()),
    }
    .map_err(|e| Error::new(SegStatus::SEG_INTERNAL, format!("cannot wrap the input tensor: {e}")))?;
    let outputs = session
        .run(ort::inputs![spec.input_name.as_str() => input])
        .map_err(|e| Error::inference(format!("ONNX Runtime run failed: {}", e.message())))?;
    let value = &outputs[spec.output_name.as_str()];
    let bad = |e: ort::Error| Error::inference(format!("cannot read output '{}': {e}", spec.output_name));
    match spec.output_element {
        Element::F32 => {
            let (s, data) = value.try_extract_tensor::<f32>().map_err(bad)?;
            Ok((s.to_vec(), data.to_vec()))
        }
        Element::F16 => {
            let (s, data) = value.try_extract_tensor::<f16>().map_err(bad)?;
            let mut out = vec![0f32; data.len()];
            data.convert_to_f32_slice(&mut out);
            Ok((s.to_vec(), out))
        }
    }
}
