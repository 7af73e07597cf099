//! The leak verdict: the trend of private memory (each interval's lowest) against calls made, after
//! the warm-up, by Theil–Sen regression (the median of the slopes between every two samples: a GC
//! pause, an arena that grows once or a sample taken mid-allocation moves it little) with Sen's 95 %
//! confidence interval.
//!
//! "Grows" needs the whole interval above the limit the user sets, "no growth" the whole interval
//! within it; an interval across the limit is "not decided" (a short run, or memory that steps up
//! and down): a leak of a few bytes per call is still caught over a long run (the interval narrows as
//! samples accumulate), while allocator noise and ONNX Runtime's arenas, which settle, are not
//! called a leak. The samples of one run are not independent (memory at one interval resembles the
//! last), so the interval is narrower than it should be; the limit is the margin for that.

/// A fitted line y = intercept + slope * x and the slope's confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trend {
    pub slope: f64,
    pub low: f64,
    pub high: f64,
    pub intercept: f64,
    /// Samples fitted.
    pub samples: usize,
}

/// At most this many samples are fitted (every k-th beyond): n² / 2 slopes must fit in memory.
const MAX_POINTS: usize = 1500;

/// Theil–Sen over the points (x, y); None with fewer than 3 points or no two distinct x.
pub fn theil_sen(points: &[(f64, f64)]) -> Option<Trend> {
    let step = points.len().div_ceil(MAX_POINTS).max(1);
    let pts: Vec<(f64, f64)> = points.iter().step_by(step).copied().collect();
    let n = pts.len();
    if n < 3 {
        return None;
    }
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for (i, a) in pts.iter().enumerate() {
        for b in &pts[i + 1..] {
            if b.0 != a.0 {
                slopes.push((b.1 - a.1) / (b.0 - a.0));
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    slopes.sort_by(f64::total_cmp);
    let slope = median(&slopes);
    let mut residuals: Vec<f64> = pts.iter().map(|(x, y)| y - slope * x).collect();
    residuals.sort_by(f64::total_cmp);
    let intercept = median(&residuals);
    // Sen (1968): the ranks of the interval's ends among the sorted slopes, from the variance of
    // Kendall's S without ties: C = z * sqrt(n(n-1)(2n+5)/18), ranks (N - C)/2 and (N + C)/2 + 1.
    let big_n = slopes.len() as f64;
    let nf = n as f64;
    let c = 1.959964 * (nf * (nf - 1.0) * (2.0 * nf + 5.0) / 18.0).sqrt();
    let rank = |r: f64| (r.round().clamp(1.0, big_n) as usize) - 1;
    let low = slopes[rank((big_n - c) / 2.0)];
    let high = slopes[rank((big_n + c) / 2.0 + 1.0)];
    Some(Trend { slope, low, high, intercept, samples: n })
}

fn median(sorted: &[f64]) -> f64 {
    let m = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[m]
    } else {
        (sorted[m - 1] + sorted[m]) / 2.0
    }
}

/// What the trend says against the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judgement {
    /// The whole interval lies at or below the limit.
    NoGrowth,
    /// The whole interval lies above the limit.
    Grows,
    /// The interval holds the limit: more samples are needed to tell.
    Undecided,
    /// No limit was set (`--max-growth off`): the trend is reported only.
    NotJudged,
    /// Too few samples after the warm-up to fit a trend (fewer than `MIN_SAMPLES`).
    TooShort,
}

/// The verdict on memory growth: the judgement, the trend it rests on, the limit (MiB per 1000 calls).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub judgement: Judgement,
    /// What was fitted: "private memory", or "resident memory" where the system gives no private figure.
    pub figure: &'static str,
    pub trend: Option<Trend>,
    pub samples: usize,
    pub limit: Option<f64>,
}

/// Samples needed after the warm-up for a verdict.
pub const MIN_SAMPLES: usize = 8;

/// Judges `points` (thousands of calls made, private MiB) against `limit` MiB per 1000 calls.
pub fn judge(points: &[(f64, f64)], limit: Option<f64>, figure: &'static str) -> Verdict {
    let trend = if points.len() < MIN_SAMPLES { None } else { theil_sen(points) };
    let judgement = match (trend, limit) {
        (None, _) => Judgement::TooShort,
        (Some(_), None) => Judgement::NotJudged,
        (Some(t), Some(limit)) if t.low > limit => Judgement::Grows,
        (Some(t), Some(limit)) if t.high <= limit => Judgement::NoGrowth,
        (Some(_), Some(_)) => Judgement::Undecided,
    };
    Verdict { judgement, figure, trend, samples: points.len(), limit }
}

