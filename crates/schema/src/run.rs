//! A run: one invocation of `bench`, `tune`, `transfers` or `multi` on one GPU, stored as one
//! file of JSON lines. The header comes first; every record after it is appended (and flushed) as
//! soon as it is measured, so a run that is killed keeps what it finished, and two processes never
//! write the same file.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::device::DeviceInfo;
use super::entry::Entry;
pub use super::entry::Regime;
use super::multi::MultiResults;
use super::transfers::Transfers;
use super::tuning::{Candidate, TuneRecord};

/// Bumped whenever a field changes meaning or disappears; a reader refuses any other number with
/// one line naming the file.
pub const SCHEMA: u32 = 2;

/// How many samples to take: rounds until the median's 95% interval (or a paired ratio's) is
/// within `target` of it, between `min_samples` and `max_samples` and within `cap_s`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Policy {
    pub min_samples: usize,
    pub max_samples: usize,
    /// The interval's half-width to stop at, as a share of the estimate (0.01: ±1%).
    #[serde(default = "Policy::default_target")]
    pub target: f64,
    /// Never spend more than this on one subject's samples (slow rungs at large sizes), seconds
    /// of GPU time; at least `FLOOR_SAMPLES` are taken whatever it costs.
    pub cap_s: f64,
    /// Warm-up GPU time before sampling (at least two launches), seconds. The full policy's
    /// half second is what the H200 takes to settle at its 700 W cap from a cooler kernel.
    pub warmup_s: f64,
    #[serde(default)]
    pub regime: Regime,
}

/// The fewest samples a median is taken over.
pub const FLOOR_SAMPLES: usize = 3;

impl Policy {
    fn default_target() -> f64 {
        0.01
    }

    pub fn full() -> Policy {
        Policy { min_samples: 10, max_samples: 200, target: 0.01, cap_s: 4.0, warmup_s: 0.5, regime: Regime::Sustained }
    }

    pub fn quick() -> Policy {
        Policy { min_samples: 5, max_samples: 50, target: 0.02, cap_s: 1.0, warmup_s: 0.02, regime: Regime::Sustained }
    }

    /// Whether `n` samples that took `spent_s` of GPU time, whose estimate's interval is
    /// `interval` wide (a share of the estimate), are enough.
    pub fn enough(&self, n: usize, spent_s: f64, half_width: f64) -> bool {
        n >= FLOOR_SAMPLES && (n >= self.max_samples || spent_s >= self.cap_s || (n >= self.min_samples && half_width <= self.target))
    }
}

/// What kind of run a file holds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    Bench,
    Tune,
    Transfers,
    Multi,
}

/// One invocation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    /// Unique among runs: the start time, the card and the process.
    pub id: String,
    pub kind: RunKind,
    /// UTC, RFC 3339.
    pub date: String,
    pub git_commit: String,
    pub lab_version: String,
    pub nvcc: String,
    pub driver: String,
    pub command: String,
    /// The seed its inputs were drawn from (replay with --seed).
    pub seed: Option<u64>,
    pub policy: Option<Policy>,
    /// How long one variant may run before it is stopped and recorded as hung, seconds, where the
    /// run set one limit for all (`--hang-limit`); else each variant's own limit (see the README).
    #[serde(default)]
    pub hang_limit_s: Option<f64>,
}

/// The first line of a run file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub schema: u32,
    pub run: RunInfo,
    pub device: DeviceInfo,
}

/// Where a run's wall time went, seconds per phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Phases {
    pub wall_s: f64,
    pub phases: Vec<(String, f64)>,
}

/// One line after the header.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "record", rename_all = "lowercase")]
pub enum Record {
    Entry(Box<Entry>),
    /// One configuration the tuner tried, written as it finishes; the `Tuning` record at the end
    /// of the search holds them all.
    Candidate {
        family: String,
        variant: String,
        shape: String,
        candidate: Box<Candidate>,
    },
    Tuning(Box<TuneRecord>),
    Transfers(Box<Transfers>),
    Multi(Box<MultiResults>),
    /// What a family concluded from the run (the l2 family's inferred L2 size).
    Note {
        text: String,
    },
    /// The run ended (a run without one was cut short): its wall time and where it went.
    End(Phases),
}

/// A run as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub path: PathBuf,
    pub header: Header,
    pub records: Vec<Record>,
    /// It has its End record; a run without one was cut short (killed, or still running).
    pub complete: bool,
}

impl Run {
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.records.iter().filter_map(|r| match r {
            Record::Entry(e) => Some(e.as_ref()),
            _ => None,
        })
    }
}
