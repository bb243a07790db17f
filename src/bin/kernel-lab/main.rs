//! The `kernel-lab` command line: argument parsing and one library call per subcommand. Every
//! failure is one line on stderr and the exit code of its kind (`kernel_lab::error::exit`).

mod advise;
mod fleet;
mod info;
mod measure;
mod profile;
mod results;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kernel_lab::error::exit;
use kernel_lab::LabError;

#[derive(Parser)]
#[command(name = "kernel-lab", version, about = "Write, check, time and compare CUDA kernel variants")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The GPUs the driver sees, what they report, and the peaks derived from it.
    Devices,
    /// The variants built into this binary's kernel set.
    List {
        #[arg(long)]
        family: Option<String>,
    },
    /// Check variants and baselines against the f64 reference, without timing.
    Verify {
        #[command(flatten)]
        run: run::RunArgs,
        /// Also N random shapes per family (edges: 1, 2, tile sizes +-1, odd rows), from the seed.
        #[arg(long)]
        fuzz: Option<usize>,
    },
    /// Verify, then time every variant and its baseline; print tables; store the run.
    Bench {
        #[command(flatten)]
        run: run::RunArgs,
        /// Folder of the results, one folder per GPU model inside.
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        /// Also print the tables as Markdown.
        #[arg(long)]
        markdown: bool,
        #[command(flatten)]
        timing: run::TimingArgs,
    },
    /// Two sets of results entry by entry: the change, FASTER / SLOWER / SAME against both sides'
    /// intervals; exit 1 when an entry is slower by more than the threshold.
    Compare(results::CompareArgs),
    /// One variant's measurements across the stored runs (rate, ratio, interval, commit).
    History(results::HistoryArgs),
    /// Stored results side by side: a column per GPU model (or card) of each path.
    Report(results::ReportArgs),
    /// The spec sheet's GPUs ranked for a workload (BERT, ResNet-50, a GEMM): the sheet's bound
    /// scaled by the efficiency the lab measured, by time, per dollar and per watt.
    Advise(advise::AdviseArgs),
    /// Search a family's tunable constants on this GPU; store the best per variant and shape.
    Tune(measure::TuneArgs),
    /// One variant checked once, then launched in NVTX ranges named after it, for ncu or nsys
    /// (the ncu command is printed).
    Profile(profile::ProfileArgs),
    /// Host <-> device copies from pageable and pinned memory, 4 KB to 1 GB, and copy/kernel overlap.
    Transfers(measure::TransfersArgs),
    /// Several GPUs: links, peer copies, NCCL collectives and data-parallel scaling (needs 2+).
    Multi(measure::MultiArgs),
    /// The lab on a Slurm cluster: one array job whose tasks each run a command on one GPU type or
    /// node, a merge job after them, and one report across GPUs.
    #[command(subcommand)]
    Fleet(fleet::FleetCmd),
    /// The published spec sheet (dense rates; sparse figures are never mixed in), or one GPU's row.
    Sheet {
        /// A GPU of the sheet, e.g. "RTX 4090".
        gpu: Option<String>,
        #[arg(long)]
        markdown: bool,
    },
    /// Registers, shared memory and spills per variant, from the build's ptxas report.
    Resources {
        /// Only this architecture, e.g. sm_90.
        #[arg(long)]
        arch: Option<String>,
        /// Where tuned configurations are read from (their figures come from the tuner's compile).
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
    },
    /// One job of a bench or verify, in its own process (bench and verify start these).
    #[command(hide = true)]
    Worker {
        #[arg(long, default_value_t = 0)]
        gpu: usize,
    },
    /// One tuning candidate, in its own process (the tuner runs this).
    #[command(hide = true)]
    TuneCandidate(measure::CandidateArgs),
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, which turns a closed pipe into a panic inside println!; a command-line
    // tool should end quietly instead, as cat does.
    #[cfg(unix)]
    // SAFETY: sets a signal's disposition to its default before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // clap's own message, folded onto one line like every other error.
            let text = e.render().to_string();
            let lines: Vec<&str> =
                text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("For more information")).collect();
            eprintln!("{}", lines.join(" "));
            return ExitCode::from(exit::USAGE);
        }
    };
    match dispatch(cli.cmd) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(e.downcast_ref::<LabError>().map_or(exit::USAGE, LabError::exit_code))
        }
    }
}

fn dispatch(cmd: Cmd) -> anyhow::Result<u8> {
    match cmd {
        Cmd::Devices => info::devices(),
        Cmd::List { family } => info::list(family.as_deref()),
        Cmd::Sheet { gpu, markdown } => info::sheet(gpu.as_deref(), markdown),
        Cmd::Resources { arch, results_dir } => info::resources(arch.as_deref(), &results_dir),
        Cmd::Verify { run, fuzz } => run::verify(&run, fuzz),
        Cmd::Bench { run, results_dir, markdown, timing } => run::bench(&run, &timing, &results_dir, markdown),
        Cmd::Compare(args) => results::compare(&args),
        Cmd::History(args) => results::history(&args),
        Cmd::Worker { gpu } => Ok(kernel_lab::measure::isolate::worker(gpu).map(|()| exit::OK)?),
        Cmd::Report(args) => results::report(&args),
        Cmd::Tune(args) => measure::tune(&args),
        Cmd::Advise(args) => advise::advise(&args),
        Cmd::TuneCandidate(args) => measure::candidate(&args),
        Cmd::Transfers(args) => measure::transfers(&args),
        Cmd::Profile(args) => profile::profile(&args),
        Cmd::Multi(args) => measure::multi(&args),
        Cmd::Fleet(cmd) => fleet::fleet(cmd),
    }
}
