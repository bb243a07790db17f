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
use kernel_lab::timing::Policy;
use kernel_lab::{arch, families, tune, LabError};

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
        /// A price for performance per dollar, "GPU=USD" with a GPU of the sheet (repeatable);
        /// without one the sheet's launch price is used where it has one.
        #[arg(long = "price")]
        prices: Vec<String>,
    },
    /// Search a family's tunable constants on this GPU; store the best per variant and shape.
    Tune {
        family: String,
        /// A variant of the family, or part of variant names.
        filter: Option<String>,
        /// Shapes to tune at (default: the family's largest quick size).
        #[arg(long = "size", value_delimiter = ',')]
        sizes: Vec<String>,
        /// Seconds of search in all, shared by the variants and shapes.
        #[arg(long, default_value_t = 300.0)]
        budget: f64,
        /// Finalists re-timed head to head.
        #[arg(long, default_value_t = 3)]
        top: usize,
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        #[arg(long)]
        seed: Option<u64>,
        #[arg(long, default_value_t = 0)]
        gpu: usize,
    },
    /// Host <-> device copies from pageable and pinned memory, 4 KB to 1 GB, and copy/kernel overlap.
    Transfers {
        /// Transfer sizes in bytes, with K/M/G (default 4K to 1G).
        #[arg(long = "size", value_delimiter = ',')]
        sizes: Vec<String>,
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        #[arg(long, default_value_t = 0)]
        gpu: usize,
    },
    /// Several GPUs: links, peer copies, NCCL collectives and data-parallel scaling (needs 2+).
    Multi {
        /// Which GPUs, e.g. 0,1 (default: all the driver sees).
        #[arg(long, value_delimiter = ',')]
        gpus: Vec<usize>,
        /// Peer copy sizes in bytes, with K/M/G (default 4K to 1G).
        #[arg(long = "size", value_delimiter = ',')]
        sizes: Vec<String>,
        /// Largest collective, bytes with K/M/G (default 1G; sizes run from 8 B up by 4x).
        #[arg(long, default_value = "1G")]
        max_collective: String,
        #[arg(long, default_value = "results")]
        results_dir: PathBuf,
        #[arg(long)]
        markdown: bool,
    },
    /// The published spec sheet (dense rates; sparse figures are never mixed in), or one GPU's row.
    Sheet {
        /// A GPU of the sheet, e.g. "RTX 4090".
        gpu: Option<String>,
        #[arg(long)]
        markdown: bool,
    },
    /// One tuning candidate, in its own process (the tuner runs this).
    #[command(hide = true)]
    TuneCandidate {
        #[arg(long)]
        variant: String,
        #[arg(long)]
        size: String,
        #[arg(long)]
        config: String,
        #[arg(long)]
        seed: u64,
        #[arg(long, default_value_t = 0)]
        gpu: usize,
        #[arg(long)]
        full: bool,
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
}

#[derive(clap::Args)]
struct RunArgs {
    /// A family, a variant, or part of variant names.
    filter: Option<String>,
    /// Problem sizes, the family's syntax (sgemm: N or MxNxK; memory: bytes, with K/M/G).
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
    /// Which GPU.
    #[arg(long, default_value_t = 0)]
    gpu: usize,
}

impl RunArgs {
    fn options(&self, time: bool) -> Options {
        Options {
            filter: self.filter.clone(),
            sizes: self.sizes.clone(),
            suites: self.suites.clone(),
            quick: self.quick,
            time,
            tuned: Vec::new(),
        }
    }

    fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(clock_seed)
    }
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
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
        Cmd::Report { files, format, prices } => report_cmd(&files, format, &prices),
        Cmd::Resources { arch, results_dir } => resources(arch.as_deref(), &results_dir),
        Cmd::Tune { family, filter, sizes, budget, top, results_dir, seed, gpu } => {
            tune(&family, filter.as_deref(), &sizes, budget, top, &results_dir, seed, gpu)
        }
        Cmd::Transfers { sizes, results_dir, gpu } => transfers(&sizes, &results_dir, gpu),
        Cmd::Sheet { gpu, markdown } => sheet(gpu.as_deref(), markdown),
        Cmd::Multi { gpus, sizes, max_collective, results_dir, markdown } => multi(&gpus, &sizes, &max_collective, &results_dir, markdown),
        Cmd::TuneCandidate { variant, size, config, seed, gpu, full } => tune_candidate(&variant, &size, &config, seed, gpu, full),
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

