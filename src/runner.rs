//! Runs families on a GPU: for every shape, the baseline and each variant are checked against
//! the reference, then timed, then checked again on what the timed launches left. A variant
//! that fails is recorded as failed and never timed; one the GPU or shape cannot take is
//! recorded as skipped with the reason.

use indicatif::{ProgressBar, ProgressStyle};

use crate::device::{Gpu, Kernel};
use crate::error::{LabError, Result};
use crate::families::{self, Case, Family, Shape};
use crate::registry::{self, VariantSpec};
use crate::stats::Summary;
use crate::store::{Entry, Status};
use crate::timing::{Policy, Timer};
use crate::verify::Check;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub filter: Option<String>,
    pub sizes: Vec<String>,
    pub quick: bool,
    /// Time as well as verify.
    pub time: bool,
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
        let family = families::get(name).ok_or_else(|| {
            LabError::Usage(format!("csrc/{name} has a manifest but the lab has no family '{name}' in src/families"))
        })?;
        let shapes = if opts.sizes.is_empty() {
            family.default_sizes(opts.quick)
        } else {
            families::parse_sizes(family, &opts.sizes)?
        };
        plans.push(Plan { family, variants, shapes });
    }
    Ok(plans)
}

/// What is measured for one entry.
enum Subject {
    Baseline,
    Variant(&'static VariantSpec),
}

/// Runs the plans; `seed` is the run's seed (each family and shape derives its own from it).
pub fn run(gpu: &mut Gpu, plans: &[Plan], opts: &Options, seed: u64) -> Result<Vec<Entry>> {
    let total: usize = plans.iter().map(|p| p.shapes.len() * (p.variants.len() + 1)).sum();
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
            let mut subjects = vec![Subject::Baseline];
            subjects.extend(plan.variants.iter().map(|v| Subject::Variant(v)));
            let mut baseline_rate = None;
            for subject in subjects {
                let name = match &subject {
                    Subject::Baseline => fam.baseline(),
                    Subject::Variant(v) => v.name,
                };
                bar.set_message(format!("{} {name}", fam.label(shape)));
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

#[allow(clippy::too_many_arguments)]
fn measure(
    gpu: &mut Gpu,
    fam: &dyn Family,
    case: &mut dyn Case,
    subject: &Subject,
    shape: &Shape,
    seed: u64,
    timer: Option<&mut Timer>,
    policy: &Policy,
) -> Result<Entry> {
    let work = fam.work(shape);
    let peak = fam.peak(&gpu.info);
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
    };
    let kernel = match *subject {
        Subject::Baseline => {
            e.variant = fam.baseline().to_string();
            e.baseline = true;
            e.config = "vendor library".to_string();
            None
        }
        Subject::Variant(v) => {
            e.variant = v.name.to_string();
            e.rung = v.rung;
            e.config = v.config();
            e.source_hash = Some(v.source_hash.to_string());
            if let Err(why) = v.runnable_on(gpu.info.sm()).and_then(|_| fam.can_implement(v, shape)) {
                e.reason = Some(why);
                return Ok(e);
            }
            match gpu.kernel(v) {
                Ok(k) => Some(k),
                Err(err) => return Ok(failed(e, format!("cannot load: {err}"))),
            }
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
        Err(err) => return Ok(failed(e, format!("launch failed: {err}"))),
    };
    let (passed, detail) = (first.passed(), first.describe());
    e.verify = Some(first);
    if !passed {
        return Ok(failed(e, format!("verification failed: {detail}")));
    }
    e.status = Status::Ok;
    let Some(timer) = timer else { return Ok(e) };

    let samples = match timer.samples(gpu, policy, &mut || launch(case, gpu, k)) {
        Ok(s) => s,
        Err(err) => return Ok(failed(e, format!("timed launches failed: {err}"))),
    };
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
