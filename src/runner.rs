//! Runs families on a GPU: for every shape, the baseline and each variant are checked against
//! the reference, then timed, then checked again on what the timed launches left. A variant
//! that fails is recorded as failed and never timed; one the GPU or shape cannot take is
//! recorded as skipped with the reason.

use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};

use cudarc::cublas::sys::cublasStatus_t;

use crate::device::{Gpu, Kernel};
use crate::error::{LabError, Result};
use crate::families::{self, Case, Family, Shape};
use crate::jit;
use crate::registry::{self, VariantSpec};
use crate::stats::Summary;
use crate::store::{Entry, Status, TuneRecord};
use crate::telemetry::{Sampler, Telemetry};
use crate::timing::{Policy, Timer};
use crate::verify::Check;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub filter: Option<String>,
    pub sizes: Vec<String>,
    /// Named shape sets of the families (`--suite bert`); families without one are left out.
    pub suites: Vec<String>,
    pub quick: bool,
    /// Time as well as verify.
    pub time: bool,
    /// Stored tuning results for this device: each variant with one is also run in its tuned
    /// configuration, compiled with NVRTC, while the record's hash still matches.
    pub tuned: Vec<TuneRecord>,
}

impl Options {
    pub fn policy(&self) -> Policy {
        if self.quick {
            Policy::quick()
        } else {
            Policy::full()
        }
    }
}

/// One family's part of a run, with its shapes parsed before any GPU work.
pub struct Plan {
    pub family: &'static dyn Family,
    pub variants: Vec<&'static VariantSpec>,
    pub shapes: Vec<Shape>,
}

/// Resolves the filter and sizes; bad input is an error here, before a GPU is touched.
pub fn plan(opts: &Options) -> Result<Vec<Plan>> {
    let selected = registry::select(opts.filter.as_deref())?;
    let mut plans = Vec::new();
    for name in registry::families() {
        let variants: Vec<&'static VariantSpec> = selected.iter().copied().filter(|v| v.family == name).collect();
        if variants.is_empty() {
            continue;
        }
        let family = families::get(name)
            .ok_or_else(|| LabError::Usage(format!("csrc/{name} has a manifest but the lab has no family '{name}' in src/families")))?;
        let mut shapes = families::parse_sizes(family, &opts.sizes)?;
        let suites = family.suites();
        for name in &opts.suites {
            if let Some((_, _, s)) = suites.iter().find(|(n, _, _)| n == name) {
                shapes.extend(s.iter().filter(|x| !shapes.contains(x)).cloned().collect::<Vec<_>>());
            }
        }
        if opts.sizes.is_empty() && opts.suites.is_empty() {
            shapes = family.default_sizes(opts.quick);
        }
        if !shapes.is_empty() {
            plans.push(Plan { family, variants, shapes });
        }
    }
    for name in &opts.suites {
        if !plans.iter().any(|p| p.family.suites().iter().any(|(n, _, _)| n == name)) {
            let known: Vec<String> =
                families::all().iter().flat_map(|f| f.suites().into_iter().map(move |(n, _, _)| format!("{} {n}", f.name()))).collect();
            return Err(LabError::Usage(format!("no selected family has a suite '{name}' (suites: {})", known.join(", "))));
        }
    }
    Ok(plans)
}

/// Each family's conclusions from a run's entries, as "family: note" lines.
pub fn notes(plans: &[Plan], entries: &[Entry], dev: &crate::device::DeviceInfo) -> Vec<String> {
    plans
        .iter()
        .flat_map(|p| {
            let mine: Vec<&Entry> = entries.iter().filter(|e| e.family == p.family.name()).collect();
            p.family.notes(&mine, dev).into_iter().map(move |n| format!("{}: {n}", p.family.name()))
        })
        .collect()
}

/// What is measured for one entry.
pub enum Subject {
    Baseline,
    /// A variant as built into the binary.
    Variant(&'static VariantSpec),
    /// A variant compiled at run time in another configuration.
    Compiled {
        kernel: Arc<Kernel>,
        name: String,
        note: String,
        hash: String,
    },
    /// A compiled configuration that could not be had here, and why.
    Unavailable {
        spec: &'static VariantSpec,
        name: String,
        reason: String,
    },
}

impl Subject {
    fn name(&self, fam: &dyn Family) -> String {
        match self {
            Subject::Baseline => fam.baseline().unwrap_or("baseline").to_string(),
            Subject::Variant(v) => v.name.to_string(),
            Subject::Compiled { name, .. } | Subject::Unavailable { name, .. } => name.clone(),
        }
    }
}

/// The stored tuning of `v` for `shape`: the record of that shape, else the one whose shape is
/// closest in work.
fn tuning_for<'a>(tuned: &'a [TuneRecord], fam: &dyn Family, v: &VariantSpec, shape: &Shape) -> Option<&'a TuneRecord> {
    let flops = |dims: &[u64]| {
        let w = fam.work(&Shape(dims.to_vec()), None);
        (w.flops + w.bytes_read + w.bytes_written).max(1.0).ln()
    };
    tuned.iter().filter(|t| t.family == v.family && t.variant == v.name && t.best.is_some()).min_by(|a, b| {
        let d = |t: &TuneRecord| if t.dims == shape.0 { -1.0 } else { (flops(&t.dims) - flops(&shape.0)).abs() };
        d(a).total_cmp(&d(b))
    })
}

