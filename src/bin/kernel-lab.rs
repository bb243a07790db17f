//! The `kernel-lab` command line. Every failure is one line on stderr and a non-zero exit.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use comfy_table::Table;

use kernel_lab::device::{self, Gpu};
use kernel_lab::registry::{self, BUILD, VARIANTS};
use kernel_lab::report::{self, Format};
use kernel_lab::runner::{self, Options};
use kernel_lab::store::{self, RunInfo, Status};
use kernel_lab::{arch, LabError};

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
    /// The variants built into this binary.
    List {
        #[arg(long)]
        family: Option<String>,
    },
    /// Check variants and baselines against the f64 reference, without timing.
    Verify(RunArgs),
    /// Verify, then time every variant and its baseline; print tables; store results.
    Bench {
        #[command(flatten)]
        run: RunArgs,
        /// Folder of the per-device results files.
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        /// Also print the tables as Markdown.
        #[arg(long)]
        markdown: bool,
    },
    /// Stored results side by side, one column per device.
    Report {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Registers, shared memory and spills per variant, from the build's ptxas report.
    Resources {
        /// Only this architecture, e.g. sm_90.
        #[arg(long)]
        arch: Option<String>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// A family, a variant, or part of variant names.
    filter: Option<String>,
    /// Problem sizes, the family's syntax (sgemm: N or MxNxK; memory: bytes, with K/M/G).
    #[arg(long = "size", value_delimiter = ',')]
    sizes: Vec<String>,
    /// Fewer sizes and samples.
    #[arg(long)]
    quick: bool,
    /// Seed of the run's random inputs (default: drawn from the clock, and printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Which GPU.
    #[arg(long, default_value_t = 0)]
    gpu: usize,
}

impl RunArgs {
    fn options(&self, time: bool) -> Options {
        Options { filter: self.filter.clone(), sizes: self.sizes.clone(), quick: self.quick, time }
    }

    fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
        })
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // clap's own message, folded onto one line like every other error.
            let text = e.render().to_string();
            let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("For more information")).collect();
            eprintln!("{}", lines.join(" "));
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Devices => devices(),
        Cmd::List { family } => list(family.as_deref()),
        Cmd::Verify(args) => verify(&args),
        Cmd::Bench { run, results_dir, markdown } => bench(&run, &results_dir, markdown),
        Cmd::Report { files, format } => report_cmd(&files, format),
        Cmd::Resources { arch } => resources(arch.as_deref()),
    }
}

fn table(header: &[&str]) -> Table {
    report::new_table(header.iter().map(|h| h.to_string()).collect(), false)
}

fn devices() -> Result<ExitCode> {
    let mut t = table(&["#", "name", "arch", "SMs", "SM clock", "memory", "bus", "L2", "smem/block", "fp32 peak", "DRAM peak", "driver"]);
    for d in device::list()? {
        let family = arch::lookup(d.cc_major, d.cc_minor).map(|a| a.family).unwrap_or("not in the lab's table");
        t.add_row(vec![
            d.ordinal.to_string(),
            d.name.clone(),
            format!("{} ({family})", d.arch_name()),
            d.sms.to_string(),
            format!("{} MHz", d.sm_clock_khz / 1000),
            format!("{:.0} GiB", d.total_mem_bytes as f64 / (1u64 << 30) as f64),
            format!("{} bit", d.bus_width_bits),
            format!("{} MiB", d.l2_bytes >> 20),
            format!("{} KiB", d.smem_per_block_optin >> 10),
            d.peak_fp32_tflops().map(|p| format!("{p:.1} TFLOP/s")).unwrap_or_else(|| "-".into()),
            d.peak_dram_gbs().map(|p| format!("{p:.0} GB/s")).unwrap_or_else(|| "-".into()),
            d.driver.clone(),
        ]);
    }
    println!("{t}");
    println!("peaks are derived from the reported clocks, bus width and the lab's architecture table");
    Ok(ExitCode::SUCCESS)
}

fn list(family: Option<&str>) -> Result<ExitCode> {
    if let Some(f) = family {
        registry::family(f)?;
    }
    let mut t = table(&["family", "rung", "variant", "config", "arch", "targets", "technique"]);
    for v in VARIANTS.iter().filter(|v| family.is_none_or(|f| v.family == f)) {
        t.add_row(vec![
            v.family.to_string(),
            format!("{:02}", v.rung),
            v.name.to_string(),
            v.config(),
            v.arch_req.to_string(),
            v.targets.join(" "),
            v.summary.to_string(),
        ]);
    }
    println!("{t}");
    println!("built with nvcc {} for {}", BUILD.nvcc_version, BUILD.archs.join(", "));
    for (sm, why) in BUILD.skipped {
        println!("not built for {sm}: {why}");
    }
    Ok(ExitCode::SUCCESS)
}

