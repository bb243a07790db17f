//! `kernel-lab advise`: the spec sheet's GPUs ranked for a workload, from the lab's measurements.

use std::path::PathBuf;

use anyhow::{bail, Result};
use kernel_lab::analysis::advise::{self, Mode, Precision, Request, Workload};
use kernel_lab::analysis::report::opt;
use kernel_lab::analysis::store::{self, Group};
use kernel_lab::error::exit;
use kernel_lab::LabError;

use crate::args::{cells_csv, formats, say, table, Format};

#[derive(clap::Args)]
pub struct AdviseArgs {
    /// bert-base, bert-base-mlm (with its MLM head and AdamW's update, the step
    /// scripts/torch_step.py times), bert-large, resnet50, or "gemm MxNxK" (a shape --size takes).
    #[arg(long, required_unless_present = "against")]
    workload: Option<String>,
    /// Steps PyTorch timed (scripts/torch_step.py's JSON lines, kept in <model>-<arch>/pytorch/):
    /// print each beside the prediction for its GPU, workload, mode and batch from --results-dir,
    /// with the error (repeatable; instead of --workload).
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
    against: Vec<PathBuf>,
    /// A training step (forward, backward, the optimizer's update) or inference (the forward
    /// pass alone), as scripts/torch_step.py --mode runs them.
    #[arg(long, value_enum, default_value = "train")]
    mode: Mode,
    /// The precision the workload's GEMMs run in.
    #[arg(long, value_enum, default_value = "fp16")]
    precision: Precision,
    /// Sequences (BERT, of 512 tokens) or images (ResNet-50) a step (default: 32, 256).
    #[arg(long)]
    batch: Option<u64>,
    /// Leave out GPUs whose launch price (times --gpu-count) is above this many US dollars.
    #[arg(long, value_name = "USD", allow_negative_numbers = true)]
    usd: Option<f64>,
    /// Leave out GPUs whose board power (TDP, times --gpu-count) is above this many watts.
    #[arg(long, value_name = "W", allow_negative_numbers = true)]
    watts: Option<f64>,
    /// GPUs in data parallel, each running --batch: a step adds the gradients' all-reduce.
    #[arg(long, value_name = "N", default_value_t = 1)]
    gpu_count: u64,
    /// Where the measurements are.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// How to print the ranking (json: the rows and the reasoning as one document).
    #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json"]))]
    format: Format,
}

fn usage(m: String) -> anyhow::Error {
    anyhow::anyhow!(LabError::Usage(m))
}

pub fn advise(a: &AdviseArgs) -> Result<u8> {
    if !a.against.is_empty() {
        return against(a);
    }
    let workload = Workload::parse(a.workload.as_deref().unwrap_or_default()).map_err(usage)?;
    for (flag, v) in [("--usd", a.usd), ("--watts", a.watts)] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
            bail!(usage(format!("{flag} must be a positive number, not {v}")));
        }
    }
    if a.batch == Some(0) {
        bail!(usage("--batch must be at least 1".into()));
    }
    if a.gpu_count == 0 {
        bail!(usage("--gpu-count must be at least 1".into()));
    }
    let precision = a.precision;
    if !a.results_dir.exists() {
        bail!(LabError::Results { path: a.results_dir.display().to_string(), msg: "cannot read: no such file or folder".into() });
    }
    let views = store::views(&store::read(std::slice::from_ref(&a.results_dir))?, Group::Model);
    let batch = a.batch.unwrap_or_else(|| workload.default_batch());
    let req = Request { batch, budget_usd: a.usd, power_w: a.watts, gpus: a.gpu_count, precision, workload, mode: a.mode };
    let rows = advise::advise(&req, &views);
    let why = advise::why(&req, &rows);
    if a.format == Format::Json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "step": req.workload.describe(batch, req.mode), "rows": rows, "why": why }))?
        );
        return Ok(exit::OK);
    }
    // A single GEMM is one call: its time and rate, none of a step's passes or all-reduce.
    let gemm = req.workload.flops(batch).is_some();
    let header: &[&str] = if gemm {
        &["rank", "GPU", "GEMM ms", "range", "TFLOP/s", "TFLOP/s per $1000", "TFLOP/s per W", "basis", "left out"]
    } else {
        &[
            "rank",
            "GPU",
            "step ms",
            "range",
            "element-wise ms",
            "gaps ms",
            "all-reduce ms",
            "batches/s",
            "per $1000",
            "per W",
            "memory GB",
            "basis",
            "left out",
        ]
    };
    let mut t = table(header, a.format);
    for (i, r) in rows.iter().enumerate() {
        let rank = if r.excluded.is_none() { (i + 1).to_string() } else { "-".into() };
        let (time, range) = (format!("{:.3}", r.step_ms), advise::range_text(r.step_ms_range, 3));
        let cells = match r.tflops {
            Some(tf) if gemm => vec![
                rank,
                r.gpu.to_string(),
                time,
                range,
                format!("{tf:.1}"),
                opt(r.usd, |usd| format!("{:.2}", tf / usd * 1e3)),
                format!("{:.3}", tf / r.tdp_w),
            ],
            _ => vec![
                rank,
                r.gpu.to_string(),
                format!("{:.2}", r.step_ms),
                advise::range_text(r.step_ms_range, 2),
                format!("{:.2}", r.stream_ms),
                match (r.gaps_ms, r.launches) {
                    (Some(g), Some(n)) => format!("{g:.2} ({:.0} launches)", n.total()),
                    (None, Some(n)) => format!("- ({:.0} launches)", n.total()),
                    _ => "-".into(),
                },
                r.link.as_ref().map_or("-".into(), |l| format!("{:.2} ({l})", r.allreduce_ms)),
                format!("{:.1}", r.steps_per_s),
                opt(r.per_1000_usd, |v| format!("{v:.2}")),
                format!("{:.3}", r.per_w),
                opt(r.memory_gb, |m| format!("{m:.1}")),
            ],
        };
        t.add_row([cells, vec![r.basis.clone(), r.excluded.clone().unwrap_or_default()]].concat());
    }
    let on = if req.gpus > 1 { format!(" on each of {} GPUs", req.gpus) } else { String::new() };
    let title =
        format!("{}{on} in {}, ranked by predicted time", req.workload.describe(batch, req.mode), format!("{precision:?}").to_lowercase());
    if a.format == Format::Csv {
        say(a.format, &title)?;
        out!("{}", cells_csv(&t));
    } else {
        outln!("{title}\n{t}");
    }
    for w in why {
        say(a.format, &format!("- {w}"))?;
    }
    Ok(exit::OK)
}

