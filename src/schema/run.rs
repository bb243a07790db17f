//! A run: one invocation of `bench`, `tune`, `transfers` or `multi` on one GPU, stored as one
//! file of JSON lines. The header comes first; every record after it is appended (and flushed) as
//! soon as it is measured, so a run that is killed keeps what it finished, and two processes never
//! write the same file.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::device::DeviceInfo;
use super::entry::Entry;
use super::multi::MultiResults;
use super::transfers::Transfers;
use super::tuning::{Candidate, TuneRecord};

/// Bumped whenever a field changes meaning or disappears. Schema 1 was one JSON file per device
/// whose reruns replaced earlier entries; `analysis::migrate` reads it.
pub const SCHEMA: u32 = 2;

/// How many samples to take.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Policy {
    pub min_samples: usize,
    pub max_samples: usize,
    /// GPU time to aim for across the samples of one variant and shape, seconds.
    pub budget_s: f64,
    /// Never spend more than this on one variant and shape (slow rungs at large sizes), seconds;
    /// at least `FLOOR_SAMPLES` are taken whatever it costs.
    pub cap_s: f64,
    /// Warm-up GPU time before sampling (at least two launches), seconds.
    pub warmup_s: f64,
}

/// The fewest samples a median is taken over.
pub const FLOOR_SAMPLES: usize = 3;

impl Policy {
    pub fn full() -> Policy {
        Policy { min_samples: 20, max_samples: 200, budget_s: 0.5, cap_s: 8.0, warmup_s: 0.05 }
    }

    pub fn quick() -> Policy {
        Policy { min_samples: 10, max_samples: 50, budget_s: 0.15, cap_s: 3.0, warmup_s: 0.02 }
    }

    /// Samples to take given one launch's time.
    pub fn samples_for(&self, est_ms: f64) -> usize {
        let est_s = (est_ms / 1e3).max(1e-6);
        let wanted = ((self.budget_s / est_s) as usize).clamp(self.min_samples, self.max_samples);
        let affordable = (self.cap_s / est_s) as usize;
        wanted.min(affordable).max(FLOOR_SAMPLES)
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
