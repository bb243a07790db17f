//! The measurements that are not a bench: the tuner (and its candidates), host transfers, and
//! several GPUs. Each stores a run of its own.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use kernel_lab::analysis::report::{new_table, run::heatmap, sections};
use kernel_lab::analysis::store::{self, Recorder};
use kernel_lab::analysis::tune_run;
use kernel_lab::error::exit;
use kernel_lab::gpu::device::{self, Gpu};
use kernel_lab::gpu::registry;
use kernel_lab::measure::families::{self, shapes::parse_count};
use kernel_lab::measure::{multi, transfers, tune};
use kernel_lab::schema::run::{Policy, Record, RunKind};
use kernel_lab::schema::tuning::CandidateStatus;
use kernel_lab::LabError;

use crate::args::{formats, Format};

fn usage(msg: String) -> anyhow::Error {
    anyhow::anyhow!(LabError::Usage(msg))
}

/// Byte counts with K/M/G; the default when none are given.
fn byte_sizes(texts: &[String], default: Vec<u64>) -> Result<Vec<u64>> {
    if texts.is_empty() {
        return Ok(default);
    }
    crate::args::sizes(texts)?.iter().map(|s| parse_count(s, "--size").map_err(usage)).collect()
}

#[derive(clap::Args)]
pub struct TuneArgs {
    /// The family whose variants are tuned, e.g. sgemm.
    family: String,
    /// A variant of the family (its whole name picks it alone), or part of variant names.
    filter: Option<String>,
    /// Shapes to tune at (default: the family's largest quick size).
    #[arg(long = "size", value_delimiter = ',')]
    sizes: Vec<String>,
    /// Named shape sets to tune at, each shape for itself (sgemm: square, odd, bert, resnet).
    #[arg(long = "suite", value_delimiter = ',')]
    suites: Vec<String>,
    /// Seconds of search in all, shared by the variants and shapes (the head-to-head included).
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    time_budget: f64,
    /// Finalists re-timed head to head.
    #[arg(long, default_value_t = 3)]
    top: usize,
    /// Folder of the results: the tuning is stored there, and earlier ones are read from it.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// Seed of the search and of its inputs (default: drawn from the clock, and printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Which GPU, its index (one).
    #[arg(long = "gpus", value_name = "INDEX", default_value = "0", value_parser = crate::args::one_gpu)]
    gpu: usize,
    /// Search only these values of a constant, NAME=V[,V..] (repeatable): they replace its tune
    /// list, or fix a define the manifest does not tune.
    #[arg(long = "only")]
    only: Vec<String>,
    /// How the next candidate is picked: random (uniform, no repeats), genetic (bred from the
    /// best so far, their neighbours first) or bayes (a Gaussian process's greatest expected
    /// improvement); seeded by --seed.
    #[arg(long, default_value = "random")]
    strategy: String,
    /// Measure every candidate again: ignore the candidates earlier searches of this GPU model
    /// stored (the cache), and the seed of an unfinished search with the same arguments.
    #[arg(long)]
    fresh: bool,
    /// Measure nothing (no GPU needed): replay each strategy with SEEDS seeds on the candidates
    /// earlier searches stored in --results-dir (one GPU model's folder; a search that tried
    /// the whole space makes the fairest ground), and print how many evaluations each took to
    /// reach the best stored configuration, and to come within 2% of it.
    #[arg(long, value_name = "SEEDS")]
    simulate: Option<u64>,
}

pub fn tune(a: &TuneArgs) -> Result<u8> {
    let req = tune_run::Request {
        family: a.family.clone(),
        filter: a.filter.clone(),
        sizes: a.sizes.clone(),
        suites: a.suites.clone(),
        time_budget: a.time_budget,
        top: a.top,
        results_dir: a.results_dir.clone(),
        seed: a.seed,
        gpu: a.gpu,
        only: a.only.clone(),
        strategy: a.strategy.clone(),
        fresh: a.fresh,
        command: std::env::args().collect(),
    };
    let sel = req.select()?;
    if let Some(seeds) = a.simulate {
        return crate::simulate::simulate(&a.results_dir, sel.family, &sel.variants, &sel.shapes, seeds);
    }
    let mut t = new_table(
        ["variant", "shape", "space", "tried", "ok", "rejected", "failed", "crashed", "manifest ms", "best ms", "best", "gain", "timed in"]
            .map(String::from)
            .to_vec(),
        false,
    );
    let mut maps = Vec::new();
    let note = &mut |n: tune_run::Note| match n {
        tune_run::Note::Resumed(path) => {
            eprintln!("taking up the unfinished search with these arguments in {}; --fresh starts over", path.display())
        }
        tune_run::Note::Started { gpu, arch, budget_s, strategy, seed } => {
            eprintln!("tuning on {gpu} ({arch}), {budget_s} s per variant and shape, {strategy} search, seed {seed}")
        }
    };
    let path = tune_run::run(&req, &sel, note, &mut |v, rec| {
        let count = |s: CandidateStatus| rec.candidates.iter().filter(|c| c.status == s).count().to_string();
        let gain = rec.gain_over(&v.config());
        let ms = |m: Option<f64>| m.map(|m| format!("{m:.3}")).unwrap_or_else(|| "-".into());
        t.add_row(vec![
            v.name.clone(),
            rec.shape.clone(),
            rec.space.to_string(),
            rec.tried.to_string(),
            count(CandidateStatus::Ok),
            rec.rejected().to_string(),
            count(CandidateStatus::Failed),
            count(CandidateStatus::Crashed),
            ms(gain.map(|g| g.manifest_ms)),
            ms(gain.map(|g| g.best_ms).or(rec.best_median_ms)),
            rec.best.as_ref().map(|c| c.label()).unwrap_or_else(|| "none verified".into()),
            gain.map(|g| format!("{:.2}x", g.gain)).unwrap_or_else(|| "-".into()),
            gain.map(|g| if g.head_to_head { "head-to-head" } else { "search pass" }).unwrap_or("-").into(),
        ]);
        maps.extend(heatmap(rec, false));
    })?;
    outln!("{t}");
    for m in maps {
        outln!("{m}");
    }
    if let Some(path) = path {
        outln!("tuning stored in {}; `kernel-lab bench` runs each best configuration as <variant>@tuned", path.display());
    }
    Ok(exit::OK)
}

