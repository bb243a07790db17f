//! Runs a job in this process: per shape the case is prepared (inputs, the f64 reference), then
//! each subject is checked against the reference, timed, and checked again on what the timed
//! launches left. A subject that fails is recorded failed and never timed; one the GPU, its
//! configuration or the shape rules out is recorded skipped with the reason. Each entry goes to
//! the caller as soon as it is measured. `isolate` runs the same jobs in worker processes.

use std::collections::HashMap;

use crate::gpu::cuda::cublas::cublasStatus_t;

use super::families::{self, can_run, Case, Family, Shape};
use super::plan::{config_of, launch_of, spec_of, Job, Options, Plan, Subject};
use super::telemetry::Sampler;
use super::timing::{self, Samples, Timer};
use super::vendor;
use crate::error::{LabError, Result};
use crate::gpu::availability::VENDOR_DECLINED;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::jit;
use crate::gpu::lt::{Algo, Prepared};
use crate::gpu::registry::VariantSpec;
use crate::schema::check::Check;
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Entry, Kind, Status, Timing, Wall};
use crate::schema::run::Policy;
use crate::schema::stats::{Interval, Summary};

/// What a run reports as it goes.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Event {
    /// The inputs and reference of step `step` are being prepared.
    Preparing {
        step: usize,
    },
    /// Subject `subject` of step `step` starts (the hang limit runs from here).
    Start {
        step: usize,
        subject: usize,
    },
    Entry {
        step: usize,
        subject: usize,
        entry: Box<Entry>,
    },
}

/// Each entry's ratio to the baseline of the same family and shape, as entries arrive: the
/// paired ratio where the entry has one, else its rate over the baseline's.
#[derive(Default)]
pub struct Ratios(HashMap<(String, Vec<u64>), f64>);

impl Ratios {
    pub fn apply(&mut self, e: &mut Entry) {
        let key = (e.family.clone(), e.dims.clone());
        if let (true, Some(r)) = (e.is_baseline(), e.rate) {
            self.0.insert(key.clone(), r);
        }
        e.vs_baseline = match &e.paired {
            Some(p) => Some(p.ratio.value),
            None => e.rate.zip(self.0.get(&key).copied()).map(|(r, b)| r / b),
        };
    }
}

/// An entry for `subject` at `shape`, with what is known before anything runs; Skipped until
/// measured.
pub fn blank_entry(fam: &dyn Family, subject: &Subject, shape: &Shape, seed: u64, dev: &DeviceInfo) -> Result<Entry> {
    let spec = spec_of(subject)?;
    let launch = launch_of(subject, spec, dev.sm());
    let info = fam.info();
    let (variant, kind, tuned_at) = match subject {
        Subject::Baseline => (info.baseline.unwrap_or("baseline").to_string(), Kind::Baseline, None),
        Subject::VendorBest => (vendor::NAME.to_string(), Kind::VendorBest, None),
        Subject::Variant { name } => (name.clone(), Kind::Variant, None),
        Subject::Tuned { name, tuned_at, .. } => (name.clone(), Kind::Tuned, Some(tuned_at.clone())),
    };
    Ok(Entry {
        family: info.name().to_string(),
        variant,
        kind,
        rung: spec.map_or(0, |s| s.rung),
        config: config_of(subject, spec),
        tuned_at,
        shape: info.shapes.label(shape),
        dims: shape.0.clone(),
        status: Status::Skipped,
        reason: None,
        seed,
        verify: None,
        verify_after: None,
        time: None,
        work: fam.work(shape, launch.as_ref()),
        unit: info.unit,
        rate: None,
        vs_baseline: None,
        peak: fam.peak(dev, launch.as_ref()),
        vs_peak: None,
        source_hash: spec.map(|s| s.source_hash.clone()),
        telemetry: None,
        remeasured: false,
        compiled_here: None,
        timing: None,
        paired: None,
        paired_best: None,
        wall: None,
        vendor_algo: None,
    })
}

