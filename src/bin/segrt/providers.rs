//! `segrt providers`: the execution providers of the loaded ONNX Runtime build, and which of them
//! initialise on this machine.

use std::path::PathBuf;

use segrt::Options;

use crate::CliResult;

pub fn providers(device: i32, json: bool, ort: Option<PathBuf>) -> CliResult {
    let options = Options { ort_path: ort, device_id: device, ..Options::default() };
    let probes = segrt::engine::probe_providers(&options).map_err(|e| e.to_string())?;
    if json {
        say!("{}", serde_json::to_string_pretty(&probes).map_err(|e| e.to_string())?);
        return Ok(());
    }
    let rt = segrt::runtime::RuntimeInfo::current();
    say!("ONNX Runtime {} ({} build, C API level {}) from {}", rt.version, rt.build, rt.api_level, rt.path);
    for lack in &rt.degraded {
        say!("  too old for: {lack}");
    }
    say!("{:<12} {:>5}  {:<26} {:<8} {:<11} why not", "provider", "value", "ONNX Runtime name", "in build", "initialises");
    for p in &probes {
        let yes = |b: bool| if b { "yes" } else { "no" };
        let reason = p.reason.as_deref().unwrap_or("").lines().next().unwrap_or("");
        say!("{:<12} {:>5}  {:<26} {:<8} {:<11} {reason}", p.name, p.value, p.onnxruntime_name, yes(p.in_this_build), yes(p.initialises));
    }
    Ok(())
}
