//! A `verify` or `bench` command from its arguments to its entries and stored run: the options
//! checked before any GPU work, the plan, each family's job run in a worker process (or here),
//! each entry recorded as it arrives, a bench cut short taken up from its run file, the run's
//! notes, and a named baseline saved. The CLI parses and prints; this decides.

use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};

use crate::baselines;
use crate::error::{LabError, Result};
use crate::gpu::device::{self, Gpu};
use crate::measure::families::inputs;
use crate::measure::isolate::Isolation;
use crate::measure::phases::Phases;
use crate::measure::plan::{self, Job, Options, Plan};
use crate::measure::resume::Appender;
use crate::measure::runner::{self, Event, Ratios};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::Entry;
use crate::schema::run::{Record, Regime, RunInfo, RunKind};
use crate::store::{self, Group, Recorder, View};

/// What the user asked `verify` or `bench` for, as given.
pub struct Request {
    /// A family, a variant, or part of variant names; several, comma-separated.
    pub filter: Option<String>,
    /// Shapes in each family's syntax, with lists and START:END:STEP ranges.
    pub sizes: Vec<String>,
    pub suites: Vec<String>,
    pub quick: bool,
    pub seed: Option<u64>,
    pub gpu: usize,
    /// Seconds one subject may run before it is stopped and recorded as hung.
    pub hang_limit: Option<f64>,
    /// Every job in this process, without workers.
    pub in_process: bool,
}

/// How a bench is timed, as given.
pub struct Timing {
    pub regime: Regime,
    /// Percent: stop sampling once the 95% interval is within it.
    pub target: Option<f64>,
    /// The run file of a bench cut short, to go on with.
    pub resume: Option<PathBuf>,
}

/// The device `ordinal`, from the driver, without keeping a context on it.
fn device_info(ordinal: usize) -> Result<DeviceInfo> {
    let all = device::list()?;
    let n = all.len();
    all.into_iter().nth(ordinal).ok_or_else(|| LabError::Usage(format!("GPU {ordinal} does not exist (the driver sees {n})")))
}

impl Request {
    fn options(&self, time: bool, fuzz: Option<usize>) -> Result<Options> {
        if let Some(s) = self.hang_limit.filter(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(LabError::Usage(format!("--hang-limit must be a positive number of seconds, not {s}")));
        }
        if fuzz == Some(0) {
            return Err(LabError::Usage("--fuzz must be at least 1".into()));
        }
        Ok(Options {
            filter: self.filter.clone(),
            sizes: crate::measure::families::shapes::expand(&self.sizes).map_err(LabError::Usage)?,
            suites: self.suites.clone(),
            quick: self.quick,
            fuzz,
            time,
            tuned: Vec::new(),
            regime: Regime::Sustained,
            target: None,
        })
    }

    /// Runs `jobs` in workers (or here), giving each entry, with its ratio to the baseline, to
    /// `each` as it arrives, under a progress bar; where the time went.
    fn execute(&self, jobs: &[Job], dev: &DeviceInfo, each: &mut dyn FnMut(Entry) -> Result<()>) -> Result<Phases> {
        let total: usize = jobs.iter().flat_map(|j| &j.steps).map(|s| s.subjects.len()).sum();
        let bar = ProgressBar::new(total as u64);
        bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}").expect("a valid template"));
        let mut ratios = Ratios::default();
        let mut sink = |mut e: Entry| {
            ratios.apply(&mut e);
            bar.set_message(format!("{} {}", e.shape, e.label()));
            bar.inc(1);
            bar.suspend(|| each(e))
        };
        let mut phases = Phases::default();
        let result = if self.in_process {
            phases.spawned();
            let mut gpu = Gpu::open(self.gpu)?;
            phases.started();
            jobs.iter().try_for_each(|job| {
                runner::run_job(&mut gpu, job, (0, 0), &mut |ev| {
                    phases.on(&ev);
                    match ev {
                        Event::Entry { entry, .. } => sink(*entry),
                        _ => Ok(()),
                    }
                })
            })
        } else {
            let exe = std::env::current_exe().map_err(|e| LabError::Unavailable(format!("cannot find this program: {e}")))?;
            let iso = Isolation { exe: &exe, gpu: self.gpu, hang_limit: self.hang_limit, device: dev };
            iso.run(jobs, &mut sink, &mut |line| bar.suspend(|| eprintln!("{line}")), &mut phases)
        };
        bar.finish_and_clear();
        result.map(|()| phases)
    }
}

/// A verify run: what it planned and checked, on which device, and where the time went.
pub struct Verified {
    pub dev: DeviceInfo,
    pub plans: Vec<Plan>,
    pub entries: Vec<Entry>,
    pub phases: Vec<(String, f64)>,
}

/// Checks every subject `req` plans (or `fuzz` random shapes a family) against its reference,
/// without timing; `say` gets the line a person reads before the run.
pub fn verify(req: &Request, fuzz: Option<usize>, say: &mut dyn FnMut(String)) -> Result<Verified> {
    let opts = req.options(false, fuzz)?;
    let seed = req.seed.unwrap_or_else(inputs::clock_seed);
    let plans = plan::plan(&opts, seed)?;
    let dev = device_info(req.gpu)?;
    let what = if fuzz.is_some() { "fuzzing" } else { "verifying" };
    say(format!("{what} on {} ({}), run seed {seed} (replay with --seed {seed})", dev.name, dev.arch_name()));
    let mut entries = Vec::new();
    let phases = req.execute(&plan::jobs(&plans, &opts, seed), &dev, &mut |e| {
        entries.push(e);
        Ok(())
    })?;
    Ok(Verified { dev, plans, entries, phases: phases.list() })
}

