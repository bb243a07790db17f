//! `kernel-lab advise`: which GPU of the spec sheet for a workload, from measurements. A step's
//! GEMMs are priced on every GPU at the sheet's attainable bound (min(peak, intensity ×
//! bandwidth)), then scaled by an efficiency: the share of that bound the vendor's GEMM reached
//! where the lab measured it (on the workload's own shapes where it has them, else on every
//! shape of the precision's family), the spread of those shares carried into a range. The
//! step's element-wise passes are priced at the sheet's bandwidth times the share of it
//! cudaMemcpy reached, its layer norms at the share the layernorm family's best rung reached
//! (their backward passes at the layernorm_bwd family's): `bandwidth` reads those shares.
//! GPUs the lab measured use their own efficiencies; the others the measured GPUs' together,
//! and say so. A network's convolutions, where the lab measured cuDNN on them, are priced shape
//! by shape instead (`convs`). A network's step also pays a gap after each launch, its kernels
//! and the libraries' memsets counted and each gap priced at the launch cost the GPU measured
//! (`launches`).

pub mod against;
mod bandwidth;
mod convs;
mod launches;
mod memory;
mod resnet;
pub mod workload;

use crate::facts::family::FamilyId;
use serde::Serialize;

use crate::store::View;
use crate::facts::sheet::{self, Gpu};
use crate::schema::entry::{Entry, Kind, Status};
use crate::schema::multi::Collective;
use crate::schema::transfers::Pcie;
pub use launches::Launches;
pub use workload::{Mode, Precision, Workload};

/// What the user asks.
#[derive(Debug, Clone)]
pub struct Request {
    pub workload: Workload,
    /// Training or inference.
    pub mode: Mode,
    pub precision: Precision,
    pub batch: u64,
    pub budget_usd: Option<f64>,
    pub power_w: Option<f64>,
    /// GPUs in data parallel, each running `batch`: a step adds the all-reduce of the gradients.
    pub gpus: u64,
}

/// Shares of the sheet's bound the vendor's GEMM reached: median, lowest, highest, and how many.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Efficiency {
    pub median: f64,
    pub low: f64,
    pub high: f64,
    pub entries: usize,
}

impl Efficiency {
    fn of(mut v: Vec<f64>) -> Option<Efficiency> {
        v.retain(|x| x.is_finite() && *x > 0.0);
        v.sort_by(f64::total_cmp);
        Some(Efficiency { median: *v.get(v.len() / 2)?, low: v[0], high: v[v.len() - 1], entries: v.len() })
    }
}

/// One GPU of the sheet, priced.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub gpu: &'static str,
    /// "measured here" or "predicted from N measured GPUs".
    pub basis: String,
    /// The step's GEMMs and passes at the sheet's bound, ms (no launch gaps or all-reduce).
    pub bound_ms: f64,
    /// Of the predicted step, the GEMMs (a network's convolutions among them), ms.
    pub gemm_ms: f64,
    /// Of the predicted step, the element-wise passes at memory speed, ms.
    pub stream_ms: f64,
    /// What a network's step launches, its kernels and the libraries' memsets (None for a
    /// single GEMM).
    pub launches: Option<Launches>,
    /// Of the predicted step, the gaps between its launches, ms (None for a single GEMM, or where
    /// no GPU measured a launch's cost).
    pub gaps_ms: Option<f64>,
    /// Of the predicted step, the gradients' all-reduce across `gpus`, ms, and the bus
    /// bandwidth it was priced at (measured by NCCL, or the sheet's link, said which).
    pub allreduce_ms: f64,
    pub link: Option<String>,
    /// The predicted step, ms, and its range: the GEMMs over their efficiency's spread, the
    /// element-wise passes up to the slowest streaming rung's share, the gaps down to a graph's.
    pub step_ms: f64,
    pub step_ms_range: (f64, f64),
    /// Batches of `batch` a second, all GPUs together (a step runs one on each), and the same
    /// per $1000 of their launch prices and per W of their TDPs.
    pub steps_per_s: f64,
    pub per_1000_usd: Option<f64>,
    pub per_w: f64,
    pub memory_gb: Option<f64>,
    /// For a single GEMM, its rate at the predicted time.
    pub tflops: Option<f64>,
    /// The launch price and board power of all the GPUs a step runs on.
    pub usd: Option<f64>,
    pub tdp_w: f64,
    /// The share of the sheet's bound the prediction's GEMMs assume; None where nothing was
    /// measured (they are priced at the bound itself).
    pub efficiency: Option<Efficiency>,
    /// Why it is left out of the ranking (budget, power, memory), if it is.
    pub excluded: Option<String>,
}

