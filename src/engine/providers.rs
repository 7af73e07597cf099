//! Execution providers: what a session asked for and got, and what the loaded ONNX Runtime build
//! offers and initialises on this machine.

use serde::Serialize;

use crate::error::Result;
use crate::options::{Options, Provider, ProviderPolicy};
use crate::runtime;

use super::session::build_session;

/// Which provider a session asked for, which one it got, and why they differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderReport {
    pub requested: String,
    pub in_use: String,
    pub fallback_reason: Option<String>,
}

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

/// A valid one-op model (a pooling "classifier"): enough to make every provider initialise.
const PROBE_MODEL: &[u8] = include_bytes!("../../models/test/not_segmentation.onnx");

/// Tries each execution provider on this machine by creating a tiny session with it.
pub fn probe_providers(options: &Options) -> Result<Vec<ProviderProbe>> {
    runtime::environment(options.ort_path.as_deref())?;
    let available = available_providers();
    Ok(Provider::ALL
        .iter()
        .map(|&p| {
            let probe_options = Options { provider: p, provider_policy: ProviderPolicy::Require, intra_threads: 1, ..options.clone() };
            let outcome = build_session(PROBE_MODEL, &probe_options);
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
