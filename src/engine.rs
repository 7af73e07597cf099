//! Creating ONNX Runtime sessions: threads, execution provider with an explicit fallback policy,
//! and the errors ONNX Runtime gives translated into segrt statuses.

use ort::ep;
use ort::session::Session;
use serde::Serialize;

use crate::error::{Error, Result, SegStatus};
use crate::options::{Options, SegProvider, SegProviderPolicy};
use crate::runtime;

/// Which provider a session asked for, which one it got, and why they differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderReport {
    pub requested: String,
    pub in_use: String,
    pub fallback_reason: Option<String>,
}

fn provider_name(p: SegProvider, device_id: i32) -> String {
    match p {
        SegProvider::SEG_PROVIDER_CPU => "CPU".into(),
        SegProvider::SEG_PROVIDER_CUDA => format!("CUDA:{device_id}"),
    }
}

/// Builds a session from model bytes on the calling thread.
pub fn build_session(model: &[u8], options: &Options) -> Result<(Session, ProviderReport)> {
    if model.is_empty() {
        return Err(Error::new(SegStatus::SEG_MODEL_INVALID, "the model is empty (0 bytes)"));
    }
    let env = runtime::environment(options.ort_path.as_deref())?;
    let ort_err = |e: ort::Error<ort::session::builder::SessionBuilder>| Error::new(SegStatus::SEG_INTERNAL, e.to_string());
    let mut builder = Session::builder(env).map_err(|e| Error::new(SegStatus::SEG_INTERNAL, e.to_string()))?;
    if options.intra_threads > 0 {
        builder = builder.with_intra_threads(options.intra_threads).map_err(ort_err)?;
    }

    let requested = provider_name(options.provider, options.device_id);
    let mut report = ProviderReport { requested: requested.clone(), in_use: requested.clone(), fallback_reason: None };
    let dispatch = match options.provider {
        SegProvider::SEG_PROVIDER_CPU => None,
        // error_on_failure: ort's default is to log and silently run on the CPU.
        SegProvider::SEG_PROVIDER_CUDA => Some(ep::CUDA::default().with_device_id(options.device_id).build().error_on_failure()),
    };
    if let Some(dispatch) = dispatch {
        builder = match builder.with_execution_providers([dispatch]) {
            Ok(b) => b,
            Err(e) => {
                let reason = format!("{requested} could not be initialised: {}", e.message());
                if options.provider_policy == SegProviderPolicy::SEG_PROVIDER_REQUIRE {
                    return Err(Error::new(SegStatus::SEG_PROVIDER_UNAVAILABLE, reason + " (policy: require)"));
                }
                report.in_use = "CPU".into();
                report.fallback_reason = Some(reason);
                e.recover()
            }
        };
    }

    let session = builder.commit_from_memory(model).map_err(|e| {
        Error::new(SegStatus::SEG_MODEL_INVALID, format!("ONNX Runtime cannot load the model: {}", e.message()))
    })?;
    Ok((session, report))
}

/// Resident memory of this process in bytes (Linux), for reporting per-session cost.
pub fn resident_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(pages * page.max(1) as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}
