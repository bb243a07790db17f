//! `verify` and `bench`: plan, run each family's job in a worker process (or here, with
//! `--in-process`), record each entry as it arrives, print the tables.

use std::path::Path;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use kernel_lab::analysis::report::data as report_data;
use kernel_lab::analysis::report::run::{bench_tables, verify_table};
use kernel_lab::analysis::baselines;
use kernel_lab::analysis::store::{self, Group, Recorder};
use kernel_lab::error::exit;
use kernel_lab::gpu::device::{self, Gpu};
use kernel_lab::measure::families::inputs;
use kernel_lab::measure::isolate::Isolation;
use kernel_lab::measure::phases::Phases;
use kernel_lab::measure::plan::{self, Job, Options};
use kernel_lab::measure::resume::Appender;
use kernel_lab::measure::runner::{self, Event, Ratios};
use kernel_lab::schema::check::Check;
use kernel_lab::schema::device::DeviceInfo;
use kernel_lab::schema::entry::{Entry, Status};
use kernel_lab::schema::run::{Record, Regime, RunKind};
use kernel_lab::LabError;

use crate::args::{say, Format};

#[derive(clap::Args)]
pub struct RunArgs {
    /// A family, a variant (its whole name picks it alone), or part of variant names; several,
    /// comma-separated, for their union.
    filter: Option<String>,
    /// Problem sizes, the family's syntax (sgemm: N or MxNxK; memory: bytes, with K/M/G), a
    /// list, and START:END:STEP ranges in any dimension (1024:4096:1024 is 1024,2048,3072,4096).
    #[arg(long = "size", value_delimiter = ',')]
    sizes: Vec<String>,
    /// Named shape sets (sgemm: square, odd, bert, resnet); only families that have one run.
    #[arg(long = "suite", value_delimiter = ',')]
    suites: Vec<String>,
    /// Fewer sizes and samples.
    #[arg(long)]
    quick: bool,
    /// Seed of the run's random inputs (default: drawn from the clock, and printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Which GPU, its index as `kernel-lab devices` numbers them (one: a run drives one GPU).
    #[arg(long = "gpus", value_name = "INDEX", default_value = "0", value_parser = crate::args::one_gpu)]
    gpu: usize,
    /// Seconds one variant at one shape may run before it is stopped and recorded as hung
    /// (default: each variant's own limit, from its work; see the README).
    #[arg(long)]
    hang_limit: Option<f64>,
    /// Run every variant in this process: no isolation, so a fault or hang stops the run (for
    /// compute-sanitizer and debuggers).
    #[arg(long)]
    in_process: bool,
}

/// The device `ordinal`, from the driver, without keeping a context on it.
fn device_info(ordinal: usize) -> Result<DeviceInfo, LabError> {
    let all = device::list()?;
    let n = all.len();
    all.into_iter().nth(ordinal).ok_or_else(|| LabError::Usage(format!("GPU {ordinal} does not exist (the driver sees {n})")))
}

