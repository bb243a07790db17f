//! What a `bench` or `verify` will run, settled before any GPU work: the families, their shapes
//! (sizes, suites, or random ones for `--fuzz`), and per shape the subjects in order (the vendor
//! baseline, each variant, and each variant's stored tuning). A job is one family's share, the
//! unit a worker process runs.

use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use super::families::{self, inputs::seed_for, Family, Shape};
use crate::error::{LabError, Result};
use crate::facts::manifest::Config;
use crate::gpu::availability;
use crate::gpu::registry::{self, VariantSpec};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Entry, Kind};
use crate::schema::run::{Policy, Regime, Run, RunKind};
use crate::schema::tuning::TuneRecord;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub filter: Option<String>,
    pub sizes: Vec<String>,
    /// Named shape sets of the families (`--suite bert`); families without one are left out.
    pub suites: Vec<String>,
    pub quick: bool,
    /// Random shapes per family, after the sizes and suites (`verify --fuzz N`).
    pub fuzz: Option<usize>,
    /// Time as well as verify.
    pub time: bool,
    /// Stored tuning results for this device: each variant with one is also run in its tuned
    /// configuration, compiled with NVRTC, while the record's hash still matches.
    pub tuned: Vec<TuneRecord>,
    pub regime: Regime,
    /// The interval to stop sampling at, a share of the estimate (else the policy's own).
    pub target: Option<f64>,
}

impl Options {
    pub fn policy(&self) -> Policy {
        let p = if self.quick { Policy::quick() } else { Policy::full() };
        Policy { regime: self.regime, target: self.target.unwrap_or(p.target), ..p }
    }
}

/// One family's part of a run, with its shapes parsed before any GPU work.
pub struct Plan {
    pub family: &'static dyn Family,
    pub variants: Vec<&'static VariantSpec>,
    pub shapes: Vec<Shape>,
}

/// What one entry measures, as a worker process is told it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Subject {
    Baseline,
    /// The baseline's GEMM by the fastest of cuBLASLt's top heuristic candidates.
    VendorBest,
    /// A variant as built.
    Variant {
        name: String,
    },
    /// A variant in its stored tuning for this device, compiled here, if the hash of what NVRTC
    /// makes of it still matches the record's.
    Tuned {
        name: String,
        config: Config,
        tuned_at: String,
        date: String,
        hash: String,
    },
}

/// One shape and its subjects in order (the baseline first, so ratios can be taken).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    pub dims: Vec<u64>,
    pub seed: u64,
    pub subjects: Vec<Subject>,
}

/// One family's steps: the unit of work of one worker process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub family: String,
    pub steps: Vec<Step>,
    pub time: bool,
    pub policy: Policy,
}

/// Resolves the filter and sizes; bad input is an error here, before a GPU is touched. With
/// `fuzz`, `seed` draws the random shapes.
pub fn plan(opts: &Options, seed: u64) -> Result<Vec<Plan>> {
    let selected = registry::select(opts.filter.as_deref())?;
    // Fuzzed shapes come from the run's seed too, apart from the inputs drawn from it.
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed ^ 0x6675_7a7a);
    let mut plans = Vec::new();
    for name in registry::families()? {
        let variants: Vec<&'static VariantSpec> = selected.iter().copied().filter(|v| v.family == name).collect();
        if variants.is_empty() {
            continue;
        }
        let family = families::of(variants[0])?;
        let mut shapes = families::parse_sizes(family, &opts.sizes)?;
        for suite in family.suites().into_iter().filter(|s| opts.suites.iter().any(|n| n == s.name)) {
            shapes.extend(suite.shapes.into_iter().filter(|x| !shapes.contains(x)).collect::<Vec<_>>());
        }
        if let Some(n) = opts.fuzz {
            shapes.extend((0..n).map(|_| family.fuzz_shape(&mut rng)));
        } else if opts.sizes.is_empty() && opts.suites.is_empty() {
            shapes = family.default_sizes(opts.quick);
        }
        if !shapes.is_empty() {
            plans.push(Plan { family, variants, shapes });
        }
    }
    for name in &opts.suites {
        if !plans.iter().any(|p| p.family.suites().iter().any(|s| s.name == name)) {
            let known: Vec<String> = families::all()
                .iter()
                .flat_map(|f| f.suites().into_iter().map(move |s| format!("{} {}", f.info().name(), s.name)))
                .collect();
            return Err(LabError::Usage(format!("no selected family has a suite '{name}' (suites: {})", known.join(", "))));
        }
    }
    Ok(plans)
}

