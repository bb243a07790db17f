//! `kernel-lab advise`: the spec sheet's GPUs ranked for a workload, from the lab's measurements.

use std::path::PathBuf;

use anyhow::{bail, Result};
use kernel_lab::analysis::advise::{self, Precision, Request, Workload};
use kernel_lab::analysis::report::{new_table, opt};
use kernel_lab::analysis::store::{self, Group};
use kernel_lab::error::exit;
use kernel_lab::LabError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AdviseFormat {
    Table,
    Markdown,
    Json,
}

#[derive(clap::Args)]
pub struct AdviseArgs {
    /// bert-base, bert-large, resnet50, or "gemm MxNxK".
    #[arg(long)]
    workload: String,
    #[arg(long, value_enum, default_value = "fp16")]
    precision: Precision,
    /// Sequences (BERT, of 512 tokens) or images (ResNet-50) a step (default: 32, 256).
    #[arg(long)]
    batch: Option<u64>,
    /// Leave out GPUs whose launch price is above this, US dollars.
    #[arg(long, allow_negative_numbers = true)]
    budget: Option<f64>,
    /// Leave out GPUs whose board power (TDP) is above this, W.
    #[arg(long, allow_negative_numbers = true)]
    power: Option<f64>,
    /// GPUs in data parallel, each running --batch: a step adds the gradients' all-reduce.
    #[arg(long, default_value_t = 1)]
    gpus: u64,
    /// Where the measurements are.
    #[arg(long, default_value = "results")]
    results: PathBuf,
    #[arg(long, value_enum, default_value = "table")]
    format: AdviseFormat,
}

fn usage(m: String) -> anyhow::Error {
    anyhow::anyhow!(LabError::Usage(m))
}

pub fn advise(a: &AdviseArgs) -> Result<u8> {
    let workload = Workload::parse(&a.workload).map_err(usage)?;
    for (flag, v) in [("--budget", a.budget), ("--power", a.power)] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
            bail!(usage(format!("{flag} must be a positive number, not {v}")));
        }
    }
    if a.batch == Some(0) || a.gpus == 0 {
        bail!(usage(format!("--batch and --gpus must be at least 1 (got {:?} and {})", a.batch, a.gpus)));
    }
    let precision = a.precision;
    if !a.results.exists() {
        bail!(LabError::Results { path: a.results.display().to_string(), msg: "cannot read: no such file or folder".into() });
    }
    let views = store::views(&store::read(std::slice::from_ref(&a.results))?, Group::Model);
    let batch = a.batch.unwrap_or_else(|| workload.default_batch());
    let req = Request { batch, budget_usd: a.budget, power_w: a.power, gpus: a.gpus, precision, workload };
    let rows = advise::advise(&req, &views);
    let why = advise::why(&req, &rows);
    if a.format == AdviseFormat::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "step": req.workload.describe(batch), "rows": rows, "why": why }))?
        );
        return Ok(exit::OK);
    }
    let header = [
        "rank",
        "GPU",
        "step ms",
        "range",
        "element-wise ms",
        "all-reduce ms",
        "batches/s",
        "per $1000",
        "per W",
        "memory GB",
        "basis",
        "left out",
    ];
    let mut t = new_table(header.map(String::from).to_vec(), a.format == AdviseFormat::Markdown);
    for (i, r) in rows.iter().enumerate() {
        t.add_row(vec![
            if r.excluded.is_none() { (i + 1).to_string() } else { "-".into() },
            r.gpu.to_string(),
            format!("{:.2}", r.step_ms),
            format!("{:.2}-{:.2}", r.step_ms_range.0, r.step_ms_range.1),
            format!("{:.2}", r.stream_ms),
            r.link.as_ref().map_or("-".into(), |l| format!("{:.2} ({l})", r.allreduce_ms)),
            format!("{:.1}", r.steps_per_s),
            opt(r.per_1000_usd, |v| format!("{v:.2}")),
            format!("{:.3}", r.per_w),
            opt(r.memory_gb, |m| format!("{m:.1}")),
            r.basis.clone(),
            r.excluded.clone().unwrap_or_default(),
        ]);
    }
    let on = if req.gpus > 1 { format!(" on each of {} GPUs", req.gpus) } else { String::new() };
    println!("{}{on} in {}, ranked by predicted time\n{t}", req.workload.describe(batch), format!("{precision:?}").to_lowercase());
    for w in why {
        println!("- {w}");
    }
    Ok(exit::OK)
}