#[derive(clap::Args)]
pub struct CandidateArgs {
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
}

pub fn candidate(a: &CandidateArgs) -> Result<u8> {
    let spec = registry::by_name(&a.variant)?;
    let fam = families::of(spec)?;
    let shape = fam.info().shapes.parse(&a.size).map_err(usage)?;
    let config: registry::Config = serde_json::from_str(&a.config).context("--config is not a configuration")?;
    let mut gpu = Gpu::open(a.gpu)?;
    let policy = if a.full { Policy::full() } else { Policy::quick() };
    let c = tune::evaluate(&mut gpu, spec, &shape, &config, a.seed, &policy)?;
    outln!("{}", serde_json::to_string(&c)?);
    Ok(exit::OK)
}

#[derive(clap::Args)]
pub struct TransfersArgs {
    /// Transfer sizes in bytes, with K/M/G, a list or START:END:STEP ranges (default 4K to 1G).
    #[arg(long = "size", value_delimiter = ',')]
    sizes: Vec<String>,
    /// Folder of the results, one folder per GPU model inside.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// Which GPU, its index (one).
    #[arg(long = "gpus", value_name = "INDEX", default_value = "0", value_parser = crate::args::one_gpu)]
    gpu: usize,
    /// How to print the tables.
    #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown"]))]
    format: Format,
}

pub fn transfers(a: &TransfersArgs) -> Result<u8> {
    let sizes = byte_sizes(&a.sizes, transfers::default_sizes())?;
    let mut gpu = Gpu::open(a.gpu)?;
    eprintln!("host transfers on {} ({})", gpu.info.name, gpu.info.arch_name());
    let t = transfers::measure(&mut gpu, &sizes, store::PROGRAM_COMMIT)?;
    let text = sections::transfers_table(&t, a.format.markdown());
    let mut recorder = Recorder::new(&a.results_dir, store::new_header(RunKind::Transfers, &gpu.info, None, None, None));
    recorder.append(Record::Transfers(Box::new(t)))?;
    let path = recorder.finish(Vec::new())?;
    out!("{text}");
    if let Some(path) = path {
        outln!("results: {}", path.display());
    }
    Ok(exit::OK)
}

#[derive(clap::Args)]
pub struct MultiArgs {
    /// Which GPUs, their indices, e.g. 0,1 (default: all the driver sees).
    #[arg(long, value_name = "INDICES", value_delimiter = ',')]
    gpus: Vec<usize>,
    /// Peer copy sizes in bytes, with K/M/G, a list or START:END:STEP ranges (default 4K to 1G).
    #[arg(long = "size", value_delimiter = ',')]
    sizes: Vec<String>,
    /// Largest collective, bytes with K/M/G (default 1G; sizes run from 8 B up by 4x).
    #[arg(long, default_value = "1G")]
    max_collective: String,
    /// Folder of the results, one folder per GPU model inside.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// How to print the tables.
    #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown"]))]
    format: Format,
}

pub fn multi(a: &MultiArgs) -> Result<u8> {
    let copy_sizes = byte_sizes(&a.sizes, transfers::default_sizes())?;
    let max = parse_count(&a.max_collective, "--max-collective").map_err(usage)?;
    // 8 B up by 4x, and the largest itself (1 GiB is not 8 x a power of 4).
    let mut collective_sizes: Vec<u64> = std::iter::successors(Some(8u64), |s| Some(s * 4)).take_while(|&s| s <= max).collect();
    if collective_sizes.last() != Some(&max) {
        collective_sizes.push(max);
    }
    let ordinals: Vec<usize> = if a.gpus.is_empty() { (0..device::list()?.len()).collect() } else { a.gpus.clone() };
    if ordinals.len() < 2 {
        let n = ordinals.len();
        bail!(usage(format!("the multi family needs 2 or more GPUs; {n} {} available", if n == 1 { "is" } else { "are" })));
    }
    let mut gpus = ordinals.iter().map(|&o| Gpu::open(o)).collect::<Result<Vec<_>, _>>()?;
    eprintln!("several GPUs: {}", gpus.iter().map(|g| format!("{} ({})", g.info.name, g.info.ordinal)).collect::<Vec<_>>().join(", "));
    let m = multi::measure(&mut gpus, &copy_sizes, &collective_sizes)?;
    let text = sections::multi_tables(&m, a.format.markdown());
    let mut recorder = Recorder::new(&a.results_dir, store::new_header(RunKind::Multi, &gpus[0].info, None, None, None));
    recorder.append(Record::Multi(Box::new(m)))?;
    let path = recorder.finish(Vec::new())?;
    out!("{text}");
    if let Some(path) = path {
        outln!("results: {}", path.display());
    }
    Ok(exit::OK)
}
