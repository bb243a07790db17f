//! `verify` and `bench`: their arguments, and the tables and lines printed from what the
//! library's run of them (`analysis::bench_run`) returns.

use std::path::Path;

use anyhow::Result;
use kernel_lab::analysis::bench_run::{self, Request, Timing};
use kernel_lab::analysis::report::data as report_data;
use kernel_lab::analysis::report::run::{bench_tables, verify_table};
use kernel_lab::error::exit;
use kernel_lab::schema::check::Check;
use kernel_lab::schema::device::DeviceInfo;
use kernel_lab::schema::entry::{Entry, Status};
use kernel_lab::schema::run::Regime;

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

impl RunArgs {
    fn request(&self) -> Request {
        Request {
            filter: self.filter.clone(),
            sizes: self.sizes.clone(),
            suites: self.suites.clone(),
            quick: self.quick,
            seed: self.seed,
            gpu: self.gpu,
            hang_limit: self.hang_limit,
            in_process: self.in_process,
        }
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
    let run = bench_run::verify(&args.request(), fuzz, &mut |line| eprintln!("{line}"))?;
    let (dev, entries) = (&run.dev, &run.entries);
    // A fuzzed run has thousands of checks: the table shows those that did not pass.
    let shown: Vec<Entry> =
        if fuzz.is_some() { entries.iter().filter(|e| e.status == Status::Failed).cloned().collect() } else { entries.clone() };
    if format.data() {
        out!("{}", data(&shown, dev, None, "", format));
    } else if !shown.is_empty() {
        outln!("{}", verify_table(&shown));
    }
    if fuzz.is_some() {
        for p in &run.plans {
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
    say_checks(entries, &run.phases, format)?;
    summarise(entries, format)
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
    let timing = Timing {
        regime: match timing.regime {
            RegimeArg::Sustained => Regime::Sustained,
            RegimeArg::Burst => Regime::Burst,
            RegimeArg::Hot => Regime::Hot,
        },
        target: timing.target,
        resume: timing.resume.clone(),
    };
    let run = bench_run::bench(&args.request(), &timing, dir, save_baseline, &mut |line| eprintln!("{line}"))?;
    let (dev, entries) = (&run.dev, &run.entries);
    if format.data() {
        out!("{}", data(entries, dev, Some(&run.run), &dir.display().to_string(), format));
    } else {
        out!("{}", bench_tables(entries, format.markdown()));
    }
    for n in &run.notes {
        say(format, n)?;
    }
    if let Some(prev) = &run.before {
        let text = changes(&prev.entries, entries, format.markdown());
        if !text.is_empty() {
            say(format, text.trim_end())?;
        }
    }
    say_checks(entries, &run.phases, format)?;
    if let Some(p) = &run.path {
        say(format, &format!("results: {}", p.display()))?;
    }
    match (save_baseline, &run.saved) {
        (Some(name), Some(b)) => {
            say(format, &format!("baseline '{name}': {} (compare with: kernel-lab compare --baseline {name})", b.display()))?
        }
        (Some(name), None) => eprintln!("nothing was measured: no baseline '{name}' saved"),
        _ => {}
    }
    summarise(entries, format)
}

/// Each entry's change against the newest earlier measurement of the same key, where there is one.
fn changes(before: &[Entry], now: &[Entry], markdown: bool) -> String {
    let rows = kernel_lab::analysis::compare::compare(before, now, 0.02);
    if rows.is_empty() {
        return String::new();
    }
    format!("against the previous measurement of each entry:\n{}\n", crate::results::compare_table(&rows, markdown))
}
