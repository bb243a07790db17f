//! advise held to what PyTorch measures: the steps `scripts/torch_step.py` timed (one JSON line
//! each, kept beside a GPU model's runs in `<model>-<arch>/pytorch/`), each beside advise's
//! prediction for its GPU, workload, mode and batch, from whatever results advise is given. With
//! each GPU's own results that is the model's error where it was fitted; with one GPU's results
//! alone, a prediction for the others made before they were measured.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{advise, Launches, Mode, Precision, Request, Workload};
use crate::store::View;
use crate::error::{LabError, Result};
use crate::facts::sheet;

/// One step as torch_step.py writes it (the fields read here; the profile is left for people).
#[derive(Debug, Clone, Deserialize)]
pub struct TorchStep {
    pub workload: String,
    pub mode: String,
    pub batch: u64,
    pub gpu: String,
    /// The GPU's SM count, where the script recorded it (it tells an H100 SXM from a PCIe card).
    #[serde(default)]
    pub sms: Option<u32>,
    pub time: TorchTime,
    /// torch.profiler's GPU time per category in one profiled step, where it was recorded.
    #[serde(default)]
    pub profile: Option<TorchProfile>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TorchProfile {
    #[serde(default)]
    pub ms: BTreeMap<String, f64>,
    /// The profiled step's time and the time some kernel ran in it, ms (older files lack the
    /// latter: it is the step less its idle time, "launch gaps").
    #[serde(default)]
    pub step_ms: Option<f64>,
    #[serde(default)]
    pub busy_ms: Option<f64>,
    /// The kernels the profiled step launched.
    #[serde(default)]
    pub kernels: Option<u64>,
    /// The profiled step's memsets and copies, which are no kernels (newer files count them).
    #[serde(default)]
    pub other: Option<Other>,
    /// The longest kernels with the category each was put in. A profile without them is not
    /// compared: its sorting cannot be checked.
    #[serde(default)]
    pub top: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TorchTime {
    pub median_ms: f64,
    pub max_memory_allocated_gb: f64,
    /// The host's time to issue each phase of the step (forward, backward, update), ms, where
    /// the script recorded it.
    #[serde(default)]
    pub host_ms: BTreeMap<String, f64>,
}

impl TorchProfile {
    /// The time some kernel ran in the profiled step, ms.
    fn busy(&self) -> Option<f64> {
        self.busy_ms.or_else(|| Some(self.step_ms? - self.ms.get("launch gaps")?))
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Other {
    #[serde(default)]
    pub memset: Option<Calls>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Calls {
    pub calls: u64,
}

/// A PyTorch step beside the prediction for it.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub gpu: &'static str,
    pub workload: String,
    pub mode: Mode,
    pub batch: u64,
    pub pytorch_ms: f64,
    pub predicted_ms: f64,
    pub range_ms: (f64, f64),
    /// predicted / PyTorch - 1.
    pub error: f64,
    /// The range's half-width as a share of the prediction.
    pub range_share: f64,
    pub inside: bool,
    pub pytorch_gb: f64,
    pub predicted_gb: Option<f64>,
    /// The host's time to issue the step, ms, where measured: the step cannot run faster.
    pub host_ms: Option<f64>,
    pub basis: String,
    /// The step by what the model prices apart, ms: (part, predicted, torch.profiler's).
    pub parts: Vec<(&'static str, f64, Option<f64>)>,
    /// The kernels PyTorch's profiled step launched, where the file counts them.
    pub kernels: Option<u64>,
    /// The memsets it queued, where the file counts them (older files do not).
    pub memsets: Option<u64>,
    /// What the model counts for the step.
    pub predicted_launches: Option<Launches>,
}

impl Check {
    /// The timed step's launch gaps a launch of the profiled step's (a kernel or, where the file
    /// counts them, a memset), microseconds: to set beside the launch cost the model prices each
    /// gap at.
    pub fn gap_us(&self) -> Option<f64> {
        let gaps = self.parts.iter().find(|p| p.0 == GAPS)?.2?;
        let launches = self.kernels? + self.memsets.unwrap_or(0);
        Some(gaps * 1e3 / (launches > 0).then_some(launches)? as f64)
    }
}

/// The gaps between launches: the timed step's median less the time kernels ran.
const GAPS: &str = "launch gaps";

/// torch.profiler's categories each part of the model stands for: the GEMMs (ResNet-50's
/// convolutions among them, shape by shape or as implicit GEMMs; attention as its GEMMs) and the
/// passes priced at memory speed (element-wise, normalisation, the optimizer's update). The third
/// part, the gaps between launches, is no category of the profiler's.
const PARTS: [(&str, &[&str]); 2] = [
    ("GEMMs", &["gemm", "attention", "convolution"]),
    ("memory-bound passes", &["element-wise", "normalisation", "optimizer"]),
];

/// The steps of a torch_step.py output file; a line that is not one is an error naming it.
pub fn read(path: &Path) -> Result<Vec<TorchStep>> {
    let bad = |msg: String| LabError::Results { path: path.display().to_string(), msg };
    let text = std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| bad(format!("line {}: not a torch_step.py step: {e}", i + 1))))
        .collect()
}

/// The sheet's GPU a PyTorch device name is: by name and SM count where both are known, else
/// by a name only one row of the sheet matches.
fn sheet_gpu(step: &TorchStep) -> Option<&'static sheet::Gpu> {
    if let Some(sms) = step.sms {
        return sheet::for_device(&step.gpu, sms);
    }
    let fits: Vec<&'static sheet::Gpu> = sheet::named(&step.gpu).collect();
    (fits.len() == 1).then(|| fits[0])
}

/// Each step beside advise's prediction from `views`, in fp16 (torch_step.py runs autocast).
pub fn check(steps: &[TorchStep], views: &[View]) -> std::result::Result<Vec<Check>, String> {
    steps
        .iter()
        .map(|s| {
            let gpu = sheet_gpu(s).ok_or_else(|| format!("{}: not a GPU of the spec sheet", s.gpu))?;
            let workload = Workload::parse(&s.workload)?;
            let mode = match s.mode.as_str() {
                "train" => Mode::Train,
                "infer" => Mode::Infer,
                m => return Err(format!("{}: mode '{m}' is neither train nor infer", s.workload)),
            };
            let req = Request { workload, mode, precision: Precision::Fp16, batch: s.batch, budget_usd: None, power_w: None, gpus: 1 };
            let rows = advise(&req, views);
            let row = rows.iter().find(|r| r.gpu == gpu.name).ok_or_else(|| format!("{}: advise priced no such GPU", gpu.name))?;
            let (lo, hi) = row.step_ms_range;
            let profile = s.profile.as_ref().filter(|p| !p.top.is_empty());
            let measured = |cats: &[&str]| profile.map(|p| cats.iter().filter_map(|c| p.ms.get(*c)).sum::<f64>());
            let mut parts: Vec<_> = PARTS.iter().zip([row.gemm_ms, row.stream_ms]).map(|((part, cats), ms)| (*part, ms, measured(cats))).collect();
            // The timed step's gaps: its median less the time kernels ran in the profiled step
            // (the profiler slows the host, which widens the profiled step's own gaps).
            let gaps = profile.and_then(TorchProfile::busy).map(|busy| (s.time.median_ms - busy).max(0.0));
            parts.push((GAPS, row.gaps_ms.unwrap_or(0.0), gaps));
            let host = &s.time.host_ms;
            Ok(Check {
                gpu: gpu.name,
                workload: s.workload.clone(),
                mode,
                batch: s.batch,
                pytorch_ms: s.time.median_ms,
                predicted_ms: row.step_ms,
                range_ms: (lo, hi),
                error: row.step_ms / s.time.median_ms - 1.0,
                range_share: (hi - lo) / 2.0 / row.step_ms,
                inside: (lo..=hi).contains(&s.time.median_ms),
                pytorch_gb: s.time.max_memory_allocated_gb,
                predicted_gb: row.memory_gb,
                host_ms: (!host.is_empty()).then(|| host.values().sum()),
                basis: row.basis.clone(),
                parts,
                kernels: profile.and_then(|p| p.kernels),
                memsets: profile.and_then(|p| Some(p.other.as_ref()?.memset.as_ref()?.calls)),
                predicted_launches: row.launches,
            })
        })
        .collect()
}