fn verify(args: &RunArgs) -> Result<ExitCode> {
    let opts = args.options(false);
    let plans = runner::plan(&opts)?;
    let mut gpu = Gpu::open(args.gpu)?;
    let seed = args.seed();
    eprintln!("verifying on {} ({}), run seed {seed}", gpu.info.name, gpu.info.arch_name());
    let entries = runner::run(&mut gpu, &plans, &opts, seed)?;
    println!("{}", report::verify_table(&entries));
    Ok(summarise(&entries))
}

/// Exit status: 0 when nothing failed (skips are not failures), 1 otherwise.
fn summarise(entries: &[store::Entry]) -> ExitCode {
    let count = |s: Status| entries.iter().filter(|e| e.status == s).count();
    let (ok, failed, skipped) = (count(Status::Ok), count(Status::Failed), count(Status::Skipped));
    println!("{ok} passed, {failed} failed, {skipped} skipped");
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn bench(args: &RunArgs, dir: &Path, markdown: bool) -> Result<ExitCode> {
    let opts = args.options(true);
    let plans = runner::plan(&opts)?;
    let mut gpu = Gpu::open(args.gpu)?;
    let seed = args.seed();
    eprintln!("benchmarking on {} ({}), run seed {seed}", gpu.info.name, gpu.info.arch_name());
    let entries = runner::run(&mut gpu, &plans, &opts, seed)?;
    print!("{}", report::bench_tables(&entries, false));
    if markdown {
        print!("{}", report::bench_tables(&entries, true));
    }
    let path = store::path_for(dir, &gpu.info);
    let existing = match store::load(&path) {
        Ok(f) => Some(f),
        Err(_) if !path.exists() => None,
        Err(e) => return Err(e).context("the existing results file was left as it is; move it aside to start a new one"),
    };
    let run = RunInfo {
        id: 0,
        date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        git_commit: env!("KERNEL_LAB_GIT").to_string(),
        lab_version: env!("CARGO_PKG_VERSION").to_string(),
        nvcc: BUILD.nvcc_version.to_string(),
        driver: gpu.info.driver.clone(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        seed,
        policy: opts.policy(),
    };
    let file = store::merge(existing, gpu.info.clone(), run, entries.clone());
    store::write_atomic(&path, &file)?;
    println!("results: {}", path.display());
    Ok(summarise(&entries))
}

fn report_cmd(paths: &[PathBuf], format: Format) -> Result<ExitCode> {
    let files = paths
        .iter()
        .map(|p| Ok((p.display().to_string(), store::load(p)?)))
        .collect::<Result<Vec<_>, LabError>>()?;
    print!("{}", report::side_by_side(&files, format));
    Ok(ExitCode::SUCCESS)
}

fn resources(arch_filter: Option<&str>) -> Result<ExitCode> {
    if let Some(a) = arch_filter {
        if let Some((_, why)) = BUILD.skipped.iter().find(|(sm, _)| *sm == a) {
            bail!("no variant was built for {a}: {why}");
        }
        if !VARIANTS.iter().any(|v| v.resources.iter().any(|(t, _)| *t == a)) {
            let built: Vec<&str> = BUILD.archs.to_vec();
            bail!("no variant was built for '{a}' (this build has SASS for {}; sm_XYa targets appear where a variant needs them)", built.join(", "));
        }
    }
    let mut t = table(&["family", "variant", "arch", "registers", "smem bytes", "stack bytes", "spill stores", "spill loads"]);
    for v in VARIANTS {
        for (target, u) in v.resources.iter().filter(|(t, _)| arch_filter.is_none_or(|a| *t == a)) {
            t.add_row(vec![
                v.family.to_string(),
                v.name.to_string(),
                target.to_string(),
                u.registers.to_string(),
                u.smem_bytes.to_string(),
                u.stack_bytes.to_string(),
                u.spill_stores.to_string(),
                u.spill_loads.to_string(),
            ]);
        }
    }
    println!("{t}");
    println!("from ptxas -v at build time, nvcc {}", BUILD.nvcc_version);
    Ok(ExitCode::SUCCESS)
}
