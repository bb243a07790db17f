//! One measurement: a variant (or its family's vendor baseline) at one shape, verified and timed,
//! with typed identity so that runs can be merged and compared without parsing names.

use serde::{Deserialize, Serialize};

use super::check::Check;
use super::stats::{Interval, Summary};
use super::telemetry::Telemetry;
use crate::facts::manifest::Config;

/// What one run of the problem must do, at the least: every rate is derived from it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Work {
    pub flops: f64,
    pub bytes_read: f64,
    pub bytes_written: f64,
}

/// The rate a family reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// FLOPs / s, shown in TFLOP/s.
    Tflops,
    /// Bytes read plus bytes written / s, shown in GB/s.
    Gbs,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::Tflops => "TFLOP/s",
            Unit::Gbs => "GB/s",
        }
    }
}

impl Work {
    /// The rate in `unit` for one run taking `ms` milliseconds.
    pub fn rate(&self, unit: Unit, ms: f64) -> f64 {
        let s = ms / 1e3;
        match unit {
            Unit::Tflops => self.flops / s / 1e12,
            Unit::Gbs => (self.bytes_read + self.bytes_written) / s / 1e9,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
    Skipped,
}

/// What was measured.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The family's vendor routine (cuBLAS, cudaMemcpy).
    Baseline,
    /// A variant as its manifest configures it.
    Variant,
    /// A variant in the configuration `kernel-lab tune` stored for this device.
    Tuned,
    /// The vendor library at its best for the shape: the fastest of cuBLASLt's top heuristic
    /// candidates (the GEMM families), beside the default call.
    #[serde(rename = "vendor_best")]
    VendorBest,
}

/// An entry's identity across runs: the same key in two runs is the same measurement repeated.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Key {
    pub family: String,
    pub variant: String,
    pub kind: Kind,
    pub dims: Vec<u64>,
}

/// The power state the samples are taken in (`--regime`), said in every entry's timing.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Regime {
    /// Back to back, as a long job runs: under the board's power cap where the kernel draws
    /// enough (the H200's 700 W), whoever is timed runs at the clock the cap leaves.
    #[default]
    Sustained,
    /// Each sample after a rest that lets the power budget recover and a warm-up launch that
    /// brings the clocks back; samples below 90% of the maximum SM clock or under a power-cap
    /// throttle are dropped and counted. What ncu and published figures measure.
    Burst,
    /// Launches back to back from a CUDA graph, inputs warm in L2, no flush: the time per
    /// launch of a small, launch-bound problem run over and over (a layer in a captured model),
    /// without the CPU's launch cost or a cold cache. Not comparable with the other two.
    Hot,
}

impl Regime {
    pub fn label(self) -> &'static str {
        match self {
            Regime::Sustained => "sustained",
            Regime::Burst => "burst",
            Regime::Hot => "hot (CUDA graph, L2 warm)",
        }
    }
}

/// How L2 was emptied before each sample: results timed one way are not compared with results
/// timed another (on the H200 the two flushes give paired ratios 2-8% apart for 1024³ GEMMs and
/// 6-18% apart for L2-sized working sets).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum L2Flush {
    /// A memset of twice the L2, which leaves it full of dirty lines.
    #[default]
    Memset,
    /// Loads of twice the L2, which leave only clean lines.
    Loads,
    /// No flush (the hot regime).
    None,
}

/// How an entry was timed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Timing {
    pub regime: Regime,
    /// Every run writes it; a file that lacks it reads as None, which `compare` takes for a memset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<L2Flush>,
    /// Samples dropped (the burst regime's: below 90% of the maximum SM clock, or power-capped).
    pub dropped: usize,
    /// The median time, ms, with its 95% interval.
    pub median: Interval,
    /// Launches per sample: a hot sample is one graph of several launches, its time divided.
    #[serde(default = "Timing::one")]
    pub launches: usize,
}

impl Timing {
    fn one() -> usize {
        1
    }
}

/// The ratio to the baseline, from the baseline and the variant timed in alternation (pairs),
/// so that both ran in the same thermal and power state: the median of the pairs' ratios of
/// rates, with its 95% interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Paired {
    pub ratio: Interval,
    pub pairs: usize,
    /// The baseline's median time in the pairs, ms.
    pub baseline_ms: f64,
}

/// Where one entry's wall time went, seconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Wall {
    /// Poison, one launch, the check against the reference.
    pub verify_s: f64,
    /// Warm-up and samples (and the baseline's share of the pairs).
    pub timing_s: f64,
    /// The check of what the timed launches left.
    pub recheck_s: f64,
}

/// One variant (or the family's baseline) at one shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub family: String,
    /// The variant's name, or the baseline's ("cuBLAS SGEMM").
    pub variant: String,
    pub kind: Kind,
    pub rung: u32,
    /// The block shape and constants it ran with; None for the baseline.
    pub config: Option<Config>,
    /// Where a tuned configuration comes from ("tuned at 4096x4096x4096").
    #[serde(default)]
    pub tuned_at: Option<String>,
    /// How tables show the shape ("1024 MiB", "4096x4096x4096").
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
    /// NVML's view of the timed launches (absent without NVML).
    #[serde(default)]
    pub telemetry: Option<Telemetry>,
    /// The first timing saw throttling, so the launches were timed once more (this is that run).
    #[serde(default)]
    pub remeasured: bool,
    /// How the kernel was compiled where the build had no code for this GPU ("NVRTC 13.0 here:
    /// sm_90 is not in the fatbin"); absent for the build's own fatbins.
    #[serde(default)]
    pub compiled_here: Option<String>,
    /// The regime, the median's interval and the samples dropped (absent where nothing was timed).
    #[serde(default)]
    pub timing: Option<Timing>,
    /// The paired ratio to the baseline, where the family has one and both verified.
    #[serde(default)]
    pub paired: Option<Paired>,
    /// A kernel's paired ratio to the vendor's best (cuBLASLt's best algorithm at this shape,
    /// measured earlier in the same run): the two timed in alternation, in one state of the board.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_best: Option<Paired>,
    #[serde(default)]
    pub wall: Option<Wall>,
    /// The vendor library's algorithm a `VendorBest` entry ran, and how it was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_algo: Option<String>,
}

impl Entry {
    pub fn key(&self) -> Key {
        Key { family: self.family.clone(), variant: self.variant.clone(), kind: self.kind, dims: self.dims.clone() }
    }

    pub fn is_baseline(&self) -> bool {
        self.kind == Kind::Baseline
    }

    /// The name tables show: the variant, with "@tuned" for a tuned configuration.
    pub fn label(&self) -> String {
        match self.kind {
            Kind::Tuned => format!("{}@tuned", self.variant),
            _ => self.variant.clone(),
        }
    }

    /// The configuration as tables show it: "vendor library" for the baseline, the algorithm
    /// for the vendor's best.
    pub fn config_label(&self) -> String {
        match (&self.config, &self.tuned_at) {
            (None, _) => self.vendor_algo.clone().unwrap_or_else(|| "vendor library".to_string()),
            (Some(c), None) => c.label(),
            (Some(c), Some(at)) => format!("{} ({at})", c.label()),
        }
    }

    /// A define of the configuration it ran with.
    pub fn define(&self, name: &str) -> Option<i64> {
        self.config.as_ref()?.define(name)
    }
}