/// `--against`: PyTorch's steps beside the predictions for them.
fn against(a: &AdviseArgs) -> Result<u8> {
    let mut steps = Vec::new();
    for f in &a.against {
        steps.extend(advise::against::read(f)?);
    }
    if !a.results_dir.exists() {
        bail!(LabError::Results { path: a.results_dir.display().to_string(), msg: "cannot read: no such file or folder".into() });
    }
    let views = store::views(&store::read(std::slice::from_ref(&a.results_dir))?, Group::Model);
    let checks = advise::against::check(&steps, &views).map_err(usage)?;
    if a.format == Format::Json {
        outln!("{}", serde_json::to_string_pretty(&checks)?);
        return Ok(exit::OK);
    }
    let header = [
        "GPU",
        "workload",
        "mode",
        "batch",
        "PyTorch ms",
        "predicted ms",
        "range",
        "error",
        "range ±",
        "inside",
        "memory GB (PyTorch)",
        "host ms",
        "launches: model / PyTorch (gap each)",
        "basis",
    ];
    let mut t = table(&header, a.format);
    for c in &checks {
        t.add_row(vec![
            c.gpu.to_string(),
            c.workload.clone(),
            format!("{:?}", c.mode).to_lowercase(),
            c.batch.to_string(),
            format!("{:.2}", c.pytorch_ms),
            format!("{:.2}", c.predicted_ms),
            advise::range_text(c.range_ms, 2),
            format!("{:+.1}%", 100.0 * c.error),
            format!("{:.1}%", 100.0 * c.range_share),
            if c.inside { "yes" } else { "no" }.to_string(),
            format!("{} ({:.2})", opt(c.predicted_gb, |g| format!("{g:.2}")), c.pytorch_gb),
            opt(c.host_ms, |h| format!("{h:.2}")),
            format!(
                "{} / {}",
                opt(c.predicted_launches, |n| format!("{:.0} + {:.0}", n.kernels, n.memsets)),
                // Without the memsets counted the gap is a kernel's, and says so.
                opt(c.kernels, |k| {
                    let each = if c.memsets.is_some() { "a launch" } else { "a kernel" };
                    format!("{k} + {} ({})", opt(c.memsets, |m| m.to_string()), opt(c.gap_us(), |g| format!("{g:.2} us {each}")))
                })
            ),
            c.basis.clone(),
        ]);
    }
    let title = format!(
        "PyTorch's steps (fp16 autocast) beside advise's predictions from {}; host ms: the CPU's time to issue the step's kernels, below which it cannot run; launches: kernels + the libraries' memsets, those the model counts and those the profiled step launched (older profiles count no memsets), with the timed step's launch gaps a launch",
        a.results_dir.display()
    );
    // The same steps by part: the model's against PyTorch's (the kernels' categories from one
    // profiled step, the gaps from the timed median).
    let mut parts = table(&["GPU", "workload", "mode", "part", "predicted ms", "PyTorch ms"], a.format);
    for c in &checks {
        for (part, ms, measured) in &c.parts {
            let cells = [c.gpu.to_string(), c.workload.clone(), format!("{:?}", c.mode).to_lowercase(), part.to_string()];
            parts.add_row([cells.to_vec(), vec![format!("{ms:.2}"), opt(*measured, |m| format!("{m:.2}"))]].concat());
        }
    }
    let parts_title = "The same steps by part: the model's GEMMs (ResNet-50's convolutions and attention among them) and memory-bound passes (element-wise, normalisation, the optimizer), against torch.profiler's categories in one profiled step, and the launch gaps, the launches counted times the measured launch cost, against the timed step's median less the time kernels ran in the profiled one";
    for (title, t) in [(title.as_str(), &t), (parts_title, &parts)] {
        if a.format == Format::Csv {
            say(a.format, title)?;
            out!("{}", cells_csv(t));
        } else {
            outln!("{title}\n{t}");
        }
    }
    Ok(exit::OK)
}