/// The vendor's GEMMs in `family` measured in `view`, as shares of the sheet's bound on that
/// GPU: those of the workload's own shapes where there are some, else those comparable to them
/// (every dimension a multiple of 8, as the workload's are, and FLOPs within a factor of 4 of
/// its GEMMs': a 1024³ call or a misaligned 4095³ one says little about a 16384x768x3072 one).
fn shares(view: &View, gpu: &Gpu, req: &Request, family: FamilyId) -> Vec<f64> {
    let p = req.precision.sheet();
    let ok =
        |e: &&Entry| FamilyId::parse(&e.family) == Some(family) && e.kind == Kind::Baseline && e.status == Status::Ok && e.rate.is_some();
    let share = |e: &Entry| {
        let w = workload::work(&crate::measure::families::Shape(e.dims.clone()), req.precision);
        Some(e.rate? / gpu.bound(p, w.flops / (w.bytes_read + w.bytes_written))?)
    };
    let gemms = req.workload.gemms(req.batch, req.mode);
    let own: Vec<f64> = view.entries.iter().filter(ok).filter(|e| gemms.iter().any(|(s, _)| s.0 == e.dims)).filter_map(share).collect();
    if !own.is_empty() {
        return own;
    }
    let flops = |d: &[u64]| 2.0 * d.iter().map(|&x| x as f64).product::<f64>();
    let (lo, hi) = gemms.iter().map(|(s, _)| flops(&s.0)).fold((f64::INFINITY, 0.0f64), |(a, b), f| (a.min(f), b.max(f)));
    let comparable = |e: &&Entry| e.dims.iter().all(|d| d % 8 == 0) && flops(&e.dims) >= lo / 4.0 && flops(&e.dims) <= hi * 4.0;
    view.entries.iter().filter(ok).filter(comparable).filter_map(share).collect()
}