impl Verdict {
    pub fn grows(&self) -> bool {
        self.judgement == Judgement::Grows
    }

    /// "no growth: ..." / "grows 4.1 MiB per 1000 calls ..." / "not decided: ..." / "too short ...".
    pub fn describe(&self) -> String {
        let limit = self.limit.map_or("no limit".to_string(), |l| format!("the limit of {l} MiB per 1000 calls"));
        let Some(t) = &self.trend else {
            return format!(
                "too short to judge: {} samples after the warm-up, {MIN_SAMPLES} needed (run longer or sample more often with --interval)",
                self.samples
            );
        };
        let figures = format!("95 % interval {:+.3} to {:+.3}, {} samples", t.low, t.high, t.samples);
        match self.judgement {
            Judgement::NoGrowth => format!("no growth: {} {:+.3} MiB per 1000 calls ({figures}), within {limit}", self.figure, t.slope),
            Judgement::Grows => format!("grows {:.3} MiB per 1000 calls ({}; {figures}), above {limit}", t.slope, self.figure),
            Judgement::Undecided => {
                format!(
                    "not decided: {} {:+.3} MiB per 1000 calls ({figures}), an interval across {limit} (run longer)",
                    self.figure, t.slope
                )
            }
            Judgement::NotJudged | Judgement::TooShort => {
                format!("not judged (--max-growth off): {} {:+.3} MiB per 1000 calls ({figures})", self.figure, t.slope)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic wobble standing in for allocator noise.
    fn noise(i: usize) -> f64 {
        ((i * 7919) % 101) as f64 / 100.0 - 0.5
    }

    #[test]
    fn a_straight_line_is_found_exactly_and_outliers_do_not_move_it() {
        let mut pts: Vec<(f64, f64)> = (0..200).map(|i| (i as f64, 100.0 + 0.25 * i as f64)).collect();
        let t = theil_sen(&pts).unwrap();
        assert!((t.slope - 0.25).abs() < 1e-12 && (t.intercept - 100.0).abs() < 1e-9, "{t:?}");
        // A few spikes (a GC pause, a big image) leave the slope where it was.
        for i in [20, 80, 150] {
            pts[i].1 += 500.0;
        }
        let t = theil_sen(&pts).unwrap();
        assert!((t.slope - 0.25).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn the_interval_holds_the_true_slope_and_narrows_with_more_samples() {
        let line = |n: usize| (0..n).map(|i| (i as f64, 50.0 + 0.01 * i as f64 + noise(i))).collect::<Vec<_>>();
        let short = theil_sen(&line(40)).unwrap();
        let long = theil_sen(&line(400)).unwrap();
        for t in [short, long] {
            assert!(t.low <= 0.01 && 0.01 <= t.high, "{t:?}");
        }
        assert!(long.high - long.low < (short.high - short.low) / 5.0, "{short:?} {long:?}");
    }

    #[test]
    fn the_verdict_says_grows_only_above_the_limit() {
        let flat: Vec<(f64, f64)> = (0..100).map(|i| (i as f64 * 0.1, 300.0 + noise(i))).collect();
        let leaking: Vec<(f64, f64)> = (0..100).map(|i| (i as f64 * 0.1, 300.0 + 4.0 * i as f64 * 0.1 + noise(i))).collect();
        let judged = |pts: &[(f64, f64)], limit: Option<f64>| judge(pts, limit, "private memory").judgement;
        assert_eq!(judged(&flat, Some(0.1)), Judgement::NoGrowth, "{:?}", judge(&flat, Some(0.1), "private memory"));
        // A few samples of a wobble: an interval too wide to tell.
        assert_eq!(judged(&flat[..10], Some(0.1)), Judgement::Undecided, "{:?}", judge(&flat[..10], Some(0.1), "private memory"));
        let v = judge(&leaking, Some(0.1), "private memory");
        assert!(v.grows(), "{v:?}");
        assert!(v.describe().starts_with("grows 4.0"), "{}", v.describe());
        // The same leak under a limit above it is not called growth, nor without a limit.
        assert_eq!(judged(&leaking, Some(5.0)), Judgement::NoGrowth);
        assert_eq!(judged(&leaking, None), Judgement::NotJudged);
        assert_eq!(judged(&flat[..5], Some(0.1)), Judgement::TooShort);
    }
}
