//! What `kernel-lab tune` tried and found: one record per variant and shape searched.

use serde::{Deserialize, Serialize};

use crate::facts::manifest::Config;

/// How one tuning candidate ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CandidateStatus {
    /// Verified and timed.
    Ok,
    /// Ran but failed verification, or its launches failed.
    Failed,
    /// Pruned: breaks a constraint, does not compile, or cannot launch on this GPU.
    Rejected,
    /// Its process died (a crash, a hang past the time limit): recorded, and the search goes on.
    Crashed,
}

/// One configuration the tuner tried.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Candidate {
    pub config: Config,
    pub status: CandidateStatus,
    pub reason: Option<String>,
    pub median_ms: Option<f64>,
    pub rate: Option<f64>,
    pub error: Option<f64>,
    pub registers: Option<u32>,
    pub smem_bytes: Option<u32>,
    pub local_bytes: Option<u32>,
    pub blocks_per_sm: Option<u32>,
    /// `jit::hash` of what was compiled (source and included headers without their comments,
    /// defines, target, NVRTC).
    pub hash: Option<String>,
}

/// The outcome of tuning one variant at one shape on this device.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TuneRecord {
    pub family: String,
    pub variant: String,
    pub shape: String,
    pub dims: Vec<u64>,
    pub date: String,
    pub git_commit: String,
    pub budget_s: f64,
    /// Configurations in the search space, and how many were tried within the budget.
    pub space: usize,
    pub tried: usize,
    /// Configurations dropped before compiling (a manifest constraint, the block size), counted
    /// per reason: the configurations themselves follow from the manifest.
    #[serde(default)]
    pub pruned: Vec<(String, usize)>,
    pub candidates: Vec<Candidate>,
    /// The finalists re-timed head to head: (config label, median of each round, ms).
    pub head_to_head: Vec<(String, Vec<f64>)>,
    pub best: Option<Config>,
    /// Bench compiles `best` only while its hash still matches (same source, headers, NVRTC).
    pub best_hash: Option<String>,
    pub best_median_ms: Option<f64>,
    pub best_rate: Option<f64>,
}

impl TuneRecord {
    /// Configurations pruned before compiling, or rejected after (no compile, no launch).
    pub fn rejected(&self) -> usize {
        self.pruned.iter().map(|(_, n)| n).sum::<usize>() + self.candidates.iter().filter(|c| c.status == CandidateStatus::Rejected).count()
    }
}
