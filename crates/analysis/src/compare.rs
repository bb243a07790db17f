//! Two sets of results, entry by entry: what changed and whether it is more than noise. An entry
//! with a baseline is judged by its paired ratio to the baseline (both sides timed in the same
//! power state, so a machine that runs hotter or cooler moves neither); one without (a baseline
//! itself, the peak loops) by its rate. The verdict is FASTER or SLOWER only when the two 95%
//! intervals do not overlap and the change is larger than the threshold; else SAME. Entries
//! measured without intervals (schema 1) are judged by the threshold alone. Entries timed in
//! different regimes (sustained, burst, hot), or after different L2 flushes, are different
//! measurements and are not compared.
//! A rate without a pair timed in the sustained regime is shown and not judged: on the H200
//! cuBLAS fp16 at 4096³, timed alone first in each of four back-to-back runs, ran 688 to 743
//! TFLOP/s (its intervals apart) while every paired ratio held within 1%; the burst regime,
//! which controls the power state, judges such rates.

use serde::Serialize;

use crate::schema::entry::{Entry, L2Flush, Regime, Status};
use crate::schema::stats::Interval;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Faster,
    Slower,
    Same,
    /// A rate timed in the sustained regime without a pair (a baseline itself, a peak loop):
    /// it follows the board's power state, which that regime does not control; or a launch
    /// shorter than `SHORTEST_JUDGED_MS` on either side of a pair. Its change is shown, not judged.
    Unjudged,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Faster => "FASTER",
            Verdict::Slower => "SLOWER",
            Verdict::Same => "SAME",
            Verdict::Unjudged => "UNJUDGED",
        }
    }
}

/// What is compared for an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The ratio to the baseline from pairs, with its interval.
    PairedRatio,
    /// The rate, with the interval of the median time.
    Rate,
    /// A value without an interval on one side.
    Point,
}

impl Basis {
    pub fn label(self) -> &'static str {
        match self {
            Basis::PairedRatio => "paired ratio",
            Basis::Rate => "rate",
            Basis::Point => "point",
        }
    }
}

/// Launches shorter than this (ms), the subject's or its baseline's, are not judged: on the H200
/// the ratios of such pairs moved by up to 12% between two processes running unchanged code
/// (tf32_04 against a 15 µs cuBLAS call at 1024³), far outside each run's own interval. The hot
/// regime is the way to time them.
pub const SHORTEST_JUDGED_MS: f64 = 0.05;

/// Whether an entry's launch, or its baseline's in the pairs, is too short to judge.
fn too_short(e: &Entry) -> bool {
    let base = e.paired.map(|p| p.baseline_ms);
    let ms = e.time.map(|t| t.median_ms);
    e.timing.is_some_and(|t| t.regime != Regime::Hot) && [ms, base].into_iter().flatten().any(|m| m < SHORTEST_JUDGED_MS)
}

/// One key present, and measured, on both sides.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub family: String,
    pub variant: String,
    pub shape: String,
    pub basis: Basis,
    pub old: Interval,
    pub new: Interval,
    /// new / old - 1.
    pub change: f64,
    pub verdict: Verdict,
}

/// The value an entry is judged by, with its interval where it has one.
fn judged_by(e: &Entry) -> Option<(Basis, Interval)> {
    if let Some(p) = &e.paired {
        return Some((Basis::PairedRatio, p.ratio));
    }
    let rate = e.rate?;
    match &e.timing {
        // Rates are work over time: the time interval's ends swap.
        Some(t) if t.median.low > 0.0 => {
            let r = |ms: f64| e.work.rate(e.unit, ms);
            Some((Basis::Rate, Interval { value: rate, low: r(t.median.high), high: r(t.median.low) }))
        }
        _ => Some((Basis::Point, Interval { value: rate, low: rate, high: rate })),
    }
}

/// Compares the entries of `new` with those of the same key, timed the same way, in `old`
/// (oldest first); `threshold` is the change (a share: 0.02 is 2%) a verdict other than SAME
/// needs. The change is against the newest of them; with several, the new interval must also
/// clear the span of all their intervals: an interval says how precise one run was, and the span
/// of several runs adds how far runs of unchanged code moved between processes.
pub fn compare(old: &[Entry], new: &[Entry], threshold: f64) -> Vec<Row> {
    // Schema-1 entries have no timing record; they were timed back to back after a memset.
    let regime = |e: &Entry| e.timing.map_or(Regime::Sustained, |t| t.regime);
    let method = |e: &Entry| (regime(e), e.timing.and_then(|t| t.flush).unwrap_or(L2Flush::Memset));
    let same = |n: &Entry, o: &&Entry| o.key() == n.key() && method(o) == method(n) && o.status == Status::Ok;
    new.iter()
        .filter(|n| n.status == Status::Ok)
        .filter_map(|n| {
            let o = old.iter().rev().find(|o| same(n, o))?;
            let (nb, ni) = judged_by(n)?;
            let (ob, mut oi) = judged_by(o)?;
            for (_, i) in old.iter().filter(|o| same(n, o)).filter_map(judged_by).filter(|(b, _)| *b == ob) {
                (oi.low, oi.high) = (oi.low.min(i.low), oi.high.max(i.high));
            }
            // Both sides judged the same way: a paired ratio against a rate is no comparison.
            let (basis, old, new) = match (ob, nb) {
                (a, b) if a == b => (a, oi, ni),
                _ => {
                    let point = |e: &Entry| e.vs_baseline.or(e.rate).map(|v| Interval { value: v, low: v, high: v });
                    (Basis::Point, point(o)?, point(n)?)
                }
            };
            let change = new.value / old.value - 1.0;
            let apart = new.low > old.high || new.high < old.low || basis == Basis::Point;
            let verdict = match (apart, change) {
                _ if basis != Basis::PairedRatio && regime(n) == Regime::Sustained && n.timing.is_some() => Verdict::Unjudged,
                _ if too_short(n) || too_short(o) => Verdict::Unjudged,
                (true, c) if c > threshold => Verdict::Faster,
                (true, c) if c < -threshold => Verdict::Slower,
                _ => Verdict::Same,
            };
            Some(Row { family: n.family.clone(), variant: n.label(), shape: n.shape.clone(), basis, old, new, change, verdict })
        })
        .collect()
}