impl RunArgs {
    fn options(&self, time: bool, fuzz: Option<usize>) -> Result<Options> {
        if let Some(s) = self.hang_limit.filter(|s| !(s.is_finite() && *s > 0.0)) {
            anyhow::bail!(LabError::Usage(format!("--hang-limit must be a positive number of seconds, not {s}")));
        }
        if fuzz == Some(0) {
            anyhow::bail!(LabError::Usage("--fuzz must be at least 1".into()));
        }
        Ok(Options {
            filter: self.filter.clone(),
            sizes: crate::args::sizes(&self.sizes)?,
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
    fn execute(&self, jobs: &[Job], dev: &DeviceInfo, each: &mut dyn FnMut(Entry) -> Result<(), LabError>) -> Result<Phases, LabError> {
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

/// Exit status: 0 when nothing failed (skips are not failures), 1 otherwise.
fn summarise(entries: &[Entry], format: Format) -> Result<u8> {
    let count = |s: Status| entries.iter().filter(|e| e.status == s).count();
    let (ok, failed, skipped) = (count(Status::Ok), count(Status::Failed), count(Status::Skipped));
    say(format, &format!("{ok} passed, {failed} failed, {skipped} skipped"))?;
    Ok(if failed > 0 { exit::FAILED } else { exit::OK })
}

/// Entries as tidy rows (`report`'s columns), measured on `dev` in the run `header` describes.
fn data(entries: &[Entry], dev: &DeviceInfo, run: Option<&kernel_lab::schema::run::RunInfo>, dir: &str, format: Format) -> String {
    let rows: Vec<_> = entries.iter().map(|e| report_data::row(dir, run, dev, &dev.card(), e)).collect();
    match format {
        Format::Csv => report_data::to_csv(&report_data::COLUMNS, &rows),
        _ => report_data::to_json(&rows),
    }
}

pub fn verify(args: &RunArgs, fuzz: Option<usize>, format: Format) -> Result<u8> {
    let opts = args.options(false, fuzz)?;
    let seed = args.seed.unwrap_or_else(inputs::clock_seed);
    let plans = plan::plan(&opts, seed)?;
    let dev = device_info(args.gpu)?;
    let what = if fuzz.is_some() { "fuzzing" } else { "verifying" };
    eprintln!("{what} on {} ({}), run seed {seed} (replay with --seed {seed})", dev.name, dev.arch_name());
    let mut entries = Vec::new();
    let phases = args.execute(&plan::jobs(&plans, &opts, seed), &dev, &mut |e| {
        entries.push(e);
        Ok(())
    })?;
    // A fuzzed run has thousands of checks: the table shows those that did not pass.
    let shown: Vec<Entry> =
        if fuzz.is_some() { entries.iter().filter(|e| e.status == Status::Failed).cloned().collect() } else { entries.clone() };
    if format.data() {
        out!("{}", data(&shown, &dev, None, "", format));
    } else if !shown.is_empty() {
        outln!("{}", verify_table(&shown));
    }
    if fuzz.is_some() {
        for p in &plans {
            let name = p.family.info().name();
            let mine: Vec<&Entry> = entries.iter().filter(|e| e.family == name).collect();
            let n = |s: Status| mine.iter().filter(|e| e.status == s).count();
            let line = format!(
                "{name}: {} shapes, {} passed, {} failed, {} skipped",
                p.shapes.len(),
                n(Status::Ok),
                n(Status::Failed),
                n(Status::Skipped)
            );
            say(format, &line)?;
        }
    }
    say_checks(&entries, &phases.list(), format)?;
    summarise(&entries, format)
}

/// How many elements the checks compared, and where the run's wall time went.
fn say_checks(entries: &[Entry], phases: &[(String, f64)], format: Format) -> Result<()> {
    let checks: Vec<&Check> = entries.iter().flat_map(|e| e.verify.iter().chain(&e.verify_after)).collect();
    let compared: usize = checks.iter().map(|c| c.compared).sum();
    say(format, &format!("{} checks against the f64 reference compared {compared} output elements", checks.len()))?;
    let total: f64 = phases.iter().map(|p| p.1).sum();
    let parts: Vec<String> = phases.iter().map(|(n, s)| format!("{n} {s:.1} s")).collect();
    say(format, &format!("{} entries in {total:.1} s: {}", entries.len(), parts.join(", ")))
}

/// How a bench is timed.
#[derive(clap::Args)]
pub struct TimingArgs {
    /// How samples are taken: sustained (back to back after an L2 flush, the power cap
    /// included), burst (a rest before each sample, clocks brought back, slow samples dropped),
    /// or hot (a CUDA graph of back-to-back launches, L2 warm: for small, launch-bound sizes).
    #[arg(long, value_enum, default_value = "sustained")]
    regime: RegimeArg,
    /// Stop sampling once the estimate's 95% interval is within this many percent of it.
    #[arg(long)]
    target: Option<f64>,
    /// Go on with a bench that was cut short, RUNFILE its run file: the subjects it holds are
    /// skipped and the rest appended to it. Give the same filter, sizes and timing options.
    #[arg(long, value_name = "RUNFILE")]
    resume: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RegimeArg {
    Sustained,
    Burst,
    Hot,
}

pub fn bench(args: &RunArgs, timing: &TimingArgs, dir: &Path, format: Format, save_baseline: Option<&str>) -> Result<u8> {
    if let Some(name) = save_baseline {
        // A bad name is refused before the run, not after it.
        baselines::check_name(name)?;
    }
    let mut opts = args.options(true, None)?;
    opts.regime = match timing.regime {
        RegimeArg::Sustained => Regime::Sustained,
        RegimeArg::Burst => Regime::Burst,
        RegimeArg::Hot => Regime::Hot,
    };
    if let Some(t) = timing.target {
        if !(t.is_finite() && t > 0.0 && t < 100.0) {
            anyhow::bail!(LabError::Usage(format!("--target must be a percentage between 0 and 100, not {t}")));
        }
        opts.target = Some(t / 100.0);
    }
    // A resumed bench draws its inputs from the run's seed, and skips what the run holds.
    let resumed = timing.resume.as_deref().map(store::read_run).transpose()?;
    let seed = resumed.as_ref().and_then(|r| r.header.run.seed).or(args.seed).unwrap_or_else(inputs::clock_seed);
    let plans = plan::plan(&opts, seed)?;
    let dev = device_info(args.gpu)?;
    if let Some(r) = &resumed {
        plan::resumable(r, &dev, args.seed, &opts.policy())?;
    }
    let mut stored = store::runs_of_model(dir, &dev)?;
    stored.retain(|r| resumed.as_ref().is_none_or(|x| x.header.run.id != r.header.run.id));
    let before = store::views(&stored, Group::Model).pop();
    opts.tuned = before.as_ref().map(|v| v.tuning.clone()).unwrap_or_default();
    let policy = opts.policy();
    eprintln!(
        "benchmarking on {} ({}), run seed {seed} (replay with --seed {seed}), {} regime, to ±{}%",
        dev.name,
        dev.arch_name(),
        policy.regime.label(),
        100.0 * policy.target
    );
    let header = store::new_header(RunKind::Bench, &dev, Some(seed), Some(policy), args.hang_limit);
    let (run_info, mut recorder, mut entries, jobs) = match &resumed {
        None => (header.run.clone(), Output::New(Box::new(Recorder::new(dir, header))), Vec::new(), plan::jobs(&plans, &opts, seed)),
        Some(r) => {
            let held: Vec<Entry> = r.entries().cloned().collect();
            let jobs = plan::resume(plan::jobs(&plans, &opts, seed), &held);
            let left: usize = jobs.iter().flat_map(|j| &j.steps).map(|s| s.subjects.len()).sum();
            eprintln!("resuming {}: {} entries held, {left} subjects to run", r.path.display(), held.len());
            (r.header.run.clone(), Output::Resumed(Appender::open(&r.path)?), held, jobs)
        }
    };
    let measured = args.execute(&jobs, &dev, &mut |e| {
        recorder.append(Record::Entry(Box::new(e.clone())))?;
        // A baseline measured again for pairing replaces the one the resumed run held.
        entries.retain(|x| x.key() != e.key());
        entries.push(e);
        Ok(())
    });
    // What was measured is on disk whatever happened; an error still ends the run with it.
    let phases = measured?;
    // The notes are recorded before anything is printed: a reader that closes stdout early
    // (`bench | head`) ends the printing, not the run's record.
    let notes = runner::notes(&plans, &entries, &dev);
    for n in &notes {
        recorder.append(Record::Note { text: n.clone() })?;
    }
    let list = phases.list();
    let path = recorder.finish(list.clone())?;
    let saved = match (save_baseline, &path) {
        (Some(name), Some(p)) => Some(baselines::save(p, name)?),
        _ => None,
    };
    if format.data() {
        out!("{}", data(&entries, &dev, Some(&run_info), &dir.display().to_string(), format));
    } else {
        out!("{}", bench_tables(&entries, format.markdown()));
    }
    for n in &notes {
        say(format, n)?;
    }
    if let Some(prev) = &before {
        let text = changes(&prev.entries, &entries, format.markdown());
        if !text.is_empty() {
            say(format, text.trim_end())?;
        }
    }
    say_checks(&entries, &list, format)?;
    if let Some(p) = &path {
        say(format, &format!("results: {}", p.display()))?;
    }
    match (save_baseline, &saved) {
        (Some(name), Some(b)) => {
            say(format, &format!("baseline '{name}': {} (compare with: kernel-lab compare --baseline {name})", b.display()))?
        }
        (Some(name), None) => eprintln!("nothing was measured: no baseline '{name}' saved"),
        _ => {}
    }
    summarise(&entries, format)
}

/// Each entry's change against the newest earlier measurement of the same key, where there is one.
fn changes(before: &[Entry], now: &[Entry], markdown: bool) -> String {
    let rows = kernel_lab::analysis::compare::compare(before, now, 0.02);
    if rows.is_empty() {
        return String::new();
    }
    format!("against the previous measurement of each entry:\n{}\n", crate::results::compare_table(&rows, markdown))
}

/// Where a bench's records go: a new run file, or the one `--resume` goes on with.
enum Output {
    New(Box<Recorder>),
    Resumed(Appender),
}

impl Output {
    fn append(&mut self, record: Record) -> Result<(), LabError> {
        match self {
            Output::New(r) => r.append(record),
            Output::Resumed(a) => a.append(&record),
        }
    }

    fn finish(self, phases: Vec<(String, f64)>) -> Result<Option<std::path::PathBuf>, LabError> {
        match self {
            Output::New(r) => (*r).finish(phases),
            Output::Resumed(a) => a.finish(phases).map(Some),
        }
    }
}
