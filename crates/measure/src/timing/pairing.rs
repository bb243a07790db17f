//! The arithmetic of timing, apart from the GPU so that a CPU test reaches it: the order of a
//! pair's launches, which of its two times is whose, the ratio a pair gives, the samples and pairs
//! dropped, the GPU time spent, the warm-up's end and the rule that stops sampling. `Timer`
//! calls these between its launches; nothing here touches a GPU.

use crate::schema::entry::Paired;
use crate::schema::run::Policy;
use crate::schema::stats::{Interval, Summary};

/// The hot regime's graph holds launches for about this much GPU time (at most `HOT_MAX`), so
/// that the events' resolution and the graph's own launch are small beside it.
pub const HOT_SAMPLE_MS: f64 = 2.0;
pub const HOT_MAX: usize = 1000;
/// A warm-up ends after this many rounds even if they have not added up to its time (a launch
/// of a few microseconds would otherwise take thousands).
pub const WARMUP_MAX_ROUNDS: usize = 1000;
/// Samples (or pairs) dropped per sample the policy may keep before sampling gives up with what
/// it kept: a board that never holds its clock in the burst regime must not loop for ever.
pub const DROPS_PER_SAMPLE: usize = 10;

/// What sampling one subject gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    pub ms: Vec<f64>,
    pub dropped: usize,
    /// Launches per sample (the hot regime's graph; else 1).
    pub launches: usize,
}

/// What sampling a subject against its baseline gave: the pairs' times, each pair's ratio of
/// the subject's rate to the baseline's, and the pairs dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairs {
    pub subject_ms: Vec<f64>,
    pub baseline_ms: Vec<f64>,
    pub ratios: Vec<f64>,
    pub dropped: usize,
    /// The subject's launches per sample.
    pub launches: usize,
}

impl Pairs {
    /// The median of the ratios with its interval, and the baseline's median time.
    pub fn paired(&self) -> Option<Paired> {
        Interval::of_median(&self.ratios).map(|ratio| Paired {
            ratio,
            pairs: self.ratios.len(),
            baseline_ms: Summary::of(&self.baseline_ms).map_or(f64::NAN, |s| s.median_ms),
        })
    }
}

/// The launches a hot sample's graph holds for a launch that takes `one_ms`: enough for
/// `HOT_SAMPLE_MS`, at least one and at most `HOT_MAX` (a launch under 0.1 µs counts as 0.1 µs).
pub fn hot_launches(one_ms: f64) -> usize {
    ((HOT_SAMPLE_MS / one_ms.max(1e-4)).ceil() as usize).clamp(1, HOT_MAX)
}

/// Whether a warm-up of `rounds` rounds that took `spent_ms` of GPU time is over: at least two
/// rounds, and the policy's warm-up time or `WARMUP_MAX_ROUNDS` rounds.
pub fn warmed_up(policy: &Policy, rounds: usize, spent_ms: f64) -> bool {
    rounds >= 2 && (spent_ms >= policy.warmup_s * 1e3 || rounds >= WARMUP_MAX_ROUNDS)
}

/// The half-width of the median's 95% interval of `values`, a share of the median; infinite
/// while there is none.
pub fn half_width(values: &[f64]) -> f64 {
    Interval::of_median(values).map_or(f64::INFINITY, |i| i.half_width())
}

/// Whether `dropped` samples (or pairs) are more than the policy lets sampling drop.
pub fn too_many_dropped(policy: &Policy, dropped: usize) -> bool {
    dropped > DROPS_PER_SAMPLE * policy.max_samples
}

/// A pair's ratio of the subject's rate to the baseline's. Rates are work over time, so it is the
/// baseline's time over the subject's, times the subject's declared work over the baseline's:
/// above 1 when the subject does the same work in less time.
pub fn rate_ratio(work_ratio: f64, baseline_ms: f64, subject_ms: f64) -> f64 {
    work_ratio * baseline_ms / subject_ms
}

/// The samples of one subject as they come: kept in rounds or dropped one by one, with the GPU
/// time they took.
#[derive(Debug, Clone)]
pub struct Sampling {
    pub out: Samples,
    spent_s: f64,
}

impl Sampling {
    /// No samples yet; each will be `launches` launches (the hot regime's graph; else 1).
    pub fn new(launches: usize) -> Sampling {
        Sampling { out: Samples { ms: Vec::new(), dropped: 0, launches }, spent_s: 0.0 }
    }

    /// The GPU time taken so far, seconds, dropped samples included.
    pub fn spent_s(&self) -> f64 {
        self.spent_s
    }

    /// Keeps a round of samples (ms per launch); whether the samples are now enough.
    pub fn keep(&mut self, policy: &Policy, round: &[f64]) -> bool {
        self.spent_s += round.iter().sum::<f64>() * self.out.launches as f64 / 1e3;
        self.out.ms.extend_from_slice(round);
        policy.enough(self.out.ms.len(), self.spent_s, half_width(&self.out.ms))
    }

    /// Drops a sample of `ms` that did not run at full clock (its time still counts against the
    /// cap); whether sampling gives up with what it kept.
    pub fn drop_one(&mut self, policy: &Policy, ms: f64) -> bool {
        self.out.dropped += 1;
        self.spent_s += ms / 1e3;
        too_many_dropped(policy, self.out.dropped)
    }
}

/// The pairs of a subject and its baseline as they come, launched in alternating order (AB, BA,
/// ...) so neither always runs straight after the other's flush and warm-up.
#[derive(Debug, Clone)]
pub struct Pairing {
    pub out: Pairs,
    spent_s: f64,
    work_ratio: f64,
}

impl Pairing {
    /// No pairs yet; the subject's samples are `launches` launches each, and it declares
    /// `work_ratio` times the baseline's work.
    pub fn new(launches: usize, work_ratio: f64) -> Pairing {
        let out = Pairs { subject_ms: Vec::new(), baseline_ms: Vec::new(), ratios: Vec::new(), dropped: 0, launches };
        Pairing { out, spent_s: 0.0, work_ratio }
    }

    /// The GPU time of the pairs kept so far, seconds (a dropped pair's is not counted).
    pub fn spent_s(&self) -> f64 {
        self.spent_s
    }

    /// Whether the next pair launches the subject first: every other pair, counting the dropped
    /// ones, so a pair dropped does not put two pairs of the same order side by side.
    pub fn subject_first(&self) -> bool {
        (self.out.ratios.len() + self.out.dropped) % 2 == 1
    }

    /// Records the pair just launched, its two times in launch order (None for a launch that did
    /// not run at full clock, which drops the pair); whether sampling stops: the pairs are
    /// enough, or too many were dropped.
    pub fn record(&mut self, policy: &Policy, first: Option<f64>, second: Option<f64>) -> bool {
        let (baseline, subject) = if self.subject_first() { (second, first) } else { (first, second) };
        let (Some(b), Some(s)) = (baseline, subject) else {
            self.out.dropped += 1;
            return too_many_dropped(policy, self.out.dropped);
        };
        self.spent_s += (b + s) * self.out.launches as f64 / 1e3;
        self.out.baseline_ms.push(b);
        self.out.subject_ms.push(s);
        self.out.ratios.push(rate_ratio(self.work_ratio, b, s));
        policy.enough(self.out.ratios.len(), self.spent_s, half_width(&self.out.ratios))
    }
}
