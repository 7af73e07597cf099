//! What the soak's calls did, per interval: latencies per kind of call (HdrHistogram: any percentile
//! within 0.1 %, constant memory however long the run), calls, and every failure with its status,
//! message and time. The workers record; the sampler takes the interval's figures and starts the next.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::abi::CallError;

/// Latencies are kept in microseconds, from 1 µs to an hour, to 3 significant digits.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds")
}

/// One failed call.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Since the run started.
    pub at: Duration,
    pub kind: &'static str,
    pub status: &'static str,
    pub message: String,
}

/// The failures of an interval kept in full; beyond, they are only counted (a run failing every
/// call must not fill the disk or the memory with the same line).
pub const FAILURES_KEPT_PER_INTERVAL: usize = 100;

/// Latencies and counts of one kind of call (or of all).
#[derive(Clone)]
pub struct Latencies {
    pub histogram: Histogram<u64>,
    pub failed: u64,
}

impl Latencies {
    fn new() -> Self {
        Latencies { histogram: histogram(), failed: 0 }
    }

    /// Successful calls.
    pub fn ok(&self) -> u64 {
        self.histogram.len()
    }

    pub fn calls(&self) -> u64 {
        self.ok() + self.failed
    }

    /// The q-quantile (0..=1) of the successful calls' latency, ms; None without any.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        (self.ok() > 0).then(|| self.histogram.value_at_quantile(q) as f64 / 1000.0)
    }

    pub fn mean_ms(&self) -> Option<f64> {
        (self.ok() > 0).then(|| self.histogram.mean() / 1000.0)
    }

    pub fn max_ms(&self) -> Option<f64> {
        (self.ok() > 0).then(|| self.histogram.max() as f64 / 1000.0)
    }

    pub fn add(&mut self, other: &Latencies) {
        // Same bounds on both sides: adding cannot fail.
        let _ = self.histogram.add(&other.histogram);
        self.failed += other.failed;
    }
}

/// What the calls did during one interval (or, summed, the whole run).
#[derive(Clone)]
pub struct Interval {
    /// Per kind of call, in the order of `Recorder::kinds`.
    pub kinds: Vec<Latencies>,
    pub all: Latencies,
    /// Failures by status name.
    pub by_status: BTreeMap<&'static str, u64>,
    /// The first `FAILURES_KEPT_PER_INTERVAL` failures.
    pub failures: Vec<Failure>,
}

impl Interval {
    fn new(kinds: usize) -> Self {
        Interval {
            kinds: (0..kinds).map(|_| Latencies::new()).collect(),
            all: Latencies::new(),
            by_status: BTreeMap::new(),
            failures: Vec::new(),
        }
    }

    pub fn add(&mut self, other: &Interval) {
        for (mine, theirs) in self.kinds.iter_mut().zip(&other.kinds) {
            mine.add(theirs);
        }
        self.all.add(&other.all);
        for (status, n) in &other.by_status {
            *self.by_status.entry(status).or_default() += n;
        }
    }
}

/// Shared by the workers (recording) and the sampler (taking intervals).
pub struct Recorder {
    pub kinds: Vec<&'static str>,
    pub started: Instant,
    current: Mutex<Interval>,
    /// Set at the first failure when the run stops on one.
    stop_on_failure: Option<Arc<AtomicBool>>,
}

impl Recorder {
    pub fn new(kinds: Vec<&'static str>, started: Instant, stop_on_failure: Option<Arc<AtomicBool>>) -> Self {
        let current = Mutex::new(Interval::new(kinds.len()));
        Recorder { kinds, started, current, stop_on_failure }
    }

    pub fn kind(&self, name: &str) -> usize {
        self.kinds.iter().position(|k| *k == name).unwrap_or_else(|| panic!("unknown kind of call {name}"))
    }

    /// Times `call` as a call of kind `kind` and records how it went.
    pub fn time<T>(&self, kind: usize, call: impl FnOnce() -> Result<T, CallError>) -> Result<T, CallError> {
        let t = Instant::now();
        let outcome = call();
        self.record(kind, t.elapsed(), outcome.as_ref().err());
        outcome
    }

    pub fn record(&self, kind: usize, took: Duration, error: Option<&CallError>) {
        let micros = (took.as_micros() as u64).max(1);
        let mut interval = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let Interval { kinds, all, by_status, failures } = &mut *interval;
        match error {
            None => {
                kinds[kind].histogram.saturating_record(micros);
                all.histogram.saturating_record(micros);
            }
            Some(e) => {
                kinds[kind].failed += 1;
                all.failed += 1;
                *by_status.entry(e.status.name()).or_default() += 1;
                if failures.len() < FAILURES_KEPT_PER_INTERVAL {
                    failures.push(Failure {
                        at: self.started.elapsed(),
                        kind: self.kinds[kind],
                        status: e.status.name(),
                        message: e.message.clone(),
                    });
                }
                if let Some(stop) = &self.stop_on_failure {
                    stop.store(true, Ordering::SeqCst);
                }
            }
        }
    }

    /// The interval so far; the next starts empty.
    pub fn take(&self) -> Interval {
        let mut interval = self.current.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *interval, Interval::new(self.kinds.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use segrt::ffi::SegStatus;

    #[test]
    fn intervals_count_calls_latencies_and_failures_and_sum_to_the_run() {
        let r = Recorder::new(vec!["unet", "click"], Instant::now(), None);
        for ms in 1..=100u64 {
            r.record(0, Duration::from_millis(ms), None);
        }
        let e = CallError { status: SegStatus::SEG_OUT_OF_MEMORY, message: "no room".into() };
        r.record(1, Duration::from_millis(5), Some(&e));
        let first = r.take();
        assert_eq!((first.all.calls(), first.all.failed, first.kinds[0].ok(), first.kinds[1].failed), (101, 1, 100, 1));
        let p99 = first.kinds[0].quantile_ms(0.99).unwrap();
        assert!((p99 - 99.0).abs() < 0.1, "p99 {p99}");
        assert_eq!(first.failures[0].status, "SEG_OUT_OF_MEMORY");
        assert_eq!(first.by_status["SEG_OUT_OF_MEMORY"], 1);
        // The next interval starts empty; the run is the sum.
        r.record(0, Duration::from_millis(500), None);
        let second = r.take();
        assert_eq!(second.all.calls(), 1);
        let mut run = first.clone();
        run.add(&second);
        assert_eq!((run.all.calls(), run.kinds[0].max_ms().map(|m| m.round())), (102, Some(500.0)));
    }
}
