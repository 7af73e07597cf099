//! The provider policy: what becomes of a session whose provider cannot run it as asked (under
//! `ProviderPolicy::Require` an error, under `Fallback` the CPU with the reason in the report), and
//! `GpuOptions::require_all_nodes`, which counts a session with nodes on the CPU as such a failure.

use crate::error::{Error, ErrorKind, Result};
use crate::log::LogLevel;
use crate::options::{Options, ProviderPolicy};

use super::placement;
use super::ProviderReport;

/// Under `Require` the provider's failure is the error (`ProviderUnavailable`); under `Fallback`
/// it is logged and recorded in `report`, which then says the session runs on the CPU.
pub(crate) fn refuse_or_fall_back(options: &Options, reason: String, report: &mut ProviderReport) -> Result<()> {
    if options.provider_policy == ProviderPolicy::Require {
        return Err(Error::new(ErrorKind::ProviderUnavailable, reason + " (policy: require)"));
    }
    crate::log::emit(LogLevel::Warn, &format!("{reason}; running on the CPU (policy: fallback)"));
    report.in_use = "CPU".into();
    report.fallback_reason = Some(reason);
    Ok(())
}

/// False when `options.gpu.require_all_nodes` asks for a session with no node on the CPU and
/// `report`'s session has some.
pub(crate) fn all_nodes_as_required(report: &ProviderReport, options: &Options) -> bool {
    !options.gpu.require_all_nodes || report.fallback_reason.is_some() || report.nodes_on_cpu() == 0
}

/// Why a session with nodes on the CPU is refused under `require_all_nodes`.
pub(crate) fn not_all_nodes(report: &ProviderReport) -> String {
    format!(
        "{} runs only part of this model: ONNX Runtime placed {} of its {} nodes on the CPU ({}), and require_all_nodes \
         asks for none (the session info lists the nodes per provider)",
        report.requested,
        report.nodes_on_cpu(),
        placement::total_nodes(&report.nodes),
        placement::cpu_operators(&report.nodes),
    )
}

/// The model cache's note when a cached session had nodes on the CPU under `require_all_nodes`.
pub(crate) const NOT_ALL_NODES: &str = "the model cache is not used: require_all_nodes refused the cached session (nodes on the CPU)";
