//! The soak's CSV files, a row per interval (`intervals.csv`) and a row per failed call
//! (`failures.csv`), each interval's rows written, flushed and synced to the disk before the next
//! interval starts: a power cut loses at most the interval in progress.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::stats::{Interval, FAILURES_KEPT_PER_INTERVAL};

/// One interval's figures, as written and as plotted.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// End of the interval, seconds since the run started.
    pub elapsed_s: f64,
    /// Calls made so far (all kinds), and failed.
    pub calls_total: u64,
    pub failures_total: u64,
    /// Calls and failures in this interval.
    pub calls: u64,
    pub failures: u64,
    pub process: crate::process::Figures,
    /// The lowest and highest private memory probed during the interval, MiB (resident where there
    /// is no private figure).
    pub private_low_mib: Option<f64>,
    pub private_high_mib: Option<f64>,
    pub gpu_used_mib: Option<f64>,
    /// All calls' latency in this interval, ms: p50, p95, p99, max.
    pub latency_ms: [Option<f64>; 4],
}

pub struct CsvLog {
    intervals: csv::Writer<File>,
    failures: csv::Writer<File>,
    intervals_path: PathBuf,
    failures_path: PathBuf,
}

fn cell(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.3}"))
}

fn cell_count(v: Option<u64>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

fn unix_time() -> String {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(String::new(), |d| format!("{:.3}", d.as_secs_f64()))
}

impl CsvLog {
    /// Creates both files in `out` (replacing earlier ones) with their header rows.
    pub fn create(out: &Path, kinds: &[&str]) -> Result<CsvLog, String> {
        let open = |name: &str| {
            let path = out.join(name);
            let file = File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
            Ok::<_, String>((csv::Writer::from_writer(file), path))
        };
        let (intervals, intervals_path) = open("intervals.csv")?;
        let (failures, failures_path) = open("failures.csv")?;
        let mut log = CsvLog { intervals, failures, intervals_path, failures_path };
        let mut header: Vec<String> = [
            "elapsed_s",
            "unix_time_s",
            "calls",
            "failures",
            "calls_total",
            "failures_total",
            "resident_mib",
            "private_mib",
            "peak_mib",
            "threads",
            "handles",
            "gpu_used_mib",
            "private_low_mib",
            "private_high_mib",
            "p50_ms",
            "p95_ms",
            "p99_ms",
            "max_ms",
        ]
        .map(String::from)
        .into();
        for k in kinds {
            header.extend(["calls", "failures", "p50_ms", "p99_ms", "max_ms"].map(|c| format!("{k}_{c}")));
        }
        log.intervals.write_record(&header).map_err(|e| log.error(true, e))?;
        log.failures.write_record(["elapsed_s", "unix_time_s", "kind", "status", "message"]).map_err(|e| log.error(false, e))?;
        log.sync()?;
        Ok(log)
    }

    fn error(&self, intervals: bool, e: impl std::fmt::Display) -> String {
        let path = if intervals { &self.intervals_path } else { &self.failures_path };
        format!("cannot write {}: {e}", path.display())
    }

    /// Writes the interval's rows and puts them on the disk.
    pub fn write(&mut self, sample: &Sample, interval: &Interval) -> Result<(), String> {
        let now = unix_time();
        let p = &sample.process;
        let mut row = vec![
            format!("{:.3}", sample.elapsed_s),
            now.clone(),
            sample.calls.to_string(),
            sample.failures.to_string(),
            sample.calls_total.to_string(),
            sample.failures_total.to_string(),
            cell(p.resident_mib),
            cell(p.private_mib),
            cell(p.peak_mib),
            cell_count(p.threads),
            cell_count(p.handles),
            cell(sample.gpu_used_mib),
            cell(sample.private_low_mib),
            cell(sample.private_high_mib),
        ];
        row.extend(sample.latency_ms.iter().map(|v| cell(*v)));
        for k in &interval.kinds {
            row.extend([
                k.calls().to_string(),
                k.failed.to_string(),
                cell(k.quantile_ms(0.5)),
                cell(k.quantile_ms(0.99)),
                cell(k.max_ms()),
            ]);
        }
        self.intervals.write_record(&row).map_err(|e| self.error(true, e))?;
        for f in &interval.failures {
            let at = format!("{:.3}", f.at.as_secs_f64());
            self.failures
                .write_record([at.as_str(), now.as_str(), f.kind, f.status, f.message.as_str()])
                .map_err(|e| self.error(false, e))?;
        }
        let unlisted = interval.all.failed.saturating_sub(interval.failures.len() as u64);
        if unlisted > 0 {
            let message = format!("{unlisted} more failures in this interval (the first {FAILURES_KEPT_PER_INTERVAL} are listed)");
            let at = format!("{:.3}", sample.elapsed_s);
            self.failures.write_record([at.as_str(), now.as_str(), "", "", message.as_str()]).map_err(|e| self.error(false, e))?;
        }
        self.sync()
    }

    fn sync(&mut self) -> Result<(), String> {
        self.intervals.flush().map_err(|e| self.error(true, e))?;
        self.failures.flush().map_err(|e| self.error(false, e))?;
        self.intervals.get_ref().sync_data().map_err(|e| self.error(true, e))?;
        self.failures.get_ref().sync_data().map_err(|e| self.error(false, e))
    }
}