/// Runs `job` from `from` (step, subject) on. A fault that leaves the GPU's context unusable
/// ends the job with the driver's error, after the faulting subject's entry was reported.
pub fn run_job(gpu: &mut Gpu, job: &Job, from: (usize, usize), sink: &mut dyn FnMut(Event) -> Result<()>) -> Result<()> {
    let fam = families::get(&job.family).ok_or_else(|| LabError::Usage(format!("no family '{}'", job.family)))?;
    let mut timer = if job.time { Some(Timer::new(gpu)?) } else { None };
    for (si, step) in job.steps.iter().enumerate().skip(from.0) {
        let first = if si == from.0 { from.1 } else { 0 };
        if first >= step.subjects.len() {
            continue;
        }
        let shape = Shape(step.dims.clone());
        eprintln!("{} {}: seed {:#018x}", fam.info().name(), fam.info().shapes.label(&shape), step.seed);
        sink(Event::Preparing { step: si })?;
        let mut case = fam.prepare(gpu, &shape, step.seed)?;
        // Variants are timed in pairs with the baseline where it verified at this shape; a
        // worker that takes the step up after its baseline checks it again, quietly.
        let mut pair_with_baseline = first > 0 && step.subjects[0] == Subject::Baseline && baseline_verifies(gpu, fam, case.as_mut())?;
        // cuBLASLt's best, once measured at this step, for the variants after it to pair with
        // (a worker that takes the step up after it goes without).
        let mut vendor = None;
        for (ji, subject) in step.subjects.iter().enumerate().skip(first) {
            sink(Event::Start { step: si, subject: ji })?;
            let pair = pair_with_baseline && *subject != Subject::Baseline;
            let (entry, fault) =
                measure(gpu, fam, case.as_mut(), subject, &shape, step.seed, timer.as_mut(), &job.policy, pair, &mut vendor)?;
            if *subject == Subject::Baseline {
                pair_with_baseline = entry.status == Status::Ok;
            }
            if *subject == Subject::VendorBest && entry.status != Status::Ok {
                vendor = None;
            }
            sink(Event::Entry { step: si, subject: ji, entry: Box::new(entry) })?;
            if fault {
                // A sticky error (an illegal address) poisons the context: nothing after it runs.
                gpu.sync()?;
            }
        }
    }
    Ok(())
}

/// Runs `plans` in this process, entries in run order with their ratios to the baseline. A
/// fault ends the run (`isolate` is the way to survive one).
pub fn run(gpu: &mut Gpu, plans: &[Plan], opts: &Options, seed: u64) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let mut ratios = Ratios::default();
    for job in super::plan::jobs(plans, opts, seed) {
        run_job(gpu, &job, (0, 0), &mut |ev| {
            if let Event::Entry { mut entry, .. } = ev {
                ratios.apply(&mut entry);
                entries.push(*entry);
            }
            Ok(())
        })?;
    }
    Ok(entries)
}

/// Each family's conclusions from a run's entries, as "family: note" lines.
pub fn notes(plans: &[Plan], entries: &[Entry], dev: &DeviceInfo) -> Vec<String> {
    plans
        .iter()
        .flat_map(|p| {
            let name = p.family.info().name();
            let mine: Vec<&Entry> = entries.iter().filter(|e| e.family == name).collect();
            p.family.notes(&mine, dev).into_iter().map(move |n| format!("{name}: {n}"))
        })
        .chain(vendor::notes(entries))
        .collect()
}

/// Whether the baseline computes this case right (poison, one launch, the check); not where
/// the library declines the shape (its entry says so).
fn baseline_verifies(gpu: &Gpu, fam: &dyn Family, case: &mut dyn Case) -> Result<bool> {
    case.poison(gpu)?;
    match case.launch_baseline(gpu) {
        Err(err) if vendor_skip(&err).is_some() => return Ok(false),
        other => other?,
    }
    gpu.sync()?;
    Ok(case.check(gpu, fam.info().precision)?.passed())
}

/// Why the vendor's call is a skip, not a failure: the library declining the shape (cuBLAS's
/// NOT_SUPPORTED, as cuBLASLt's empty heuristic reports too), or not installed here (cuDNN).
fn vendor_skip(err: &LabError) -> Option<String> {
    match err {
        LabError::Cublas(e) if e.0 == cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED => Some(VENDOR_DECLINED.into()),
        LabError::Unavailable(why) => Some(why.clone()),
        _ => None,
    }
}