/// The tuned configuration of `rec` compiled for this GPU, if its hash still matches.
fn tuned_subject(gpu: &mut Gpu, v: &'static VariantSpec, rec: &TuneRecord) -> Subject {
    let name = format!("{}@tuned", v.name);
    let best = rec.best.clone().expect("tuning_for picks records with a best");
    let unavailable = |reason: String| Subject::Unavailable { spec: v, name: name.clone(), reason };
    let hash = match jit::hash(v, &best, gpu.info.sm()) {
        Ok(h) => h,
        Err(e) => return unavailable(e.to_string()),
    };
    if Some(&hash) != rec.best_hash.as_ref() {
        return unavailable(format!("stale tuning from {} (source, headers or NVRTC changed): run kernel-lab tune again", rec.date));
    }
    match gpu.jit(v, &best) {
        Ok(kernel) => Subject::Compiled { kernel, name, note: format!("tuned at {}", rec.shape), hash },
        Err(e) => unavailable(format!("cannot compile the tuned configuration: {e}")),
    }
}

/// Runs the plans; `seed` is the run's seed (each family and shape derives its own from it).
pub fn run(gpu: &mut Gpu, plans: &[Plan], opts: &Options, seed: u64) -> Result<Vec<Entry>> {
    let tuned = |p: &Plan| p.variants.iter().filter(|v| opts.tuned.iter().any(|t| t.variant == v.name)).count();
    let total: usize =
        plans.iter().map(|p| p.shapes.len() * (p.variants.len() + usize::from(p.family.baseline().is_some()) + tuned(p))).sum();
    let bar = ProgressBar::new(total as u64);
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}").unwrap());
    let policy = opts.policy();
    let mut timer = if opts.time { Some(Timer::new(gpu)?) } else { None };
    let mut entries = Vec::new();
    for plan in plans {
        let fam = plan.family;
        for shape in &plan.shapes {
            let shape_seed = families::seed_for(seed, fam.name(), shape);
            bar.suspend(|| eprintln!("{} {}: seed {shape_seed:#018x}", fam.name(), fam.label(shape)));
            let mut case = fam.prepare(gpu, shape, shape_seed)?;
            let mut subjects = if fam.baseline().is_some() { vec![Subject::Baseline] } else { Vec::new() };
            for &v in &plan.variants {
                subjects.push(Subject::Variant(v));
                if let Some(rec) = tuning_for(&opts.tuned, fam, v, shape) {
                    subjects.push(tuned_subject(gpu, v, rec));
                }
            }
            let mut baseline_rate = None;
            for subject in subjects {
                bar.set_message(format!("{} {}", fam.label(shape), subject.name(fam)));
                let mut e = measure(gpu, fam, case.as_mut(), &subject, shape, shape_seed, timer.as_mut(), &policy)?;
                if e.baseline {
                    baseline_rate = e.rate;
                }
                e.vs_baseline = e.rate.zip(baseline_rate).map(|(r, b)| r / b);
                entries.push(e);
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    Ok(entries)
}

/// Verifies, times and verifies again one subject on a prepared case.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    gpu: &mut Gpu,
    fam: &dyn Family,
    case: &mut dyn Case,
    subject: &Subject,
    shape: &Shape,
    seed: u64,
    timer: Option<&mut Timer>,
    policy: &Policy,
) -> Result<Entry> {
    let config = match subject {
        Subject::Baseline => None,
        Subject::Variant(v) | Subject::Unavailable { spec: v, .. } => Some(v.config()),
        Subject::Compiled { kernel, .. } => Some(kernel.config.clone()),
    };
    let work = fam.work(shape, config.as_ref());
    let peak = fam.peak(&gpu.info, config.as_ref());
    let mut e = Entry {
        run: 0,
        family: fam.name().to_string(),
        variant: String::new(),
        baseline: false,
        rung: 0,
        config: String::new(),
        shape: fam.label(shape),
        dims: shape.0.clone(),
        status: Status::Skipped,
        reason: None,
        seed,
        verify: None,
        verify_after: None,
        time: None,
        work,
        unit: fam.unit(),
        rate: None,
        vs_baseline: None,
        peak,
        vs_peak: None,
        source_hash: None,
        telemetry: None,
        remeasured: false,
        compiled_here: None,
    };
    let kernel = match subject {
        Subject::Baseline => {
            e.variant = fam.baseline().unwrap_or("baseline").to_string();
            e.baseline = true;
            e.config = "vendor library".to_string();
            None
        }
        Subject::Variant(v) => {
            e.variant = v.name.to_string();
            e.rung = v.rung;
            e.config = v.config().label();
            e.source_hash = Some(v.source_hash.to_string());
            let sm = gpu.info.sm();
            let on_this_gpu = if v.admits(sm) { Ok(()) } else { v.runnable_on(sm) };
            if let Err(why) = on_this_gpu.and_then(|_| fam.can_implement(v, &v.config(), shape)) {
                e.reason = Some(why);
                return Ok(e);
            }
            match gpu.kernel(v) {
                Ok(k) => {
                    e.compiled_here = k.compiled_here.clone();
                    Some(k)
                }
                Err(err) => return Ok(failed(e, format!("cannot load: {err}"))),
            }
        }
        Subject::Compiled { kernel, name, note, hash } => {
            e.variant = name.clone();
            e.rung = kernel.spec.rung;
            e.config = format!("{} ({note})", kernel.config.label());
            e.source_hash = Some(hash.clone());
            if let Err(why) = fam.can_implement(kernel.spec, &kernel.config, shape) {
                e.reason = Some(why);
                return Ok(e);
            }
            Some(kernel.clone())
        }
        Subject::Unavailable { spec, name, reason } => {
            e.variant = name.clone();
            e.rung = spec.rung;
            e.reason = Some(reason.clone());
            return Ok(e);
        }
    };
    let gpu = &*gpu;
    let k = kernel.as_deref();
    let precision = fam.precision();

    // Correct first: poisoned output, one launch, the check.
    let first = (|| -> Result<Check> {
        case.poison(gpu)?;
        launch(case, gpu, k)?;
        gpu.sync()?;
        case.check(gpu, precision)
    })();
    let first = match first {
        Ok(c) => c,
        // The vendor library declining a shape is its declared limit, not a failure.
        Err(LabError::Cublas(err)) if k.is_none() && err.0 == cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED => {
            e.reason = Some("cuBLAS does not support this shape (CUBLAS_STATUS_NOT_SUPPORTED)".into());
            return Ok(e);
        }
        Err(err) => return Ok(failed(e, format!("launch failed: {err}"))),
    };
    let (passed, detail) = (first.passed(), first.describe());
    e.verify = Some(first);
    if !passed {
        return Ok(failed(e, format!("verification failed: {detail}")));
    }
    e.status = Status::Ok;
    let Some(timer) = timer else { return Ok(e) };

    // Timed with NVML watching; a run that throttled is timed once more, and flagged if it
    // throttles again.
    let mut timed = |timer: &mut Timer| -> Result<(Vec<f64>, Option<Telemetry>)> {
        let sampler = Sampler::start(gpu.info.ordinal as u32);
        let samples = timer.samples(gpu, policy, &mut || launch(case, gpu, k))?;
        Ok((samples, sampler.and_then(Sampler::finish)))
    };
    let (mut samples, mut telemetry) = match timed(timer) {
        Ok(s) => s,
        Err(err) => return Ok(failed(e, format!("timed launches failed: {err}"))),
    };
    if telemetry.as_ref().is_some_and(Telemetry::throttled) {
        (samples, telemetry) = match timed(timer) {
            Ok(s) => s,
            Err(err) => return Ok(failed(e, format!("timed launches failed: {err}"))),
        };
        e.remeasured = true;
    }
    e.telemetry = telemetry;
    let after = case.check(gpu, precision)?;
    let (passed, detail) = (after.passed(), after.describe());
    e.verify_after = Some(after);
    if !passed {
        return Ok(failed(e, format!("output of the timed launches failed verification: {detail}")));
    }
    let summary = Summary::of(&samples);
    e.rate = summary.map(|s| work.rate(fam.unit(), s.median_ms));
    e.vs_peak = e.rate.zip(peak).map(|(r, p)| r / p);
    e.time = summary;
    Ok(e)
}

fn launch(case: &mut dyn Case, gpu: &Gpu, kernel: Option<&Kernel>) -> Result<()> {
    match kernel {
        Some(k) => case.launch(gpu, k),
        None => case.launch_baseline(gpu),
    }
}

fn failed(mut e: Entry, reason: String) -> Entry {
    e.status = Status::Failed;
    e.reason = Some(reason);
    e
}
