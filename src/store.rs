//! Results files: one JSON file per device under results/, schema-versioned and self-describing
//! (device, toolkit, driver, commit, date, and per entry the hash of the variant's source and
//! flags). Written atomically; a new run replaces only the entries it measured.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::device::DeviceInfo;
use crate::error::{LabError, Result};
use crate::families::{Unit, Work};
use crate::registry::Config;
use crate::stats::Summary;
use crate::timing::Policy;
use crate::verify::Check;

/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResultsFile {
    pub schema: u32,
    pub device: DeviceInfo,
    pub runs: Vec<RunInfo>,
    pub entries: Vec<Entry>,
    /// `kernel-lab tune` results, one per family, variant and shape.
    #[serde(default)]
    pub tuning: Vec<TuneRecord>,
    /// The last `kernel-lab transfers`.
    #[serde(default)]
    pub transfers: Option<crate::transfers::Transfers>,
    /// The last `kernel-lab multi` (stored with the first GPU of the set).
    #[serde(default)]
    pub multi: Option<crate::multi::MultiResults>,
}

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
    /// `jit::hash` of the compiled code.
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
        self.pruned.iter().map(|(_, n)| n).sum::<usize>()
            + self.candidates.iter().filter(|c| c.status == CandidateStatus::Rejected).count()
    }
}

/// One invocation of `kernel-lab bench`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    pub id: u32,
    /// UTC, RFC 3339.
    pub date: String,
    pub git_commit: String,
    pub lab_version: String,
    pub nvcc: String,
    pub driver: String,
    pub command: String,
    pub seed: u64,
    pub policy: Policy,
    /// What the families concluded from the run (the l2 family's inferred L2 size, say).
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
    Skipped,
}

/// One variant (or the family's baseline) at one shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub run: u32,
    pub family: String,
    pub variant: String,
    pub baseline: bool,
    pub rung: u32,
    pub config: String,
    pub shape: String,
    pub dims: Vec<u64>,
    pub status: Status,
    pub reason: Option<String>,
    pub seed: u64,
    pub verify: Option<Check>,
    /// The check of the output the timed launches left.
    pub verify_after: Option<Check>,
    pub time: Option<Summary>,
    pub work: Work,
    pub unit: Unit,
    pub rate: Option<f64>,
    pub vs_baseline: Option<f64>,
    /// The device's ceiling in `unit` this entry is measured against.
    pub peak: Option<f64>,
    pub vs_peak: Option<f64>,
    pub source_hash: Option<String>,
    /// NVML's view of the timed launches (absent without NVML, and in files from before it).
    #[serde(default)]
    pub telemetry: Option<crate::telemetry::Telemetry>,
    /// The first timing saw throttling, so the launches were timed once more (this is that run).
    #[serde(default)]
    pub remeasured: bool,
    /// How the kernel was compiled where the build had no code for this GPU ("NVRTC 13.0 here:
    /// sm_90 is not in the fatbin"); absent for the build's own fatbins.
    #[serde(default)]
    pub compiled_here: Option<String>,
}

impl Entry {
    fn key(&self) -> (&str, &str, &str) {
        (&self.family, &self.variant, &self.shape)
    }
}

/// results/<device-slug>.json
pub fn path_for(dir: &Path, device: &DeviceInfo) -> PathBuf {
    dir.join(format!("{}.json", device.slug()))
}

/// Reads a results file; a missing, unreadable, foreign or other-schema file is an error that
/// names the file.
pub fn load(path: &Path) -> Result<ResultsFile> {
    let err = |msg: String| LabError::Results { path: path.display().to_string(), msg };
    let text = std::fs::read_to_string(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| err(format!("not JSON: {e}")))?;
    match value.get("schema").and_then(|s| s.as_u64()) {
        None => return Err(err("not a kernel-lab results file (no schema number)".into())),
        Some(s) if s != SCHEMA as u64 => return Err(err(format!("results schema {s}, but this kernel-lab reads schema {SCHEMA}"))),
        Some(_) => {}
    }
    serde_json::from_value(value).map_err(|e| err(format!("does not match results schema {SCHEMA}: {e}")))
}

/// Adds a run to `existing` (if any): its entries replace those of the same family, variant
/// and shape; runs no entry refers to any more are dropped.
pub fn merge(existing: Option<ResultsFile>, device: DeviceInfo, mut run: RunInfo, mut entries: Vec<Entry>) -> ResultsFile {
    let mut file = existing.unwrap_or_else(|| empty(device.clone()));
    run.id = file.runs.iter().map(|r| r.id + 1).max().unwrap_or(0);
    for e in &mut entries {
        e.run = run.id;
    }
    file.entries.retain(|old| !entries.iter().any(|new| new.key() == old.key()));
    file.entries.extend(entries);
    file.runs.push(run);
    file.runs.retain(|r| file.entries.iter().any(|e| e.run == r.id));
    file.device = device;
    file
}

fn empty(device: DeviceInfo) -> ResultsFile {
    ResultsFile { schema: SCHEMA, device, runs: Vec::new(), entries: Vec::new(), tuning: Vec::new(), transfers: None, multi: None }
}

/// The file with `transfers` set (a new file if there is none).
pub fn with_transfers(existing: Option<ResultsFile>, device: DeviceInfo, transfers: crate::transfers::Transfers) -> ResultsFile {
    let mut file = existing.unwrap_or_else(|| empty(device.clone()));
    file.transfers = Some(transfers);
    file.device = device;
    file
}

pub fn with_multi(existing: Option<ResultsFile>, device: DeviceInfo, multi: crate::multi::MultiResults) -> ResultsFile {
    let mut file = existing.unwrap_or_else(|| empty(device.clone()));
    file.multi = Some(multi);
    file.device = device;
    file
}

impl ResultsFile {
    /// Drops entries and tuning records of variants this build no longer has (renamed or
    /// removed kernels), keeping baselines and tuned runs of variants it has.
    pub fn retain_known(&mut self, known: impl Fn(&str) -> bool) {
        let known_entry = |e: &Entry| e.baseline || known(e.variant.trim_end_matches("@tuned"));
        self.entries.retain(known_entry);
        self.tuning.retain(|t| known(&t.variant));
        self.runs.retain(|r| self.entries.iter().any(|e| e.run == r.id));
    }
}

/// Puts a tuning record into `existing` (or a new file), replacing the one for the same family,
/// variant and shape.
pub fn upsert_tuning(existing: Option<ResultsFile>, device: DeviceInfo, record: TuneRecord) -> ResultsFile {
    let mut file = existing.unwrap_or_else(|| empty(device.clone()));
    file.tuning.retain(|t| !(t.family == record.family && t.variant == record.variant && t.shape == record.shape));
    file.tuning.push(record);
    file.device = device;
    file
}

/// The results file at `path` if there is one; an unreadable or foreign one is an error, so
/// that it is never overwritten.
pub fn load_existing(path: &Path) -> Result<Option<ResultsFile>> {
    if path.exists() {
        load(path).map(Some)
    } else {
        Ok(None)
    }
}

/// Writes to a temporary file beside `path`, then renames it over `path`: a reader never sees
/// half a file, and a failed write leaves the old one.
pub fn write_atomic(path: &Path, file: &ResultsFile) -> Result<()> {
    let err = |msg: String| LabError::Results { path: path.display().to_string(), msg };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err(format!("cannot create folder: {e}")))?;
    }
    let text = serde_json::to_string_pretty(file).map_err(|e| err(format!("cannot serialise: {e}")))?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    std::fs::write(&tmp, text + "\n").map_err(|e| err(format!("cannot write {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(format!("cannot replace: {e}"))
    })
}