fn failed(mut e: Entry, reason: String) -> Entry {
    e.status = Status::Failed;
    e.reason = Some(reason);
    e
}

/// The kernel a subject runs, or the entry saying why it does not run here.
fn kernel_for(
    gpu: &mut Gpu,
    subject: &Subject,
    spec: &'static VariantSpec,
    shape: &Shape,
    e: &mut Entry,
) -> Option<Result<std::sync::Arc<Kernel>>> {
    let sm = gpu.info.sm();
    let config = e.config.clone().unwrap_or_else(|| spec.config());
    if let Err(why) = can_run(spec, &config, shape, sm) {
        e.reason = Some(why);
        return None;
    }
    if let Subject::Tuned { hash, date, .. } = subject {
        match jit::current(hash, spec, &config, sm) {
            Ok(true) => {}
            Ok(false) => {
                e.reason = Some(format!("stale tuning from {date} (source, headers or NVRTC changed): run kernel-lab tune again"));
                return None;
            }
            Err(err) => {
                e.reason = Some(format!("tuning from {date} not checked: {err}"));
                return None;
            }
        }
        return Some(gpu.jit(spec, &config));
    }
    Some(gpu.kernel(spec))
}

/// Verifies, times and verifies again one subject on a prepared case; `true` beside the entry
/// when it failed with a driver error (which may have cost the context). With `pair`, the
/// subject is timed in pairs with the family's baseline (which verified at this shape), and a
/// kernel also in pairs with `vendor`, cuBLASLt's best at this shape where it was measured; the
/// `VendorBest` subject leaves its algorithm there.
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
    pair: bool,
    vendor: &mut Option<(Prepared, Algo)>,
) -> Result<(Entry, bool)> {
    let mut e = blank_entry(fam, subject, shape, seed, &gpu.info)?;
    let kernel = match spec_of(subject)? {
        None => None,
        Some(spec) => match kernel_for(gpu, subject, spec, shape, &mut e) {
            None => return Ok((e, false)),
            Some(Err(err)) => return Ok((failed(e, format!("cannot load: {err}")), false)),
            Some(Ok(k)) => {
                e.compiled_here = k.compiled_here.clone();
                Some(k)
            }
        },
    };
    let gpu = &*gpu;
    let mut timer = timer;
    let is_fault = |err: &LabError| matches!(err, LabError::Driver(_));
    // The vendor's best: cuBLASLt's candidates searched first (its time counted as timing), the
    // winner measured as any subject.
    let search = std::time::Instant::now();
    if *subject == Subject::VendorBest {
        let Some(gemm) = case.vendor_gemm(gpu) else {
            e.reason = Some("the family does not describe its baseline as a GEMM".into());
            return Ok((e, false));
        };
        let lt = match Prepared::new(gpu, gemm) {
            Ok(lt) => lt,
            Err(err) => {
                e.reason = Some(vendor_skip(&err).unwrap_or_else(|| err.to_string()));
                return Ok((e, false));
            }
        };
        match vendor::search(gpu, fam, case, &lt, timer.as_deref_mut(), policy.warmup_s) {
            Ok(Some((algo, how))) => {
                e.vendor_algo = Some(how);
                *vendor = Some((lt, algo));
            }
            Ok(None) => return Ok((failed(e, "no cuBLASLt candidate passed the check".into()), false)),
            Err(err) => return Ok((failed(e, format!("launch failed: {err}")), is_fault(&err))),
        }
    }
    let code = match (kernel.as_deref(), vendor.as_ref()) {
        (Some(k), _) => Code::Kernel(k),
        (None, Some((lt, algo))) if *subject == Subject::VendorBest => Code::Algo(lt, algo),
        _ => Code::Vendor,
    };
    let precision = fam.info().precision;
    let mut wall = Wall { timing_s: search.elapsed().as_secs_f64(), ..Wall::default() };
    let clock = std::time::Instant::now();

    // Correct first: poisoned output, one launch, the check.
    let first = (|| -> Result<Check> {
        case.poison(gpu)?;
        launch(case, gpu, &code)?;
        gpu.sync()?;
        case.check(gpu, precision)
    })();
    wall.verify_s = clock.elapsed().as_secs_f64();
    e.wall = Some(wall); // a verify-only run and a failed check report their checking time too
    let first = match first {
        Ok(c) => c,
        Err(err) if matches!(code, Code::Vendor) && vendor_skip(&err).is_some() => {
            e.reason = vendor_skip(&err);
            return Ok((e, false));
        }
        Err(err) => return Ok((failed(e, format!("launch failed: {err}")), is_fault(&err))),
    };
    let (passed, detail) = (first.passed(), first.describe());
    e.verify = Some(first);
    if !passed {
        return Ok((failed(e, format!("verification failed: {detail}")), false));
    }
    e.status = Status::Ok;
    let Some(timer) = timer else { return Ok((e, false)) };

    // Timed with NVML watching: alone, or in pairs with the baseline.
    let clock = std::time::Instant::now();
    let sampler = Sampler::start(gpu.info.ordinal as u32);
    // Rates at any one time are in proportion to the declared work in the family's unit.
    let work_ratio = e.work.rate(e.unit, 1.0) / fam.work(shape, None).rate(e.unit, 1.0);
    let timed = if pair {
        timer.pairs(gpu, policy, &mut |subject| if subject { launch(case, gpu, &code) } else { case.launch_baseline(gpu) }, work_ratio).map(
            |p| {
                let ratio = p.paired();
                (Samples { ms: p.subject_ms, dropped: p.dropped, launches: p.launches }, ratio)
            },
        )
    } else {
        timer.samples(gpu, policy, &mut || launch(case, gpu, &code)).map(|s| (s, None))
    };
    let telemetry = sampler.and_then(Sampler::finish);
    let (samples, paired) = match timed {
        Ok(t) => t,
        Err(err) => return Ok((failed(e, format!("timed launches failed: {err}")), is_fault(&err))),
    };
    // A kernel against cuBLASLt's best itself, the two alternating in one state of the board:
    // its ratio to the best read as two ratios to the default call divides figures from
    // different points of a bench, over which a paired ratio drifts by up to 1%. After the
    // telemetry's window, which stays the subject's.
    if let (true, Code::Kernel(_), Some((lt, algo))) = (pair, &code, vendor.as_ref()) {
        match timer.pairs(gpu, policy, &mut |subject| if subject { launch(case, gpu, &code) } else { lt.launch(gpu, algo) }, work_ratio) {
            Ok(p) => e.paired_best = p.paired(),
            Err(err) => return Ok((failed(e, format!("timed launches beside cuBLASLt's best failed: {err}")), is_fault(&err))),
        }
    }
    wall.timing_s += clock.elapsed().as_secs_f64();
    e.telemetry = telemetry;
    let clock = std::time::Instant::now();
    let after = case.check(gpu, precision)?;
    wall.recheck_s = clock.elapsed().as_secs_f64();
    e.wall = Some(wall);
    let (passed, detail) = (after.passed(), after.describe());
    e.verify_after = Some(after);
    if !passed {
        return Ok((failed(e, format!("output of the timed launches failed verification: {detail}")), false));
    }
    let summary = Summary::of(&samples.ms);
    e.rate = summary.map(|s| e.work.rate(e.unit, s.median_ms));
    e.vs_peak = e.rate.zip(e.peak).map(|(r, p)| r / p);
    e.time = summary;
    e.timing = Interval::of_median(&samples.ms).map(|median| Timing {
        regime: policy.regime,
        flush: Some(timing::flush(policy.regime)),
        dropped: samples.dropped,
        median,
        launches: samples.launches,
    });
    e.paired = paired;
    Ok((e, false))
}

/// What a subject runs: the vendor's default call, a kernel, or a cuBLASLt algorithm.
enum Code<'a> {
    Vendor,
    Kernel(&'a Kernel),
    Algo(&'a Prepared, &'a Algo),
}

fn launch(case: &mut dyn Case, gpu: &Gpu, code: &Code) -> Result<()> {
    match code {
        Code::Vendor => case.launch_baseline(gpu),
        Code::Kernel(k) => case.launch(gpu, k),
        Code::Algo(lt, algo) => lt.launch(gpu, algo),
    }
}
