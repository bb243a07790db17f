//! `kernel-lab fleet submit | status | collect`: the fleet's folder, scripts and Slurm calls live
//! in the library (`analysis::fleet`); this file parses the arguments and prints.

use std::path::PathBuf;

use anyhow::{bail, Result};
use kernel_lab::analysis::fleet::{self, collect, script, slurm, Fleet, Placement};
use kernel_lab::error::exit;
use kernel_lab::LabError;

use crate::results::By;

#[derive(clap::Subcommand)]
pub enum FleetCmd {
    /// Write the fleet's folder and scripts, then submit the array job (one per distinct set of
    /// resources) and the merge job after it.
    Submit(SubmitArgs),
    /// One line per task: Slurm's state, the exit code, the node and GPU, the results stored.
    Status {
        /// The fleet's folder.
        dir: PathBuf,
    },
    /// Merge the results the tasks stored into one report across GPUs (report.md, report.html);
    /// name what failed or is missing; exit 1 if any task failed or has not ended.
    Collect {
        dir: PathBuf,
        /// One column per GPU model, or one per card.
        #[arg(long, value_enum, default_value = "model")]
        by: By,
    },
}

#[derive(clap::Args)]
pub struct SubmitArgs {
    /// A fleet file (TOML: dir, binary, [slurm], [[task]] with run and its own partition,
    /// constraint, gres); or --dir and --run instead.
    file: Option<PathBuf>,
    /// The fleet's folder, on a filesystem every node sees.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// One task's kernel-lab command, e.g. "bench --quick" (repeatable: one task each).
    #[arg(long)]
    run: Vec<String>,
    #[arg(long)]
    partition: Option<String>,
    #[arg(long)]
    constraint: Option<String>,
    /// Generic resources per task, e.g. gpu:1.
    #[arg(long)]
    gres: Option<String>,
    /// Time limit per task (Slurm's format, e.g. 01:00:00).
    #[arg(long)]
    time: Option<String>,
    #[arg(long)]
    account: Option<String>,
    /// Write the folder and scripts and print the sbatch commands, without submitting.
    #[arg(long)]
    dry_run: bool,
}

fn usage(msg: String) -> anyhow::Error {
    LabError::Usage(msg).into()
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
    // A new submission's tasks write new status files; the results of earlier ones stay.
    let status = f.dir.join("status");
    if status.is_dir() {
        for e in std::fs::read_dir(&status)?.flatten() {
            std::fs::remove_file(e.path())?;
        }
    }
    script::write_folder(&f)?;
    if a.dry_run {
        for (args, _) in slurm::plan(&f) {
            println!("sbatch {}", args.join(" "));
        }
        println!("sbatch {}", slurm::merge_args(&f, &["<the array jobs' ids>".into()]).join(" "));
        println!("(dry run: {} written, nothing submitted)", f.dir.display());
        return Ok(exit::OK);
    }
    let jobs = slurm::submit(&f)?;
    std::fs::write(f.dir.join("jobs.json"), serde_json::to_string_pretty(&jobs)?)?;
    for a in &jobs.arrays {
        let names: Vec<String> = a.tasks.iter().map(|&i| format!("{i} {}", f.tasks[i].name)).collect();
        println!("array job {}: tasks {}", a.job, names.join(", "));
    }
    println!("merge job {} after them (afterany); follow with: kernel-lab fleet status {}", jobs.merge, f.dir.display());
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
            print!("{}", lines(&dir)?.1);
            Ok(exit::OK)
        }
        FleetCmd::Collect { dir, by } => {
            let (lines, table) = lines(&dir)?;
            print!("{table}");
            let merged = collect::merge(&dir, by.group())?;
            match merged.reports.as_slice() {
                [] => println!("no results files in {} yet: no report", dir.join("results").display()),
                paths => println!(
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
                println!("FAILED or missing: task {}; their logs are in {}", failed.join(", task "), dir.join("logs").display());
            }
            if !open.is_empty() {
                println!("not ended yet: task {}", open.join(", task "));
            }
            Ok(if failed.is_empty() && open.is_empty() { exit::OK } else { exit::FAILED })
        }
    }
}
