//! The run's samples: at the end of each interval the calls' figures and the process's, and, probed
//! every half second in between, the lowest and highest private memory of the interval. The lowest
//! is what the leak verdict fits: a station's calls allocate and free hundreds of MiB (an encoder's
//! working memory), so one reading at the interval's end lands anywhere between floor and peak,
//! while the floor between calls moves only when memory stays behind.

use std::time::Duration;

use super::csv_log::{CsvLog, Sample};
use super::gpu;
use super::report::duration;
use super::stats::{Failure, Interval, Recorder};
use crate::process::Figures;

/// How often private memory is probed between the interval's samples.
pub const PROBE: Duration = Duration::from_millis(500);
/// Failures listed in the report (all of them are in failures.csv).
const FAILURES_IN_REPORT: usize = 20;

/// The lowest and highest private memory (resident where there is no private figure) seen, MiB.
#[derive(Default, Clone, Copy)]
pub struct MemoryRange {
    low: Option<f64>,
    high: Option<f64>,
}

impl MemoryRange {
    pub fn add(&mut self, f: &Figures) {
        if let Some(v) = f.private_mib.or(f.resident_mib) {
            self.low = Some(self.low.map_or(v, |l| l.min(v)));
            self.high = Some(self.high.map_or(v, |h| h.max(v)));
        }
    }
}

/// What the leak verdict fits: (thousands of calls made, the interval's lowest memory) for each
/// interval after the warm-up in which a call finished. In an interval where none finished every
/// thread was inside a call the whole time, so its lowest reading is a call's working memory, not
/// the floor between calls, and it adds no calls: it would pull the line up at one point.
pub fn trend_points(samples: &[Sample], warmup_s: f64) -> Vec<(f64, f64)> {
    samples
        .iter()
        .filter(|s| s.elapsed_s > warmup_s && s.calls > 0)
        .filter_map(|s| s.private_low_mib.or(s.process.resident_mib).map(|m| (s.calls_total as f64 / 1000.0, m)))
        .collect()
}

/// The samples so far and the run's totals.
pub struct Run {
    pub samples: Vec<Sample>,
    pub total: Interval,
    pub first_failures: Vec<Failure>,
    pub disk_error: Option<String>,
}

impl Run {
    pub fn new(empty: Interval) -> Self {
        Run { samples: Vec::new(), total: empty, first_failures: Vec::new(), disk_error: None }
    }

    /// Ends an interval: its figures, the process's now and its memory range, the GPU's, written to
    /// the CSV files. False (with `disk_error` set) when they could not be written.
    pub fn sample(
        &mut self,
        recorder: &Recorder,
        log: &mut CsvLog,
        gpu: Option<&gpu::GpuMemory>,
        process: Figures,
        mut range: MemoryRange,
    ) -> bool {
        range.add(&process);
        let interval = recorder.take();
        self.total.add(&interval);
        let room = FAILURES_IN_REPORT.saturating_sub(self.first_failures.len());
        self.first_failures.extend(interval.failures.iter().take(room).cloned());
        let all = &interval.all;
        let sample = Sample {
            elapsed_s: recorder.started.elapsed().as_secs_f64(),
            calls_total: self.total.all.calls(),
            failures_total: self.total.all.failed,
            calls: all.calls(),
            failures: all.failed,
            process,
            private_low_mib: range.low,
            private_high_mib: range.high,
            gpu_used_mib: gpu.and_then(|g| g.used_mib()),
            latency_ms: [all.quantile_ms(0.5), all.quantile_ms(0.95), all.quantile_ms(0.99), all.max_ms()],
        };
        let written = log.write(&sample, &interval);
        let mib = |v: Option<f64>| v.map_or("n/a".to_string(), |m| format!("{m:.0} MiB"));
        note!(
            "[{}] {} calls (+{}), {} failed; private {} (lowest {}), resident {}; p99 {}",
            duration(sample.elapsed_s),
            sample.calls_total,
            sample.calls,
            sample.failures_total,
            mib(sample.process.private_mib),
            mib(sample.private_low_mib),
            mib(sample.process.resident_mib),
            sample.latency_ms[2].map_or("-".into(), |m| format!("{m:.1} ms"))
        );
        self.samples.push(sample);
        match written {
            Ok(()) => true,
            Err(e) => {
                note!("segrt soak: {e}: sampling stops here");
                self.disk_error = Some(e);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(elapsed_s: f64, calls_total: u64, calls: u64, low: f64) -> Sample {
        Sample {
            elapsed_s,
            calls_total,
            failures_total: 0,
            calls,
            failures: 0,
            process: Figures::default(),
            private_low_mib: Some(low),
            private_high_mib: Some(low),
            gpu_used_mib: None,
            latency_ms: [None; 4],
        }
    }

    #[test]
    fn the_trend_skips_the_warm_up_and_intervals_where_no_call_finished() {
        let samples = [
            sample(10.0, 5, 5, 900.0),   // warm-up
            sample(20.0, 10, 5, 500.0),  //
            sample(30.0, 10, 0, 1400.0), // every thread inside a long call: no floor
            sample(40.0, 15, 5, 501.0),
        ];
        assert_eq!(trend_points(&samples, 15.0), vec![(0.010, 500.0), (0.015, 501.0)]);
    }
}