/// The stored tuning of `v` for `shape`: the record of that shape, else the one whose shape is
/// closest in work.
fn tuning_for<'a>(tuned: &'a [TuneRecord], fam: &dyn Family, v: &VariantSpec, shape: &Shape) -> Option<&'a TuneRecord> {
    let size = |dims: &[u64]| {
        let w = fam.work(&Shape(dims.to_vec()), Some(&v.launch));
        (w.flops + w.bytes_read + w.bytes_written).max(1.0).ln()
    };
    tuned.iter().filter(|t| t.family == v.family && t.variant == v.name && t.best.is_some()).min_by(|a, b| {
        let d = |t: &TuneRecord| if t.dims == shape.0 { -1.0 } else { (size(&t.dims) - size(&shape.0)).abs() };
        d(a).total_cmp(&d(b))
    })
}

/// The jobs of `plans`: per family, per shape, the baseline, then each variant followed by its
/// stored tuning where there is one and it picked another configuration than the manifest's.
pub fn jobs(plans: &[Plan], opts: &Options, seed: u64) -> Vec<Job> {
    plans
        .iter()
        .map(|plan| {
            let fam = plan.family;
            let steps = plan
                .shapes
                .iter()
                .map(|shape| {
                    let mut subjects = if fam.info().baseline.is_some() { vec![Subject::Baseline] } else { Vec::new() };
                    if fam.info().vendor_best {
                        subjects.push(Subject::VendorBest);
                    }
                    for v in &plan.variants {
                        subjects.push(Subject::Variant { name: v.name.clone() });
                        // A pick that is the manifest's own configuration would time the
                        // variant twice and differ from it by noise alone.
                        if let Some(rec) = tuning_for(&opts.tuned, fam, v, shape).filter(|t| t.best.as_ref() != Some(&v.config())) {
                            subjects.push(Subject::Tuned {
                                name: v.name.clone(),
                                config: rec.best.clone().expect("tuning_for picks records with a best"),
                                tuned_at: format!("tuned at {}", rec.shape),
                                date: rec.date.clone(),
                                hash: rec.best_hash.clone().unwrap_or_default(),
                            });
                        }
                    }
                    Step { dims: shape.0.clone(), seed: seed_for(seed, fam.info().name(), shape), subjects }
                })
                .collect();
            Job { family: fam.info().name().to_string(), steps, time: opts.time, policy: opts.policy() }
        })
        .collect()
}

/// How long one subject may take before it is stopped and recorded as hung, seconds: a minute,
/// plus twice the timing policy's budget for one subject (it may be timed twice when throttled),
/// plus twenty launches at 2% of the family's ceiling on this device (a slow rung at a large
/// shape). The README states the rule; `--hang-limit` replaces it.
pub fn hang_limit(fam: &dyn Family, spec: Option<&VariantSpec>, shape: &Shape, ceiling: Option<f64>, job: &Job) -> f64 {
    let work = fam.work(shape, spec.map(|v| &v.launch));
    let slow_rate = 0.02 * ceiling.unwrap_or(1.0).max(1e-3);
    let launch_s = match fam.info().unit {
        crate::schema::entry::Unit::Tflops => work.flops / (slow_rate * 1e12),
        crate::schema::entry::Unit::Gbs => (work.bytes_read + work.bytes_written) / (slow_rate * 1e9),
    };
    let timing = if job.time { 2.0 * (job.policy.cap_s + job.policy.warmup_s) } else { 0.0 };
    60.0 + timing + 20.0 * launch_s
}

/// The variant a subject names, if it names one.
pub fn spec_of(subject: &Subject) -> Result<Option<&'static VariantSpec>> {
    match subject {
        Subject::Baseline | Subject::VendorBest => Ok(None),
        Subject::Variant { name } | Subject::Tuned { name, .. } => registry::by_name(name).map(Some),
    }
}

/// The configuration a subject runs in: the manifest's, the stored tuning's, or none.
pub fn config_of(subject: &Subject, spec: Option<&VariantSpec>) -> Option<Config> {
    match subject {
        Subject::Baseline | Subject::VendorBest => None,
        Subject::Variant { .. } => spec.map(VariantSpec::config),
        Subject::Tuned { config, .. } => Some(config.clone()),
    }
}

