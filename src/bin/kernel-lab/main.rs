//! The `kernel-lab` command line: argument parsing and one library call per subcommand. Every
//! failure is one line on stderr and the exit code of its kind (`kernel_lab::error::exit`).

#[macro_use]
mod out;
mod advise;
mod args;
mod fleet;
mod info;
mod measure;
mod profile;
mod results;
mod run;
mod simulate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};
use kernel_lab::error::exit;
use kernel_lab::LabError;

use crate::args::{formats, Format};

#[derive(Parser)]
#[command(
    name = "kernel-lab",
    version,
    about = "Write, check, time and compare CUDA kernel variants",
    arg_required_else_help = true,
    after_help = "Every command: --format table|markdown|csv|json where it prints data, --results-dir where it reads or \
                  writes results, --gpus for which GPUs (indices), --size lists and START:END:STEP ranges.\n\
                  Exit codes: 0 ok, 1 a variant failed (or compare found a regression), 2 bad usage, a bad file or \
                  an unwritable output, 3 no GPU or a missing library, 4 a driver failure."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// The GPUs the driver sees, what they report, and the peaks derived from it.
    Devices {
        /// How to print them.
        #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json"]))]
        format: Format,
    },
    /// The variants built into this binary's kernel set.
    List {
        /// Only this family's variants, e.g. sgemm.
        #[arg(long)]
        family: Option<String>,
        /// How to print them (csv and json: one row per variant, with every column in full).
        #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json"]))]
        format: Format,
    },
    /// Check variants and baselines against the f64 reference, without timing.
    Verify {
        #[command(flatten)]
        run: run::RunArgs,
        /// Also N random shapes per family (edges: 1, 2, tile sizes +-1, odd rows), from the seed.
        #[arg(long)]
        fuzz: Option<usize>,
        /// How to print the checks (csv and json: one row per check; the summary goes to stderr).
        #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json"]))]
        format: Format,
    },
    /// Verify, then time every variant and its baseline; print tables; store the run.
    Bench {
        #[command(flatten)]
        run: run::RunArgs,
        /// Folder of the results, one folder per GPU model inside.
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        /// How to print the tables (csv and json: one row per measurement, as `report` writes
        /// them; what a person reads beside them goes to stderr).
        #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json"]))]
        format: Format,
        /// Also keep this run as the named baseline NAME of its GPU model, for `compare --baseline
        /// NAME` (a copy in <results-dir>/<model>-<arch>/baselines/NAME.jsonl; a second save of a
        /// name replaces the first).
        #[arg(long, value_name = "NAME")]
        save_baseline: Option<String>,
        #[command(flatten)]
        timing: run::TimingArgs,
    },
    /// Two sets of results entry by entry: the change, FASTER / SLOWER / SAME against both sides'
    /// intervals; exit 1 when an entry is slower by more than the threshold.
    Compare(results::CompareArgs),
    /// One variant's measurements across the stored runs (rate, ratio, interval, commit).
    History(results::HistoryArgs),
    /// Stored results side by side: a column per GPU model (or card) of each results folder.
    Report(results::ReportArgs),
    /// Leaner results folders: finished tune runs folded into the folder's tunings file, runs a
    /// newer run supersedes record by record removed; report, compare and advise read the same.
    Prune(results::PruneArgs),
    /// Stale tunings carried to the current code where a checkout of the tree they were tuned on
    /// proves it (its hash is theirs) and nvcc makes the same cubin of both; nothing else changes.
    Carry(results::CarryArgs),
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
        /// How to print it (json: every figure of the sheet, rates per precision included).
        #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "json"]))]
        format: Format,
    },
    /// Registers, shared memory and spills per variant, from the build's ptxas report.
    Resources {
        /// Only this architecture, e.g. sm_90.
        #[arg(long)]
        arch: Option<String>,
        /// Where tuned configurations are read from (their figures come from the tuner's compile).
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        /// How to print them (csv: the built variants' table; json: both tables).
        #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json"]))]
        format: Format,
    },
    /// One job of a bench or verify, in its own process (bench and verify start these).
    #[command(hide = true)]
    Worker {
        /// The GPU's index (the parent's --gpus).
        #[arg(long, default_value_t = 0)]
        gpu: usize,
    },
    /// One tuning candidate, in its own process (the tuner runs this).
    #[command(hide = true)]
    TuneCandidate(measure::CandidateArgs),
    /// Every command's arguments as JSON: what the CLI's tests hold to one grammar.
    #[command(hide = true)]
    Grammar,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // No command at all (`kernel-lab`, `kernel-lab fleet`): the help as clap lays it out, to
        // read, and the usage code, since nothing was run.
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(exit::USAGE);
        }
        Err(e) if !e.use_stderr() => {
            return match out::write(format_args!("{}", e.render())) {
                Err(e) => fail(&e),
                Ok(()) => ExitCode::SUCCESS,
            };
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
        Err(e) => fail(&e),
    }
}

