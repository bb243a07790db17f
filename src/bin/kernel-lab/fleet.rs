//! `kernel-lab fleet submit | status | collect`: the fleet's folder, scripts and Slurm calls live
//! in the library (`analysis::fleet`); this file parses the arguments and prints.

use std::cell::Cell;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::error::ErrorKind;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use kernel_lab::analysis::fleet::{self, collect, script, slurm, Fleet, Placement};
use kernel_lab::error::exit;
use kernel_lab::gpu::registry;
use kernel_lab::measure::families::{self, shapes::parse_count};
use kernel_lab::measure::plan;
use kernel_lab::LabError;

use crate::results::By;

#[derive(clap::Subcommand)]
pub enum FleetCmd {
    /// Write the fleet's folder and scripts, then submit the array job (one per distinct set of
    /// resources) and the merge job after it.
    Submit(SubmitArgs),
    /// One line per task: Slurm's state, the exit code, the node and GPU, the results stored.
    Status {
        /// The fleet's folder (the dir its fleet file or --dir named).
        dir: PathBuf,
    },
    /// Merge the results the tasks stored into one report across GPUs (report.md, report.html);
    /// name what failed or is missing; exit 1 if any task failed or has not ended.
    Collect {
        /// The fleet's folder (the dir its fleet file or --dir named).
        dir: PathBuf,
        /// One column per GPU model, or one per card.
        #[arg(long, value_enum, default_value = "model")]
        by: By,
    },
}

#[derive(clap::Args)]
pub struct SubmitArgs {
    /// A fleet file (TOML: dir, binary, [slurm], [[task]] with run and its own partition,
    /// constraint, gres); its relative dir and binary are from its own folder. Or --dir and --run
    /// instead.
    file: Option<PathBuf>,
    /// The fleet's folder, on a filesystem every node sees (a relative one from the current folder).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// One task's kernel-lab command, split as a shell would, e.g. 'sheet "RTX 4090"'
    /// (repeatable: one task each).
    #[arg(long)]
    run: Vec<String>,
    /// The Slurm partition of every task and the merge job.
    #[arg(long)]
    partition: Option<String>,
    /// A Slurm node feature every task needs (e.g. a GPU type's).
    #[arg(long)]
    constraint: Option<String>,
    /// Generic resources per task, e.g. gpu:1.
    #[arg(long)]
    gres: Option<String>,
    /// Time limit per task (Slurm's format, e.g. 01:00:00).
    #[arg(long)]
    time: Option<String>,
    /// The Slurm account jobs are charged to.
    #[arg(long)]
    account: Option<String>,
    /// Write the folder and scripts and print the sbatch commands, without submitting.
    #[arg(long)]
    dry_run: bool,
}

/// The shell variable the dry run's merge line takes the array jobs' ids from.
const IDS: &str = "$ids";

fn usage(msg: String) -> anyhow::Error {
    LabError::Usage(msg).into()
}

/// One task's command line through the CLI's own parser, as `fleet.sbatch` will run it: an
/// unknown subcommand or flag, a bad value, or a size or filter its command would refuse is
/// the error, folded onto one line. Only the user's input is judged: where this program cannot
/// read its kernel set (stale or absent here, as on a login node with another build), the
/// filter and sizes wait for the task's own run, and `unchecked` says why.
fn parse_task(args: &[String], unchecked: &Cell<Option<String>>) -> Result<(), String> {
    let argv = std::iter::once("kernel-lab".to_string()).chain(args.iter().cloned());
    let m = crate::Cli::command().try_get_matches_from(argv).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            "it would print help, not run anything".to_string()
        }
        _ => clap_line(&e),
    })?;
    crate::Cli::from_arg_matches(&m).map_err(|e| clap_line(&e))?;
    let Some((command, sub)) = m.subcommand() else { return Ok(()) };
    match before_gpu(command, sub) {
        Err(e) if e.exit_code() == exit::USAGE => Err(e.to_string()),
        Err(e) => {
            unchecked.set(Some(e.to_string()));
            Ok(())
        }
        Ok(()) => Ok(()),
    }
}

/// clap's message without its "error: " and "For more information" lines, on one line.
fn clap_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect();
    lines.join("; ")
}

/// The raw values of argument `id`, or none (an id a command does not have included).
fn raw(m: &ArgMatches, id: &str) -> Vec<String> {
    m.try_get_raw(id).ok().flatten().map(|v| v.map(|s| s.to_string_lossy().into_owned()).collect()).unwrap_or_default()
}

/// What clap cannot see and the commands check before touching a GPU, by the same library
/// calls: the sizes (each family's own syntax) and the filter of bench and verify, the family and
/// sizes of tune, the byte counts of transfers and multi. Read from the raw values, so a change
/// of an argument's type does not hide it. What needs the GPU (does GPU 3 exist?) waits for it.
fn before_gpu(command: &str, m: &ArgMatches) -> std::result::Result<(), LabError> {
    let (filter, suites) = (raw(m, "filter").pop(), raw(m, "suites"));
    let sizes = kernel_lab::measure::families::shapes::expand(&raw(m, "sizes")).map_err(LabError::Usage)?;
    match command {
        "bench" | "verify" => {
            let opts = plan::Options { filter, sizes, suites, ..Default::default() };
            plan::plan(&opts, 0).map(drop)
        }
        "tune" => {
            let Some(family) = raw(m, "family").pop() else { return Ok(()) };
            let fam = families::get(registry::family(&family)?)
                .ok_or_else(|| LabError::Usage(format!("'{family}' is not a family the lab implements")))?;
            families::parse_sizes(fam, &sizes).map(drop)
        }
        "transfers" | "multi" => {
            let max = raw(m, "max_collective");
            let mut counts = sizes.iter().map(|s| (s, "--size")).chain(max.iter().map(|s| (s, "--max-collective")));
            counts.try_for_each(|(s, what)| parse_count(s, what).map(drop).map_err(LabError::Usage))
        }
        _ => Ok(()),
    }
}