/// A bench run: its entries (a resumed run's held ones included), the notes recorded with them,
/// the stored view it was compared with, its run file and the baseline saved from it.
pub struct Benched {
    pub dev: DeviceInfo,
    pub run: RunInfo,
    pub entries: Vec<Entry>,
    pub notes: Vec<String>,
    /// This GPU model's stored results before the run (the resumed run itself left out).
    pub before: Option<View>,
    pub path: Option<PathBuf>,
    /// The baseline saved from the run, where one was named and something was measured.
    pub saved: Option<PathBuf>,
    pub phases: Vec<(String, f64)>,
}

/// Verifies, then times every subject `req` plans, storing the run under `dir` record by record
/// (or appending to the run `timing.resume` names); `say` gets the lines a person reads before
/// and during the run. What was measured is on disk whatever happens; an error still ends the
/// run with it.
pub fn bench(req: &Request, timing: &Timing, dir: &Path, save_baseline: Option<&str>, say: &mut dyn FnMut(String)) -> Result<Benched> {
    if let Some(name) = save_baseline {
        // A bad name is refused before the run, not after it.
        baselines::check_name(name)?;
    }
    let mut opts = req.options(true, None)?;
    opts.regime = timing.regime;
    if let Some(t) = timing.target {
        if !(t.is_finite() && t > 0.0 && t < 100.0) {
            return Err(LabError::Usage(format!("--target must be a percentage between 0 and 100, not {t}")));
        }
        opts.target = Some(t / 100.0);
    }
    // A resumed bench draws its inputs from the run's seed, and skips what the run holds.
    let resumed = timing.resume.as_deref().map(store::read_run).transpose()?;
    let seed = resumed.as_ref().and_then(|r| r.header.run.seed).or(req.seed).unwrap_or_else(inputs::clock_seed);
    let plans = plan::plan(&opts, seed)?;
    let dev = device_info(req.gpu)?;
    if let Some(r) = &resumed {
        plan::resumable(r, &dev, req.seed, &opts.policy())?;
    }
    let mut stored = store::runs_of_model(dir, &dev)?;
    stored.retain(|r| resumed.as_ref().is_none_or(|x| x.header.run.id != r.header.run.id));
    let before = store::views(&stored, Group::Model).pop();
    opts.tuned = before.as_ref().map(|v| v.tuning.clone()).unwrap_or_default();
    let policy = opts.policy();
    say(format!(
        "benchmarking on {} ({}), run seed {seed} (replay with --seed {seed}), {} regime, to ±{}%",
        dev.name,
        dev.arch_name(),
        policy.regime.label(),
        100.0 * policy.target
    ));
    let header = store::new_header(RunKind::Bench, &dev, Some(seed), Some(policy), req.hang_limit);
    let (run, mut output, mut entries, jobs) = match &resumed {
        None => (header.run.clone(), Output::New(Box::new(Recorder::new(dir, header))), Vec::new(), plan::jobs(&plans, &opts, seed)),
        Some(r) => {
            let held: Vec<Entry> = r.entries().cloned().collect();
            let jobs = plan::resume(plan::jobs(&plans, &opts, seed), &held);
            let left: usize = jobs.iter().flat_map(|j| &j.steps).map(|s| s.subjects.len()).sum();
            say(format!("resuming {}: {} entries held, {left} subjects to run", r.path.display(), held.len()));
            (r.header.run.clone(), Output::Resumed(Appender::open(&r.path)?), held, jobs)
        }
    };
    let measured = req.execute(&jobs, &dev, &mut |e| {
        output.append(Record::Entry(Box::new(e.clone())))?;
        // A baseline measured again for pairing replaces the one the resumed run held.
        entries.retain(|x| x.key() != e.key());
        entries.push(e);
        Ok(())
    });
    let phases = measured?;
    // The notes are recorded before anything is printed: a reader that closes stdout early
    // (`bench | head`) ends the printing, not the run's record.
    let notes = runner::notes(&plans, &entries, &dev);
    for n in &notes {
        output.append(Record::Note { text: n.clone() })?;
    }
    let phases = phases.list();
    let path = output.finish(phases.clone())?;
    let saved = match (save_baseline, &path) {
        (Some(name), Some(p)) => Some(baselines::save(p, name)?),
        _ => None,
    };
    Ok(Benched { dev, run, entries, notes, before, path, saved, phases })
}

/// Where a bench's records go: a new run file, or the one `--resume` goes on with.
enum Output {
    New(Box<Recorder>),
    Resumed(Appender),
}

impl Output {
    fn append(&mut self, record: Record) -> Result<()> {
        match self {
            Output::New(r) => r.append(record),
            Output::Resumed(a) => a.append(&record),
        }
    }

    fn finish(self, phases: Vec<(String, f64)>) -> Result<Option<PathBuf>> {
        match self {
            Output::New(r) => (*r).finish(phases),
            Output::Resumed(a) => a.finish(phases).map(Some),
        }
    }
}