fn multi(ordinals: &[usize], sizes: &[String], max_collective: &str, dir: &Path, markdown: bool) -> Result<ExitCode> {
    let copy_sizes: Vec<u64> = if sizes.is_empty() {
        kernel_lab::transfers::default_sizes()
    } else {
        sizes.iter().map(|s| families::parse_count(s, "--size").map_err(LabError::Usage)).collect::<Result<_, _>>()?
    };
    let max = families::parse_count(max_collective, "--max-collective").map_err(LabError::Usage)?;
    // 8 B up by 4x, and the largest itself (1 GiB is not 8 x a power of 4).
    let mut collective_sizes: Vec<u64> = std::iter::successors(Some(8u64), |s| Some(s * 4)).take_while(|&s| s <= max).collect();
    if collective_sizes.last() != Some(&max) {
        collective_sizes.push(max);
    }
    let ordinals: Vec<usize> = if ordinals.is_empty() { (0..device::list()?.len()).collect() } else { ordinals.to_vec() };
    if ordinals.len() < 2 {
        bail!("the multi family needs 2 or more GPUs; {} {} available", ordinals.len(), if ordinals.len() == 1 { "is" } else { "are" });
    }
    let mut gpus = ordinals.iter().map(|&o| Gpu::open(o)).collect::<Result<Vec<_>, _>>()?;
    let path = store::path_for(dir, &gpus[0].info);
    let existing = store::load_existing(&path).context("the results file was left as it is; move it aside to start a new one")?;
    eprintln!("several GPUs: {}", gpus.iter().map(|g| format!("{} ({})", g.info.name, g.info.ordinal)).collect::<Vec<_>>().join(", "));
    let m = kernel_lab::multi::measure(&mut gpus, &copy_sizes, &collective_sizes)?;
    print!("{}", report::multi_tables(&m, markdown));
    let file = store::with_multi(existing, gpus[0].info.clone(), m);
    store::write_atomic(&path, &file)?;
    println!("results: {}", path.display());
    Ok(ExitCode::SUCCESS)
}

fn sheet(gpu: Option<&str>, markdown: bool) -> Result<ExitCode> {
    let gpus: Vec<&kernel_lab::sheet::Gpu> = match gpu {
        Some(name) => vec![kernel_lab::sheet::find(name).map_err(LabError::Usage)?],
        None => kernel_lab::sheet::GPUS.iter().collect(),
    };
    println!("{}", report::sheet_table(&gpus, markdown));
    for g in &gpus {
        println!("{}: {}", g.name, g.source);
    }
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
            v.config().label(),
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
    let mut opts = args.options(true);
    let plans = runner::plan(&opts)?;
    let mut gpu = Gpu::open(args.gpu)?;
    let path = store::path_for(dir, &gpu.info);
    let existing = store::load_existing(&path).context("the results file was left as it is; move it aside to start a new one")?;
    opts.tuned = existing.as_ref().map(|f| f.tuning.clone()).unwrap_or_default();
    let seed = args.seed();
    eprintln!("benchmarking on {} ({}), run seed {seed}", gpu.info.name, gpu.info.arch_name());
    let entries = runner::run(&mut gpu, &plans, &opts, seed)?;
    print!("{}", report::bench_tables(&entries, false));
    if markdown {
        print!("{}", report::bench_tables(&entries, true));
    }
    let notes = runner::notes(&plans, &entries, &gpu.info);
    for n in &notes {
        println!("{n}");
    }
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
        notes,
    };
    let mut file = store::merge(existing, gpu.info.clone(), run, entries.clone());
    file.retain_known(|v| registry::by_name(v).is_some());
    store::write_atomic(&path, &file)?;
    println!("results: {}", path.display());
    Ok(summarise(&entries))
}

/// "GPU=USD": a GPU of the sheet and a positive price.
fn parse_price(text: &str) -> Result<(String, f64)> {
    let (name, usd) = text.split_once('=').with_context(|| format!("--price '{text}': expected GPU=USD, e.g. \"RTX 4090=1599\""))?;
    let gpu = kernel_lab::sheet::find(name.trim()).map_err(|e| anyhow::anyhow!("--price: {e}"))?;
    match usd.trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p > 0.0 => Ok((gpu.name.to_string(), p)),
        _ => bail!("--price '{text}': '{}' is not a positive number of dollars", usd.trim()),
    }
}

fn report_cmd(paths: &[PathBuf], format: Format, prices: &[String]) -> Result<ExitCode> {
    let prices = prices.iter().map(|p| parse_price(p)).collect::<Result<Vec<_>>>()?;
    let files = paths.iter().map(|p| Ok((p.display().to_string(), store::load(p)?))).collect::<Result<Vec<_>, LabError>>()?;
    print!("{}", report::side_by_side(&files, format, &prices));
    Ok(ExitCode::SUCCESS)
}

/// One row of the resources table.
fn usage_row(v: &registry::VariantSpec, target: &str, u: &kernel_lab::resources::Usage) -> Vec<String> {
    vec![
        v.family.to_string(),
        v.name.to_string(),
        target.to_string(),
        u.registers.to_string(),
        u.smem_bytes.to_string(),
        u.stack_bytes.to_string(),
        u.spill_stores.to_string(),
        u.spill_loads.to_string(),
    ]
}