fn submit(a: &SubmitArgs) -> Result<u8> {
    let me = std::env::current_exe()?;
    if a.file.is_some() && (a.dir.is_some() || !a.run.is_empty()) {
        bail!(usage("fleet submit: a fleet file names its own dir and tasks; --dir and --run go without one".into()));
    }
    let f = match (&a.file, &a.dir) {
        (Some(file), _) => Fleet::read(file, &me)?,
        (None, None) => bail!(usage("fleet submit: give a fleet file, or --dir and --run".into())),
        (None, Some(dir)) => {
            let place = Placement {
                partition: a.partition.clone(),
                constraint: a.constraint.clone(),
                gres: a.gres.clone(),
                time: a.time.clone(),
                account: a.account.clone(),
                extra: Vec::new(),
            };
            let tasks = a.run.iter().enumerate().map(|(i, r)| fleet::task(i, None, r, place.clone())).collect::<Result<Vec<_>, _>>()?;
            let merge = Placement { gres: None, constraint: None, ..place };
            Fleet::new(dir, &me, tasks, merge)?
        }
    };
    // Before anything is written: a task refused now would otherwise fail after its wait in the queue.
    let unchecked = Cell::new(None);
    f.check(|args| parse_task(args, &unchecked))?;
    if let Some(why) = unchecked.take() {
        eprintln!("note: the tasks' filters and sizes are checked when they run, not here: {why}");
    }
    // A new submission's tasks write new status files; the results of earlier ones stay.
    let status = f.dir.join("status");
    if status.is_dir() {
        for e in std::fs::read_dir(&status)?.flatten() {
            std::fs::remove_file(e.path())?;
        }
    }
    script::write_folder(&f)?;
    if a.dry_run {
        // Lines to paste into a shell: each word quoted where it needs to be. The merge job's
        // dependency is the array jobs' ids, known only once they are submitted: "$ids".
        for (args, _) in slurm::plan(&f) {
            outln!("sbatch {}", script::join(&args));
        }
        outln!("# the merge job, after the array jobs: ids=ID1:ID2..., the ids each sbatch above printed");
        let merge = slurm::merge_args(&f, &[IDS.into()]);
        let words: Vec<String> = merge.iter().map(|w| if w.contains(IDS) { format!("\"{w}\"") } else { script::quote(w) }).collect();
        outln!("sbatch {}", words.join(" "));
        outln!("(dry run: {} written, nothing submitted)", f.dir.display());
        return Ok(exit::OK);
    }
    let jobs = slurm::submit(&f)?;
    std::fs::write(f.dir.join("jobs.json"), serde_json::to_string_pretty(&jobs)?)?;
    for a in &jobs.arrays {
        let names: Vec<String> = a.tasks.iter().map(|&i| format!("{i} {}", f.tasks[i].name)).collect();
        outln!("array job {}: tasks {}", a.job, names.join(", "));
    }
    outln!(
        "merge job {} after them (afterany); follow with: kernel-lab fleet status {}",
        jobs.merge,
        script::quote(&f.dir.display().to_string())
    );
    Ok(exit::OK)
}

fn lines(dir: &std::path::Path) -> Result<(Vec<collect::Line>, String)> {
    let f = Fleet::load(dir)?;
    let jobs = collect::jobs(dir)?;
    let states = jobs.as_ref().map(slurm::states).unwrap_or_default();
    let lines = collect::lines(&f, jobs.as_ref(), &states);
    let merge = jobs.as_ref().map(|j| (j.merge.as_str(), states.get(&j.merge)));
    let table = collect::table(&lines, merge);
    Ok((lines, table))
}

pub fn fleet(cmd: FleetCmd) -> Result<u8> {
    match cmd {
        FleetCmd::Submit(a) => submit(&a),
        FleetCmd::Status { dir } => {
            out!("{}", lines(&dir)?.1);
            Ok(exit::OK)
        }
        FleetCmd::Collect { dir, by } => {
            let (lines, table) = lines(&dir)?;
            out!("{table}");
            let merged = collect::merge(&dir, by.group())?;
            match merged.reports.as_slice() {
                [] => outln!("no results files in {} yet: no report", dir.join("results").display()),
                paths => outln!(
                    "merged {} run(s) into {} column(s) ({}); report: {}",
                    merged.runs,
                    merged.columns.len(),
                    merged.columns.join("; "),
                    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                ),
            }
            let failed: Vec<String> = lines.iter().filter(|l| l.failed).map(|l| format!("{} ({})", l.index, l.name)).collect();
            let open: Vec<String> =
                lines.iter().filter(|l| !l.finished && !l.failed).map(|l| format!("{} ({})", l.index, l.name)).collect();
            if !failed.is_empty() {
                outln!("FAILED or missing: task {}; their logs are in {}", failed.join(", task "), dir.join("logs").display());
            }
            if !open.is_empty() {
                outln!("not ended yet: task {}", open.join(", task "));
            }
            Ok(if failed.is_empty() && open.is_empty() { exit::OK } else { exit::FAILED })
        }
    }
}
