//! Resident memory per stage of `segrt bench`: what the process holds when a stage ends, and the
//! most it held while the stage ran (Linux: VmRSS and VmHWM, the high-water mark reset at the start
//! of each stage through /proc/self/clear_refs; elsewhere the resident figure only).

use serde::Serialize;

/// One stage's figures, MiB.
#[derive(Debug, Clone, Serialize)]
pub struct StageMemory {
    pub stage: String,
    /// Resident when the stage ended.
    pub resident_mib: Option<f64>,
    /// The most resident while the stage ran (null where the system does not say).
    pub peak_mib: Option<f64>,
}

/// The stages measured so far; the first is the process before the measured work.
pub struct Stages(Vec<StageMemory>);

impl Stages {
    /// Starts measuring: the figures of the process as it is now are the stage `start`.
    pub fn start() -> Stages {
        let mut stages = Stages(Vec::new());
        stages.end("start");
        stages
    }

    /// Ends a stage: records its figures and starts the next.
    pub fn end(&mut self, stage: &str) {
        let (resident_mib, peak_mib) = figures();
        self.0.push(StageMemory { stage: stage.to_string(), resident_mib, peak_mib });
        reset_peak();
    }

    pub fn into_rows(self) -> Vec<StageMemory> {
        self.0
    }
}

/// "create 253 (peak 490), encode 340 (peak 955), ..." for the report.
pub fn describe(rows: &[StageMemory]) -> String {
    let mib = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.0}"));
    rows.iter()
        .map(|r| match r.peak_mib {
            Some(peak) => format!("{} {} (peak {:.0})", r.stage, mib(r.resident_mib), peak),
            None => format!("{} {}", r.stage, mib(r.resident_mib)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn figures() -> (Option<f64>, Option<f64>) {
    let now = crate::process::sample();
    // Only Linux's high-water mark can be reset per stage; Windows' peak is the whole process's.
    (now.resident_mib, if cfg!(target_os = "linux") { now.peak_mib } else { None })
}

/// Sets the high-water mark to the resident size now (Linux 4.0 and later; ignored elsewhere).
fn reset_peak() {
    #[cfg(target_os = "linux")]
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}