/// The variants declared for an architecture the toolkit dropped, compiled now with NVRTC 12.
fn legacy_resources(sm: u32, why: &str) -> Result<ExitCode> {
    let nvrtc = kernel_lab::legacy::Nvrtc::load().map_err(|e| anyhow::anyhow!("{e} (nvcc does not build sm_{sm}: {why})"))?;
    let mut t = table(&["family", "variant", "arch", "registers", "smem bytes", "stack bytes", "spill stores", "spill loads"]);
    for v in kernel_lab::legacy::declared_for(sm) {
        t.add_row(usage_row(v, &format!("sm_{sm}"), &nvrtc.usage(v, sm)?));
    }
    println!("{t}");
    println!("compiled now with NVRTC {}.{} (nvcc {} does not build sm_{sm})", nvrtc.version.0, nvrtc.version.1, BUILD.nvcc_version);
    Ok(ExitCode::SUCCESS)
}

fn resources(arch_filter: Option<&str>, dir: &Path) -> Result<ExitCode> {
    if let Some(a) = arch_filter {
        if let Some((_, why)) = BUILD.skipped.iter().find(|(sm, _)| *sm == a) {
            let sm = a.trim_start_matches("sm_").parse::<u32>().with_context(|| format!("'{a}' is not sm_XY"))?;
            return legacy_resources(sm, why);
        }
        if !VARIANTS.iter().any(|v| v.resources.iter().any(|(t, _)| *t == a)) {
            let built: Vec<&str> = BUILD.archs.to_vec();
            bail!(
                "no variant was built for '{a}' (this build has SASS for {}; sm_XYa targets appear where a variant needs them)",
                built.join(", ")
            );
        }
    }
    let mut t = table(&["family", "variant", "arch", "registers", "smem bytes", "stack bytes", "spill stores", "spill loads"]);
    for v in VARIANTS {
        for (target, u) in v.resources.iter().filter(|(t, _)| arch_filter.is_none_or(|a| *t == a)) {
            t.add_row(usage_row(v, target, u));
        }
    }
    println!("{t}");
    println!("from ptxas -v at build time, nvcc {}", BUILD.nvcc_version);
    let mut tuned = table(&["family", "variant", "arch", "registers", "smem bytes", "local bytes (stack + spills)", "tuned on"]);
    let files = std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect::<Vec<_>>()).unwrap_or_default();
    for file in files.iter().filter(|p| p.extension().is_some_and(|x| x == "json")).filter_map(|p| store::load(p).ok()) {
        let arch = file.device.arch_name();
        if arch_filter.is_some_and(|a| a != arch) {
            continue;
        }
        for rec in &file.tuning {
            let Some(best) = rec.candidates.iter().find(|c| Some(&c.config) == rec.best.as_ref()) else { continue };
            let n = |v: Option<u32>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
            tuned.add_row(vec![
                rec.family.clone(),
                format!("{}@tuned", rec.variant),
                arch.clone(),
                n(best.registers),
                n(best.smem_bytes),
                n(best.local_bytes),
                format!("{} at {}", file.device.name, rec.shape),
            ]);
        }
    }
    if !tuned.is_empty() {
        println!("{tuned}");
        println!("tuned configurations: from the driver's report on the GPU they were tuned on");
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
fn tune(
    family: &str,
    filter: Option<&str>,
    sizes: &[String],
    budget: f64,
    top: usize,
    dir: &Path,
    seed: Option<u64>,
    ordinal: usize,
) -> Result<ExitCode> {
    let fam = families::get(registry::family(family)?).context("the registry names a family the lab does not implement")?;
    let variants: Vec<_> = registry::select(Some(filter.unwrap_or(family)))?.into_iter().filter(|v| v.family == fam.name()).collect();
    if variants.is_empty() {
        bail!("'{}' names no variant of {family}", filter.unwrap_or_default());
    }
    let tunable: Vec<_> = variants.into_iter().filter(|v| !v.tune.is_empty()).collect();
    if tunable.is_empty() {
        bail!(
            "no variant of {family} matching '{}' has tunable constants (a `tune = {{ ... }}` table in its manifest entry)",
            filter.unwrap_or(family)
        );
    }
    if !(budget.is_finite() && budget > 0.0) {
        bail!("--budget must be a positive number of seconds, not {budget}");
    }
    if top == 0 {
        bail!("--top must be at least 1");
    }
    let shapes = if sizes.is_empty() { fam.tune_sizes() } else { families::parse_sizes(fam, sizes)? };
    let gpu = Gpu::open(ordinal)?;
    if !kernel_lab::jit::available() {
        bail!("the tuner compiles candidates with NVRTC, and libnvrtc.so was not found");
    }
    let path = store::path_for(dir, &gpu.info);
    let mut existing = store::load_existing(&path).context("the results file was left as it is; move it aside to start a new one")?;
    let exe = std::env::current_exe().context("cannot find this program to run candidates")?;
    let search = tune::Search {
        exe: &exe,
        gpu: ordinal,
        device: &gpu.info,
        budget_s: budget / (tunable.len() * shapes.len()) as f64,
        top,
        seed: seed.unwrap_or_else(clock_seed),
        git_commit: env!("KERNEL_LAB_GIT"),
    };
    eprintln!("tuning on {} ({}), {} s per variant and shape, seed {}", gpu.info.name, gpu.info.arch_name(), search.budget_s, search.seed);
    let mut t =
        table(&["variant", "shape", "space", "tried", "ok", "rejected", "failed", "crashed", "manifest ms", "best ms", "best", "gain"]);
    for v in &tunable {
        for shape in &shapes {
            let mut save = |rec: &store::TuneRecord| -> kernel_lab::Result<()> {
                let file = store::upsert_tuning(existing.take(), gpu.info.clone(), rec.clone());
                store::write_atomic(&path, &file)?;
                existing = Some(file);
                Ok(())
            };
            let rec = search.run(v, shape, &fam.label(shape), &mut save)?;
            let count = |s: store::CandidateStatus| rec.candidates.iter().filter(|c| c.status == s).count().to_string();
            let manifest = rec.candidates.iter().find(|c| c.config == v.config());
            let manifest_ms = manifest.and_then(|c| c.median_ms);
            t.add_row(vec![
                v.name.to_string(),
                rec.shape.clone(),
                rec.space.to_string(),
                rec.tried.to_string(),
                count(store::CandidateStatus::Ok),
                rec.rejected().to_string(),
                count(store::CandidateStatus::Failed),
                count(store::CandidateStatus::Crashed),
                manifest_ms.map(|m| format!("{m:.3}")).unwrap_or_else(|| "-".into()),
                rec.best_median_ms.map(|m| format!("{m:.3}")).unwrap_or_else(|| "-".into()),
                rec.best.as_ref().map(|c| c.label()).unwrap_or_else(|| "none verified".into()),
                // Of rates: a constant may change the declared work.
                manifest.and_then(|c| c.rate).zip(rec.best_rate).map(|(a, b)| format!("{:.2}x", b / a)).unwrap_or_else(|| "-".into()),
            ]);
        }
    }
    println!("{t}");
    for rec in existing.iter().flat_map(|f| f.tuning.iter()).filter(|r| tunable.iter().any(|v| v.name == r.variant)) {
        if let Some(map) = report::heatmap(rec, false) {
            println!("{map}");
        }
    }
    println!("tuning stored in {}; `kernel-lab bench` runs each best configuration as <variant>@tuned", path.display());
    Ok(ExitCode::SUCCESS)
}

fn tune_candidate(variant: &str, size: &str, config: &str, seed: u64, ordinal: usize, full: bool) -> Result<ExitCode> {
    let spec = registry::by_name(variant).with_context(|| format!("no variant {variant}"))?;
    let fam = families::get(spec.family).context("no such family")?;
    let shape = fam.parse_size(size).map_err(LabError::Usage)?;
    let config: registry::Config = serde_json::from_str(config).context("--config is not a configuration")?;
    let mut gpu = Gpu::open(ordinal)?;
    let policy = if full { Policy::full() } else { Policy::quick() };
    let c = tune::evaluate(&mut gpu, spec, &shape, &config, seed, &policy)?;
    println!("{}", serde_json::to_string(&c)?);
    Ok(ExitCode::SUCCESS)
}

fn transfers(sizes: &[String], dir: &Path, ordinal: usize) -> Result<ExitCode> {
    let sizes: Vec<u64> = if sizes.is_empty() {
        kernel_lab::transfers::default_sizes()
    } else {
        sizes.iter().map(|s| families::parse_count(s, "--size").map_err(LabError::Usage)).collect::<Result<_, _>>()?
    };
    let mut gpu = Gpu::open(ordinal)?;
    let path = store::path_for(dir, &gpu.info);
    let existing = store::load_existing(&path).context("the results file was left as it is; move it aside to start a new one")?;
    eprintln!("host transfers on {} ({})", gpu.info.name, gpu.info.arch_name());
    let t = kernel_lab::transfers::measure(&mut gpu, &sizes, env!("KERNEL_LAB_GIT"))?;
    print!("{}", report::transfers_table(&t, false));
    let file = store::with_transfers(existing, gpu.info.clone(), t);
    store::write_atomic(&path, &file)?;
    println!("results: {}", path.display());
    Ok(ExitCode::SUCCESS)
}