/// The launch of a subject's configuration on a GPU of compute capability `sm` (None for the
/// baseline, or a tuned configuration the current protocol no longer takes).
pub fn launch_of(subject: &Subject, spec: Option<&VariantSpec>, sm: u32) -> Option<crate::facts::launch::Launch> {
    let spec = spec?;
    match subject {
        Subject::Tuned { config, .. } => availability::configuration(spec, config, Some(sm)).ok(),
        _ => Some(spec.launch),
    }
}

/// Whether `entry` is what `subject` of `step` (of `family`) measures: the same family, shape,
/// inputs and subject (a tuned subject in the same configuration).
pub fn holds(entry: &Entry, family: &str, step: &Step, subject: &Subject) -> bool {
    if entry.family != family || entry.dims != step.dims || entry.seed != step.seed {
        return false;
    }
    match subject {
        Subject::Baseline => entry.kind == Kind::Baseline,
        Subject::VendorBest => entry.kind == Kind::VendorBest,
        Subject::Variant { name } => entry.kind == Kind::Variant && entry.variant == *name,
        Subject::Tuned { name, config, .. } => entry.kind == Kind::Tuned && entry.variant == *name && entry.config.as_ref() == Some(config),
    }
}

/// What a resumed bench still runs: `jobs` less the subjects whose entries `held` (the run file
/// being resumed) already has. A step that is all held goes, and a job with no step left. Where a
/// step is partly held, its baseline (and cuBLASLt's best, where a variant remains) is measured
/// again even if held: the subjects after it are timed in pairs with it, and a pair needs both
/// halves in one process.
pub fn resume(jobs: Vec<Job>, held: &[Entry]) -> Vec<Job> {
    jobs.into_iter()
        .filter_map(|mut job| {
            let family = job.family.clone();
            job.steps.retain_mut(|step| {
                let is_held: Vec<bool> = step.subjects.iter().map(|s| held.iter().any(|e| holds(e, &family, step, s))).collect();
                let open = |keep: &dyn Fn(&Subject) -> bool| step.subjects.iter().zip(&is_held).any(|(s, h)| !h && keep(s));
                let pairs_baseline = open(&|s| *s != Subject::Baseline);
                let pairs_vendor = open(&|s| matches!(s, Subject::Variant { .. } | Subject::Tuned { .. }));
                let mut i = 0;
                step.subjects.retain(|s| {
                    let keep = !is_held[i] || (*s == Subject::Baseline && pairs_baseline) || (*s == Subject::VendorBest && pairs_vendor);
                    i += 1;
                    keep
                });
                is_held.iter().any(|h| !h)
            });
            (!job.steps.is_empty()).then_some(job)
        })
        .collect()
}

/// The seed a bench resuming `run` runs with, where `run` can be resumed by a bench on `device`
/// timed with `policy`: a bench run of the same GPU model, cut short, whose seed and policy the
/// resumed part shares (`seed`, a `--seed` given, must be the run's own).
pub fn resumable(run: &Run, device: &DeviceInfo, seed: Option<u64>, policy: &Policy) -> Result<u64> {
    let path = run.path.display();
    let h = &run.header;
    let bad = |msg: String| Err(LabError::Usage(format!("--resume {path}: {msg}")));
    if h.run.kind != RunKind::Bench {
        return bad(format!("a {} run, not a bench", serde_json::to_string(&h.run.kind).unwrap_or_default().trim_matches('"')));
    }
    if run.complete {
        return bad("the run finished (it has its end record): nothing to resume".into());
    }
    if h.device.slug() != device.slug() {
        return bad(format!(
            "measured on {} ({}), and this GPU is {} ({})",
            h.device.name,
            h.device.arch_name(),
            device.name,
            device.arch_name()
        ));
    }
    let Some(own) = h.run.seed else { return bad("the run has no seed, so its inputs cannot be drawn again".into()) };
    if seed.is_some_and(|s| s != own) {
        return bad(format!("the run's seed is {own}; leave --seed out or give that one"));
    }
    if h.run.policy.as_ref() != Some(policy) {
        return bad("the run was timed another way (regime, --target or --quick differ): resume it with its own options".into());
    }
    Ok(own)
}
