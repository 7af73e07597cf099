//! The soak's report: what ran and on what, the station table (average and 99th-percentile time per
//! call, peak memory, peak GPU memory, calls, failures, uptime), the figures per kind of call, the
//! leak verdict, the failures by status, and the plots; as Markdown in `report.md` and, shortened, on
//! standard output.

use std::fmt::Write as _;
use std::path::Path;

use super::csv_log::Sample;
use super::stats::{Failure, Interval};
use super::trend::{Judgement, Verdict};

/// Everything the report says.
pub struct Report<'a> {
    pub command: String,
    pub setup: Vec<(String, String)>,
    pub why_stopped: String,
    pub planned: String,
    pub kinds: &'a [&'static str],
    pub run: &'a Interval,
    pub samples: &'a [Sample],
    pub first_failures: &'a [Failure],
    pub gpu_note: String,
    pub warmup_percent: f64,
    pub verdict: &'a Verdict,
    pub max_failures: u64,
    /// Plot files written (name, alt text), relative to the report.
    pub plots: Vec<(String, String)>,
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| if v >= 100.0 { format!("{v:.0}") } else { format!("{v:.1}") })
}

fn mib(v: Option<f64>) -> String {
    v.map_or("n/a".to_string(), |v| format!("{v:.0} MiB"))
}

/// "2 h 03 min", "14 min 05 s", "42 s".
pub fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

