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

/// The outcome of tuning one variant at one shape on this device. Its default is a search that
/// has tried nothing yet: no candidates, no pick.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
    /// The finalists re-timed head to head: (config label, median of each round, ms); a round
    /// that failed is infinite (null in the file, which JSON's numbers cannot say).
    #[serde(with = "failed_as_null")]
    pub head_to_head: Vec<(String, Vec<f64>)>,
    pub best: Option<Config>,
    /// Bench compiles `best` only while its hash still matches (same source, headers, NVRTC).
    pub best_hash: Option<String>,
    /// The `best_hash` the search ran under, where `kernel-lab carry` later moved the tuning to
    /// `best_hash` on proof that nvcc makes the same SASS of both codes; absent on a tuning bench
    /// compiles as it was searched. Kept so that a tuning's history says its times came from
    /// other source text than the one its hash now names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried_from: Option<String>,
    pub best_median_ms: Option<f64>,
    pub best_rate: Option<f64>,
}

impl TuneRecord {
    /// Configurations pruned before compiling, or rejected after (no compile, no launch).
    pub fn rejected(&self) -> usize {
        self.pruned.iter().map(|(_, n)| n).sum::<usize>() + self.candidates.iter().filter(|c| c.status == CandidateStatus::Rejected).count()
    }

    /// The pick against `manifest`: from the head-to-head where both were finalists, else from
    /// the search pass. Never the search pass's time against the head-to-head's: the head-to-head
    /// times under the full policy, long enough for a power-limited kernel to slow down, so one
    /// configuration timed both ways would look slower than itself.
    pub fn gain_over(&self, manifest: &Config) -> Option<Gain> {
        let best = self.best.as_ref()?;
        let searched = |config: &Config| {
            self.candidates
                .iter()
                .find(|c| &c.config == config && c.status == CandidateStatus::Ok)
                .and_then(|c| Some((c.median_ms?, c.rate?)))
        };
        let ((m_ms, m_rate), (b_ms, b_rate)) = (searched(manifest)?, searched(best)?);
        let finals = |config: &Config| {
            let label = config.label();
            let rounds = &self.head_to_head.iter().find(|(l, _)| *l == label)?.1;
            let mean = rounds.iter().sum::<f64>() / rounds.len() as f64;
            (!rounds.is_empty() && mean.is_finite()).then_some(mean)
        };
        // Work = rate x time of the search pass; the head-to-head's rate is that work over its time.
        // A manifest whose re-timing failed is judged on the search pass with the pick.
        let (manifest_ms, best_ms, gain, head_to_head) = match (finals(manifest), finals(best)) {
            (Some(m), Some(b)) => (m, b, (b_rate * b_ms / b) / (m_rate * m_ms / m), true),
            _ => (m_ms, b_ms, b_rate / m_rate, false),
        };
        (gain.is_finite() && gain > 0.0).then_some(Gain { manifest_ms, best_ms, gain, head_to_head })
    }
}

/// The search's pick against the manifest's own configuration, both timed under one policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gain {
    pub manifest_ms: f64,
    pub best_ms: f64,
    /// Of rates, not times: a constant may change the declared work.
    pub gain: f64,
    /// Both timed head to head (the full policy), else both in the search pass.
    pub head_to_head: bool,
}

/// JSON has no infinity: a failed round is written null and read back infinite, so a record with
/// one still reads.
mod failed_as_null {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    type Rounds = Vec<(String, Vec<f64>)>;

    pub fn serialize<S: Serializer>(v: &Rounds, s: S) -> Result<S::Ok, S::Error> {
        let written: Vec<(&String, Vec<Option<f64>>)> =
            v.iter().map(|(label, ms)| (label, ms.iter().map(|&x| x.is_finite().then_some(x)).collect())).collect();
        written.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Rounds, D::Error> {
        let read = Vec::<(String, Vec<Option<f64>>)>::deserialize(d)?;
        Ok(read.into_iter().map(|(label, ms)| (label, ms.into_iter().map(|x| x.unwrap_or(f64::INFINITY)).collect())).collect())
    }
}