/// One line and the code of the error's kind; nothing when the reader closed standard output.
fn fail(e: &anyhow::Error) -> ExitCode {
    if e.downcast_ref::<out::Closed>().is_some() {
        return ExitCode::SUCCESS;
    }
    eprintln!("error: {e:#}");
    ExitCode::from(e.downcast_ref::<LabError>().map_or(exit::USAGE, LabError::exit_code))
}

fn dispatch(cmd: Cmd) -> anyhow::Result<u8> {
    match cmd {
        Cmd::Devices { format } => info::devices(format),
        Cmd::List { family, format } => info::list(family.as_deref(), format),
        Cmd::Sheet { gpu, format } => info::sheet(gpu.as_deref(), format),
        Cmd::Resources { arch, results_dir, format } => info::resources(arch.as_deref(), &results_dir, format),
        Cmd::Verify { run, fuzz, format } => run::verify(&run, fuzz, format),
        Cmd::Bench { run, results_dir, format, save_baseline, timing } => {
            run::bench(&run, &timing, &results_dir, format, save_baseline.as_deref())
        }
        Cmd::Compare(args) => results::compare(&args),
        Cmd::History(args) => results::history(&args),
        Cmd::Prune(args) => results::prune(&args),
        Cmd::Carry(args) => results::carry(&args),
        Cmd::Worker { gpu } => Ok(kernel_lab::measure::isolate::worker(gpu).map(|()| exit::OK)?),
        Cmd::Report(args) => results::report(&args),
        Cmd::Tune(args) => measure::tune(&args),
        Cmd::Advise(args) => advise::advise(&args),
        Cmd::TuneCandidate(args) => measure::candidate(&args),
        Cmd::Transfers(args) => measure::transfers(&args),
        Cmd::Profile(args) => profile::profile(&args),
        Cmd::Multi(args) => measure::multi(&args),
        Cmd::Fleet(cmd) => fleet::fleet(cmd),
        Cmd::Grammar => {
            outln!("{}", serde_json::to_string_pretty(&grammar(&<Cli as clap::CommandFactory>::command()))?);
            Ok(exit::OK)
        }
    }
}

/// A command and its subcommands as JSON: each argument's names, help, value names and the
/// values it takes, as clap holds them.
fn grammar(cmd: &clap::Command) -> serde_json::Value {
    let args: Vec<serde_json::Value> = cmd
        .get_arguments()
        .map(|a| {
            serde_json::json!({
                "id": a.get_id().as_str(),
                "long": a.get_long(),
                "positional": a.is_positional(),
                "help": a.get_help().map(|h| h.to_string()),
                "value_names": a.get_value_names().map(|v| v.iter().map(|s| s.as_str().to_string()).collect::<Vec<_>>()),
                "values": a.get_possible_values().iter().map(|v| v.get_name().to_string()).collect::<Vec<_>>(),
                "hidden": a.is_hide_set(),
            })
        })
        .collect();
    serde_json::json!({
        "name": cmd.get_name(),
        "hidden": cmd.is_hide_set(),
        "args": args,
        "commands": cmd.get_subcommands().map(grammar).collect::<Vec<_>>(),
    })
}