impl Report<'_> {
    pub fn elapsed_s(&self) -> f64 {
        self.samples.last().map_or(0.0, |s| s.elapsed_s)
    }

    /// The share of the run's time in intervals without a failed call, %.
    pub fn uptime_percent(&self) -> f64 {
        let (mut up, mut last) = (0.0, 0.0);
        for s in self.samples {
            if s.failures == 0 {
                up += s.elapsed_s - last;
            }
            last = s.elapsed_s;
        }
        if last > 0.0 {
            100.0 * up / last
        } else {
            100.0
        }
    }

    fn peak(&self, f: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
        self.samples.iter().filter_map(f).reduce(f64::max)
    }

    /// Whether the run kept within the user's limits, and if not, why.
    pub fn breaches(&self) -> Vec<String> {
        let mut why = Vec::new();
        if self.verdict.grows() {
            why.push(format!("memory {}", self.verdict.describe()));
        }
        if self.run.all.failed > self.max_failures {
            why.push(format!("{} failed calls, more than --max-failures {}", self.run.all.failed, self.max_failures));
        }
        why
    }

    /// "held", "did not hold", or, when no limit was exceeded but the memory trend is not known to be
    /// within its limit, what is missing.
    pub fn outcome(&self) -> &'static str {
        match (self.breaches().is_empty(), self.verdict.judgement) {
            (false, _) => "did not hold",
            (true, Judgement::NoGrowth) => "held",
            (true, Judgement::NotJudged) => "no limit exceeded (memory growth not judged)",
            (true, _) => "no limit exceeded, but the memory trend is not decided",
        }
    }

    /// The article's table: one row for the whole run.
    fn station_table(&self, out: &mut String) {
        let all = &self.run.all;
        let _ = writeln!(out, "| avg per call | p99 per call | peak memory | peak GPU memory | calls | failures | uptime |");
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|");
        let _ = writeln!(
            out,
            "| {} ms | {} ms | {} | {} | {} | {} | {:.2} % of {} |",
            ms(all.mean_ms()),
            ms(all.quantile_ms(0.99)),
            mib(self.peak(|s| s.process.peak_mib.or(s.process.resident_mib))),
            mib(self.peak(|s| s.gpu_used_mib)),
            all.calls(),
            all.failed,
            self.uptime_percent(),
            duration(self.elapsed_s())
        );
    }

    fn kinds_table(&self, out: &mut String) {
        let _ = writeln!(out, "| call | calls | failures | avg ms | p50 ms | p95 ms | p99 ms | max ms |");
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
        let rows = self.kinds.iter().zip(&self.run.kinds).map(|(k, l)| (*k, l)).chain([("all", &self.run.all)]);
        for (name, l) in rows.filter(|(_, l)| l.calls() > 0) {
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} | {} | {} | {} | {} |",
                l.calls(),
                l.failed,
                ms(l.mean_ms()),
                ms(l.quantile_ms(0.5)),
                ms(l.quantile_ms(0.95)),
                ms(l.quantile_ms(0.99)),
                ms(l.max_ms())
            );
        }
    }

    fn memory_line(&self) -> String {
        let first = self.samples.first().map(|s| s.process);
        let last = self.samples.last().map(|s| s.process);
        let pair = |f: fn(&crate::process::Figures) -> Option<f64>| {
            format!("{} -> {}", mib(first.as_ref().and_then(f)), mib(last.as_ref().and_then(f)))
        };
        let count = |f: fn(&crate::process::Figures) -> Option<u64>| {
            let v: Vec<u64> = self.samples.iter().filter_map(|s| f(&s.process)).collect();
            match (v.first(), v.last(), v.iter().max()) {
                (Some(a), Some(b), Some(m)) => format!("{a} -> {b} (most {m})"),
                _ => "n/a".to_string(),
            }
        };
        format!(
            "resident {}, private {}; threads {}; {} {}",
            pair(|p| p.resident_mib),
            pair(|p| p.private_mib),
            count(|p| p.threads),
            if cfg!(windows) { "handles" } else { "file descriptors" },
            count(|p| p.handles)
        )
    }

    /// The report as Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let breaches = self.breaches();
        let outcome = self.outcome();
        let _ = writeln!(out, "# segrt soak report\n");
        let _ = writeln!(
            out,
            "**{}{}** after {} ({}; planned: {}).\n",
            outcome[..1].to_uppercase(),
            &outcome[1..],
            duration(self.elapsed_s()),
            self.why_stopped,
            self.planned
        );
        for b in &breaches {
            let _ = writeln!(out, "- {b}");
        }
        if !breaches.is_empty() {
            out.push('\n');
        }
        self.station_table(&mut out);
        let _ = writeln!(out, "\n**Leak verdict:** {}.\n", self.verdict.describe());
        let _ = writeln!(
            out,
            "The trend is the lowest private memory of each interval (probed every half second) against calls made, after the warm-up (the first {} % of the run) and before the \
             last sample (taken as the threads end), leaving out intervals in which no call finished, by Theil–Sen regression with its 95 % interval; \"grows\" needs the whole interval above the limit, \
             \"no growth\" the whole interval at or below it. Uptime: the share of \
             the run's time in intervals without a failed call.\n",
            self.warmup_percent
        );
        let _ = writeln!(out, "## Calls\n");
        self.kinds_table(&mut out);
        let _ = writeln!(out, "\n## Memory and process\n\n{}. GPU memory: {}.\n", self.memory_line(), self.gpu_note);
        for (file, alt) in &self.plots {
            let _ = writeln!(out, "![{alt}]({file})\n");
        }
        let _ = writeln!(out, "## Failures\n");
        if self.run.all.failed == 0 {
            let _ = writeln!(out, "None.\n");
        } else {
            for (status, n) in &self.run.by_status {
                let _ = writeln!(out, "- {status}: {n}");
            }
            let _ = writeln!(out, "\nThe first ones (all of them in `failures.csv`):\n");
            for f in self.first_failures {
                let _ = writeln!(out, "- at {}: {} {}: {}", duration(f.at.as_secs_f64()), f.kind, f.status, f.message.replace('\n', " "));
            }
            out.push('\n');
        }
        let _ = writeln!(out, "## Setup\n");
        let _ = writeln!(out, "- command: `{}`", self.command);
        for (k, v) in &self.setup {
            let _ = writeln!(out, "- {k}: {v}");
        }
        let _ = writeln!(out, "\nEvery interval's figures: `intervals.csv`; every failed call: `failures.csv`.");
        out
    }

    /// The station table and the verdict, for the terminal.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        self.station_table(&mut out);
        out.push('\n');
        self.kinds_table(&mut out);
        let _ = write!(out, "\nleak verdict: {}", self.verdict.describe());
        out
    }

    /// Writes `report.md` in `dir` (through a temporary file, so a reader never sees half of it).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join("report.md");
        let tmp = dir.join("report.md.tmp");
        std::fs::write(&tmp, self.markdown())
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(42.4), "42 s");
        assert_eq!(duration(845.0), "14 min 05 s");
        assert_eq!(duration(7380.0), "2 h 03 min");
    }
}