/// Every GPU of the sheet priced for `req`, fastest first, those a constraint rules out last.
pub fn advise(req: &Request, views: &[View]) -> Vec<Row> {
    let p = req.precision.sheet();
    let gemms = req.workload.gemms(req.batch, req.mode);
    // Per sheet GPU, the shares of every view of it (runs kept in other folders are the same GPU).
    let mut by_gpu: Vec<(&'static Gpu, Vec<f64>)> = Vec::new();
    for v in views {
        let Some(gpu) = sheet::for_device(&v.device.name, v.device.sms) else { continue };
        let s = shares(v, gpu, req, req.precision.family());
        match by_gpu.iter_mut().find(|(g, _)| g.name == gpu.name) {
            Some((_, all)) => all.extend(s),
            None => by_gpu.push((gpu, s)),
        }
    }
    let measured: Vec<(&'static Gpu, Efficiency)> = by_gpu.into_iter().filter_map(|(g, s)| Some((g, Efficiency::of(s)?))).collect();
    let copies = bandwidth::copy_shares(views);
    let copy = |gpu: &Gpu| copies.iter().find(|(g, _)| g.name == gpu.name).or(copies.first()).map_or((1.0, 1.0), |c| c.1);
    let copy_share = |gpu: &Gpu| copy(gpu).0;
    let stream_bytes = req.workload.stream_bytes(req.batch, req.precision, req.mode).unwrap_or(0.0);
    // The layer norms at the share of the sheet's bandwidth the layernorm family's best rung
    // reached on the step's own matrix (else on any), per measured GPU; the copy's where none.
    // Their backward passes at the layernorm_bwd family's, else at the forward's.
    let norms = req.workload.norms(req.batch, req.mode);
    let dims = norms.map(|n| n.dims);
    let (forward, backward) = (bandwidth::best_shares(views, FamilyId::LayerNorm, dims), bandwidth::best_shares(views, FamilyId::LayerNormBwd, dims));
    // A GPU's own share; `or_first`: else the first measured GPU's.
    let own = |shares: &[(&'static Gpu, f64)], gpu: &Gpu| shares.iter().find(|(g, _)| g.name == gpu.name).map(|s| s.1);
    let or_first = |shares: &[(&'static Gpu, f64)], gpu: &Gpu| own(shares, gpu).or(shares.first().map(|s| s.1));
    let norm_share = |gpu: &Gpu| or_first(&forward, gpu).unwrap_or_else(|| copy_share(gpu));
    // A measured GPU's own forward share before another GPU's backward share.
    let norm_bwd_share = |gpu: &Gpu| {
        own(&backward, gpu).or_else(|| own(&forward, gpu)).or_else(|| backward.first().map(|s| s.1)).unwrap_or_else(|| norm_share(gpu))
    };
    let (norm_fwd_bytes, norm_bwd_bytes) = norms.map_or((0.0, 0.0), |n| (n.forward, n.backward));
    // ResNet-50's batch norms at the share cuDNN's reached on each shape, else at the copy's.
    let batch_norms = req.workload.batch_norms(req.batch, req.precision, req.mode).unwrap_or_default();
    let bn_bytes: f64 = batch_norms.iter().map(|b| b.1).sum();
    let bn_shares = resnet::BnShares::new(views);
    let bn_s = |gpu: &Gpu| bn_shares.time_s(gpu, &batch_norms).unwrap_or_else(|| bn_bytes / (copy_share(gpu) * gpu.bandwidth_gbs * 1e9));
    // NCCL's all-reduce bus bandwidth at its largest message, per measured GPU.
    let nccl: Vec<(&'static Gpu, f64)> = views
        .iter()
        .filter_map(|v| {
            let gpu = sheet::for_device(&v.device.name, v.device.sms)?;
            let runs = &v.multi.as_ref()?.collectives;
            let all: Vec<_> = runs.iter().filter(|c| c.collective == Collective::AllReduce).collect();
            let top = all.iter().map(|c| c.bytes).max()?;
            Some((gpu, all.iter().filter(|c| c.bytes == top).map(|c| c.busbw_gbs).fold(0.0, f64::max)))
        })
        .collect();
    let allreduce = |gpu: &Gpu| -> (f64, Option<String>) {
        // Inference has no gradients to reduce.
        let (Some(params), true, Mode::Train) = (req.workload.parameters(), req.gpus > 1, req.mode) else { return (0.0, None) };
        let (busbw, how) = match (nccl.iter().find(|(g, _)| g.name == gpu.name), gpu.nvlink_gbs) {
            (Some((_, bw)), _) => (*bw, format!("NCCL measured {bw:.0} GB/s")),
            // The sheet's NVLink figure counts both directions.
            (None, Some(nv)) => (nv as f64 / 2.0, format!("sheet: NVLink {} GB/s each way", nv / 2)),
            (None, None) => {
                let pcie = Pcie { gen_current: gpu.pcie_gen, gen_max: gpu.pcie_gen, width_current: 16, width_max: 16 };
                let bw = pcie.theoretical_gbs().unwrap_or(f64::NAN);
                (bw, format!("sheet: no NVLink, PCIe gen{} x16 {bw:.0} GB/s", gpu.pcie_gen))
            }
        };
        let n = req.gpus as f64;
        (2.0 * (n - 1.0) / n * params * req.precision.out_bytes() / (busbw * 1e9) * 1e3, Some(how))
    };
    let pooled = Efficiency::of(measured.iter().flat_map(|(_, e)| [e.low, e.median, e.high]).collect());
    // The gaps between the step's launches: (predicted, low), ms.
    let count = launches::count(&req.workload, req.mode, req.precision);
    let launch_costs = launches::LaunchCosts::new(views);
    let gaps = |gpu: &Gpu| {
        let (k, gap) = (count?.total(), launch_costs.gap(gpu)?);
        Some((k * gap.high_us / 1e3, k * gap.low_us / 1e3))
    };
    // A network's convolutions, where the lab measured cuDNN on them, shape by shape.
    let conv_pricing = convs::ConvPricing::new(req, views);
    // The GEMMs' efficiency on `gpu` and what it stands on.
    let gemm_basis = |gpu: &Gpu| match measured.iter().find(|(g, _)| g.name == gpu.name) {
        Some((_, e)) => (Some(*e), format!("measured here ({} GEMM{})", e.entries, if e.entries == 1 { "" } else { "s" })),
        None => match pooled {
            Some(e) => {
                let n = measured.len();
                (Some(e), format!("predicted from {n} measured GPU{}", if n == 1 { "" } else { "s" }))
            }
            None => (None, "the sheet's bound (no GEMM measured in this precision near these shapes)".to_string()),
        },
    };
    let mut rows: Vec<Row> = sheet::GPUS
        .iter()
        .filter_map(|gpu| {
            // The products: the convolutions shape by shape, else the GEMMs at one efficiency.
            let (bound_s, (mid_s, low_s, high_s), eff, basis) = match conv_pricing.as_ref().map(|c| c.price(gpu, p)) {
                Some(c) => {
                    let c = c?;
                    (c.bound_s, (c.mid_s, c.low_s, c.high_s), c.efficiency, c.basis)
                }
                None => {
                    let bound_s: f64 = gemms
                        .iter()
                        .map(|(s, n)| {
                            let w = workload::work(s, req.precision);
                            Some(n * w.flops / (gpu.bound(p, w.flops / (w.bytes_read + w.bytes_written))? * 1e12))
                        })
                        .sum::<Option<f64>>()?;
                    let (eff, basis) = gemm_basis(gpu);
                    let (mid, lo, hi) = eff.map_or((1.0, 1.0, 1.0), |e| (e.median, e.low, e.high));
                    (bound_s, (bound_s / mid, bound_s / hi, bound_s / lo), eff, basis)
                }
            };
            let norm_time = norm_fwd_bytes / norm_share(gpu) + norm_bwd_bytes / norm_bwd_share(gpu);
            let stream_ms = (stream_bytes / copy_share(gpu) + norm_time) / (gpu.bandwidth_gbs * 1e9) * 1e3 + bn_s(gpu) * 1e3;
            let bound_ms = bound_s * 1e3 + (stream_bytes + norm_fwd_bytes + norm_bwd_bytes + bn_bytes) / (gpu.bandwidth_gbs * 1e9) * 1e3;
            let (allreduce_ms, link) = allreduce(gpu);
            let gaps = gaps(gpu);
            let (gaps_ms, gaps_low_ms) = gaps.unwrap_or((0.0, 0.0));
            // The element-wise passes at the slowest streaming rung's share, the range's top.
            let stream_slow_ms = stream_ms + stream_bytes / (gpu.bandwidth_gbs * 1e9) * 1e3 * (1.0 / copy(gpu).1 - 1.0 / copy_share(gpu));
            let step_ms = mid_s * 1e3 + stream_ms + allreduce_ms + gaps_ms;
            // Samples a second: a step runs `batch` on each GPU.
            let steps = 1e3 / step_ms * req.gpus as f64;
            let memory_gb = req.workload.memory_gb(req.batch, req.precision, req.mode);
            let price = gpu.price_usd.map(f64::from);
            let excluded = match (req.budget_usd, price, req.power_w, memory_gb) {
                (Some(b), None, _, _) => Some(format!("no published price (budget ${b:.0})")),
                (Some(b), Some(pr), _, _) if pr * req.gpus as f64 > b => {
                    Some(format!("{} x ${pr:.0} is over the ${b:.0} budget", req.gpus))
                }
                (_, _, Some(w), _) if (gpu.tdp_w as u64 * req.gpus) as f64 > w => {
                    Some(format!("{} x {} W is over the {w:.0} W limit", req.gpus, gpu.tdp_w))
                }
                (_, _, _, Some(m)) if m > gpu.memory_gb as f64 => Some(format!("needs {m:.0} GB, has {}", gpu.memory_gb)),
                _ => None,
            };
            Some(Row {
                gpu: gpu.name,
                basis,
                bound_ms,
                gemm_ms: mid_s * 1e3,
                stream_ms,
                launches: count,
                gaps_ms: gaps.map(|g| g.0),
                allreduce_ms,
                link,
                step_ms,
                step_ms_range: (
                    low_s * 1e3 + stream_ms + allreduce_ms + gaps_low_ms,
                    high_s * 1e3 + stream_slow_ms + allreduce_ms + gaps_ms,
                ),
                steps_per_s: steps,
                per_1000_usd: price.map(|pr| steps / (pr * req.gpus as f64) * 1e3),
                per_w: steps / (gpu.tdp_w as f64 * req.gpus as f64),
                memory_gb,
                tflops: req.workload.flops(req.batch).map(|f| f / (step_ms * 1e9)),
                usd: price.map(|pr| pr * req.gpus as f64),
                tdp_w: gpu.tdp_w as f64 * req.gpus as f64,
                efficiency: eff,
                excluded,
            })
        })
        .collect();
    // Of GPUs priced alike (the H100 and the H200 share a compute-bound GEMM's bound), the one
    // measured here first.
    let predicted = |r: &Row| !measured.iter().any(|(g, _)| g.name == r.gpu);
    rows.sort_by(|a, b| {
        a.excluded.is_some().cmp(&b.excluded.is_some()).then(a.step_ms.total_cmp(&b.step_ms)).then(predicted(a).cmp(&predicted(b)))
    });
    rows
}

/// The middle of `v` (the upper of the two middles of an even count); None where it is empty.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// A predicted time's range as the tables print it, at `decimals`: "lo-hi", or "-" where the two
/// bounds print as one number (one measured efficiency sets both, as for one GEMM).
pub fn range_text(range: (f64, f64), decimals: usize) -> String {
    let (lo, hi) = (format!("{:.*}", decimals, range.0), format!("{:.*}", decimals, range.1));
    if lo == hi {
        "-".into()
    } else {
        format!("{lo}-{hi}")
    }
}

/// The reasoning under the table: the best GPU by time, per dollar and per watt among those
/// the constraints leave, and the pairs the RTX 4090 / 4070 and 4070 Ti / V100 selection guides
/// compare.
pub fn why(req: &Request, rows: &[Row]) -> Vec<String> {
    let open: Vec<&Row> = rows.iter().filter(|r| r.excluded.is_none()).collect();
    let mut out = Vec::new();
    // The first of equals, so a tie names the row the table ranks first.
    let best = |key: &dyn Fn(&Row) -> Option<f64>| {
        open.iter()
            .copied()
            .filter_map(|r| Some((r, key(r)?)))
            .fold(None, |top: Option<(&Row, f64)>, (r, k)| match top {
                Some((_, t)) if t >= k => top,
                _ => Some((r, k)),
            })
            .map(|(r, _)| r)
    };
    // A single GEMM is a call, priced in ms and TFLOP/s; a step is priced in ms and batches/s.
    let (what, unit) = if req.workload.flops(req.batch).is_some() { ("a GEMM", "TFLOP/s") } else { ("a step", "batches/s") };
    let per = |r: &Row| r.tflops.unwrap_or(r.steps_per_s);
    if let Some(r) = best(&|r| Some(-r.step_ms)) {
        let span = match range_text(r.step_ms_range, 2) {
            s if s == "-" => String::new(),
            s => format!("{s}; "),
        };
        out.push(format!("fastest: {} at {:.2} ms {what} ({span}{:.1} {unit}; {})", r.gpu, r.step_ms, per(r), r.basis));
    }
    let per_usd = |r: &Row| r.usd.map(|usd| per(r) / usd * 1e3);
    if let Some(r) = best(&per_usd) {
        out.push(format!("most per dollar: {} at {:.2} {unit} per $1000 of launch price", r.gpu, per_usd(r).unwrap_or(0.0)));
    }
    if let Some(r) = best(&|r| Some(per(r) / r.tdp_w)) {
        out.push(format!("most per watt: {} at {:.3} {unit} per W of TDP", r.gpu, per(r) / r.tdp_w));
    }
    let find = |n: &str| rows.iter().find(|r| r.gpu == n);
    if let (Some(a), Some(b)) = (find("RTX 4090"), find("RTX 4070")) {
        out.push(format!(
            "RTX 4090 against RTX 4070, which GPU selection guides weigh against each other: {:.2}x as fast",
            b.step_ms / a.step_ms
        ));
    }
    if let (Some(a), Some(b)) = (find("RTX 4070 Ti"), find("V100 SXM2")) {
        out.push(format!("RTX 4070 Ti against V100 SXM2, likewise: {:.2}x as fast", b.step_ms / a.step_ms));
    }
    if let (true, Some(r)) = (req.gpus > 1, find("RTX 4090")) {
        out.push(format!(
            "RTX 4090 has no NVLink, whatever some GPU selection guides say: its all-reduce takes {:.1} ms of each step ({})",
            r.allreduce_ms,
            r.link.as_deref().unwrap_or("-")
        ));
    }
    if !rows.is_empty() && rows.iter().all(|r| r.efficiency.is_none()) {
        out.push(
            "the lab has measured no GEMM in this precision near these shapes: every row is the sheet's bound, not a prediction".into(),
        );
    }
    out
}
