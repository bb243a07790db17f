//! The arithmetic `advise` prices a GPU with, against values worked out here from the sheet: the
//! efficiencies measured GEMMs give (which entries count, median and spread, a GPU measured in
//! two folders, the pool the unmeasured GPUs take), the element-wise passes at the measured copy
//! speed, the all-reduce over NCCL's, NVLink's or PCIe's bandwidth, the constraints' edges, the
//! per-dollar and per-watt figures, the reasoning lines, and a network's convolutions priced shape
//! by shape at cuDNN's measured share on each.

mod common;

use std::path::PathBuf;

use kernel_lab::analysis::advise::{self, workload, Mode, Precision, Request, Row, Workload};
use kernel_lab::analysis::store::View;
use kernel_lab::facts::sheet::{self, Gpu};
use kernel_lab::measure::families::conv_shape::{ConvShape, Pass};
use kernel_lab::measure::families::Shape;
use kernel_lab::schema::device::DeviceInfo;
use kernel_lab::schema::entry::{Entry, Kind, Status};
use kernel_lab::schema::multi::{Collective, CollectiveRun, MultiResults};
use kernel_lab::schema::stats::Summary;
use kernel_lab::schema::transfers::{Launches, Pcie, Transfers};

const H100: (&str, u32) = ("NVIDIA H100 80GB HBM3", 132);
const A100: (&str, u32) = ("NVIDIA A100-SXM4-80GB", 108);

fn gpu(name: &str) -> &'static Gpu {
    sheet::find(name).unwrap()
}

fn view(device: (&str, u32), entries: Vec<Entry>, multi: Option<MultiResults>) -> View {
    View {
        label: device.0.into(),
        source: PathBuf::from("results"),
        device: DeviceInfo {
            ordinal: 0,
            name: device.0.into(),
            cc_major: 9,
            cc_minor: 0,
            sms: device.1,
            l2_bytes: 50 << 20,
            smem_per_block_optin: 232448,
            smem_per_sm: 233472,
            total_mem_bytes: 80_000_000_000,
            sm_clock_khz: 1_980_000,
            mem_clock_khz: 2_619_000,
            bus_width_bits: 5120,
            driver: "13.0".into(),
            uuid: None,
            host: None,
        },
        runs: Vec::new(),
        cards: Vec::new(),
        entry_runs: vec![0; entries.len()],
        entries,
        tuning: Vec::new(),
        transfers: None,
        multi,
        notes: Vec::new(),
    }
}

fn entry(family: &str, kind: Kind, status: Status, dims: &[u64], rate: Option<f64>) -> Entry {
    let mut e = common::sgemm_entry("vendor", 1024, 1.0);
    e.family = family.into();
    e.kind = kind;
    e.status = status;
    e.dims = dims.to_vec();
    e.shape = dims.iter().map(u64::to_string).collect::<Vec<_>>().join("x");
    e.rate = rate;
    e
}

/// The fp16 bound of one GEMM on `g`, TFLOP/s, from its intensity.
fn bound(g: &Gpu, dims: &[u64], p: Precision) -> f64 {
    let w = workload::work(&Shape(dims.to_vec()), p);
    g.bound(p.sheet(), w.flops / (w.bytes_read + w.bytes_written)).unwrap()
}

/// The vendor's fp16 GEMM at `dims` on `device`, reaching `share` of the sheet's bound.
fn vendor(device: (&str, u32), dims: &[u64], share: f64) -> Entry {
    let g = sheet::for_device(device.0, device.1).unwrap();
    entry("fp16", Kind::Baseline, Status::Ok, dims, Some(share * bound(g, dims, Precision::Fp16)))
}

fn request(workload: Workload, precision: Precision, gpus: u64) -> Request {
    let batch = workload.default_batch();
    Request { workload, mode: Mode::Train, precision, batch, budget_usd: None, power_w: None, gpus }
}

fn row<'a>(rows: &'a [Row], name: &str) -> &'a Row {
    rows.iter().find(|r| r.gpu == name).unwrap_or_else(|| panic!("no row {name}"))
}

fn close(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < 1e-9
}

/// The step of `req` on `g` at the sheet's bound: its GEMMs, ms (no element-wise passes).
fn gemm_ms(req: &Request, g: &Gpu) -> f64 {
    let p = req.precision;
    req.workload.gemms(req.batch, req.mode).iter().map(|(s, n)| n * workload::work(s, p).flops / (bound(g, &s.0, p) * 1e12) * 1e3).sum()
}

const N: [u64; 3] = [8192, 8192, 8192];

#[test]
fn a_measured_gpu_is_priced_at_the_median_of_its_own_shares_and_the_others_at_the_pool() {
    let req = request(Workload::Gemm(Shape(N.to_vec())), Precision::Fp16, 1);
    let decoys = |d: (&str, u32)| {
        let g = sheet::for_device(d.0, d.1).unwrap();
        let fast = Some(10.0 * bound(g, &N, Precision::Fp16));
        vec![
            // Not the vendor's, not ok, another precision's family, no rate, no share at all:
            // none of them counts.
            entry("fp16", Kind::Variant, Status::Ok, &N, fast),
            entry("fp16", Kind::Baseline, Status::Failed, &N, fast),
            entry("sgemm", Kind::Baseline, Status::Ok, &N, fast),
            entry("fp16", Kind::Baseline, Status::Ok, &N, None),
            entry("fp16", Kind::Baseline, Status::Ok, &N, Some(0.0)),
            // Another shape: only the workload's own count while there are some.
            vendor(d, &[6144, 6144, 6144], 0.05),
        ]
    };
    // The H100 measured in two results folders: one GPU, its shares together.
    let h1 = view(H100, [vec![vendor(H100, &N, 0.8), vendor(H100, &N, 0.5)], decoys(H100)].concat(), None);
    let h2 = view(H100, vec![vendor(H100, &N, 0.6), vendor(H100, &N, 0.7)], None);
    let a = view(A100, [vec![vendor(A100, &N, 0.3), vendor(A100, &N, 0.9)], decoys(A100)].concat(), None);
    let rows = advise::advise(&req, &[h1, h2, a]);

    // H100: 0.5 0.6 0.7 0.8, the median the upper middle one.
    let h = row(&rows, "H100 SXM");
    let t = gemm_ms(&req, gpu("H100 SXM"));
    assert_eq!(h.basis, "measured here (4 GEMMs)");
    assert!(close(h.bound_ms, t) && close(h.step_ms, t / 0.7), "{h:?}");
    assert!(close(h.step_ms_range.0, t / 0.8) && close(h.step_ms_range.1, t / 0.5), "{h:?}");
    // A100: 0.3 0.9.
    let r = row(&rows, "A100 SXM4 80GB");
    let t = gemm_ms(&req, gpu("A100 SXM4 80GB"));
    assert_eq!(r.basis, "measured here (2 GEMMs)");
    assert!(close(r.step_ms, t / 0.9) && close(r.step_ms_range.0, t / 0.9) && close(r.step_ms_range.1, t / 0.3), "{r:?}");
    // The others: each measured GPU's low, median and high pooled, 0.5 0.7 0.8 0.3 0.9 0.9:
    // median 0.8, from 0.3 to 0.9.
    let v = row(&rows, "V100 SXM2");
    let t = gemm_ms(&req, gpu("V100 SXM2"));
    assert_eq!(v.basis, "predicted from 2 measured GPUs");
    assert!(close(v.step_ms, t / 0.8) && close(v.step_ms_range.0, t / 0.9) && close(v.step_ms_range.1, t / 0.3), "{v:?}");
    assert!(rows.windows(2).all(|w| w[0].step_ms <= w[1].step_ms), "fastest first");
}

#[test]
fn without_its_own_shapes_a_gpu_is_priced_on_comparable_ones() {
    let req = request(Workload::Gemm(Shape(N.to_vec())), Precision::Fp16, 1);
    let entries = vec![
        // Within a factor of 4 of the workload's FLOPs, the edges included.
        vendor(H100, &[6144, 6144, 6144], 0.6),
        vendor(H100, &[8192, 8192, 2048], 0.65),
        vendor(H100, &[16384, 8192, 8192], 0.7),
        vendor(H100, &[8192, 8192, 32768], 0.75),
        vendor(H100, &[12288, 12288, 12288], 0.8),
        // Too small, too large, or misaligned: left out.
        vendor(H100, &[4096, 4096, 4096], 0.01),
        vendor(H100, &[16384, 16384, 16384], 0.01),
        vendor(H100, &[8192, 8192, 2040], 0.01),
        vendor(H100, &[8196, 8192, 8192], 0.01),
        vendor(H100, &[8192, 8196, 8192], 0.01),
    ];
    let rows = advise::advise(&req, &[view(H100, entries, None)]);
    let h = row(&rows, "H100 SXM");
    let t = gemm_ms(&req, gpu("H100 SXM"));
    assert_eq!(h.basis, "measured here (5 GEMMs)");
    assert!(close(h.step_ms, t / 0.7) && close(h.step_ms_range.0, t / 0.8) && close(h.step_ms_range.1, t / 0.6), "{h:?}");
}

#[test]
fn a_memory_bound_gemms_share_is_of_its_bandwidth_bound() {
    // 131072 x 131072 x 16 in fp16: about 16 FLOPs a byte, far under every GPU's ridge point, so
    // its bound is the bandwidth's, which the bytes read and written set.
    let d = [131072, 131072, 16];
    let g = gpu("H100 SXM");
    let w = workload::work(&Shape(d.to_vec()), Precision::Fp16);
    let intensity = w.flops / (w.bytes_read + w.bytes_written);
    assert!(close(bound(g, &d, Precision::Fp16), intensity * g.bandwidth_gbs / 1e3), "memory-bound");
    let req = request(Workload::Gemm(Shape(d.to_vec())), Precision::Fp16, 1);
    let rows = advise::advise(&req, &[view(H100, vec![vendor(H100, &d, 0.9)], None)]);
    let h = row(&rows, "H100 SXM");
    let t = w.flops / (intensity * g.bandwidth_gbs / 1e3 * 1e12) * 1e3;
    assert!(close(h.bound_ms, t) && close(h.step_ms, t / 0.9), "{h:?}");
}

#[test]
fn element_wise_passes_run_at_the_best_measured_copy_speed() {
    let req = request(Workload::BertBase, Precision::Fp16, 1);
    // Without a layernorm measurement the layer norms stream at the copy's speed too.
    let bytes = elementwise_bytes(32);
    let copies = vec![
        entry("memory", Kind::Baseline, Status::Ok, &[1 << 30], Some(2000.0)),
        entry("memory", Kind::Baseline, Status::Ok, &[1 << 28], Some(2500.0)),
        entry("memory", Kind::Variant, Status::Ok, &[1 << 30], Some(3300.0)),
        entry("memory", Kind::Baseline, Status::Failed, &[1 << 30], Some(3300.0)),
    ];
    let rows = advise::advise(&req, &[view(H100, copies, None)]);
    let h100 = gpu("H100 SXM");
    let share = 2500.0 / h100.bandwidth_gbs;
    for (name, r) in rows.iter().map(|r| (r.gpu, r)) {
        let g = gpu(name);
        let t = gemm_ms(&req, g);
        // The H100's own copy share; the other GPUs the measured one's.
        let stream = bytes / (g.bandwidth_gbs * 1e9 * share) * 1e3;
        assert!(close(r.stream_ms, stream), "{name}: {} vs {stream}", r.stream_ms);
        assert!(close(r.bound_ms, t + bytes / (g.bandwidth_gbs * 1e9) * 1e3), "{name}: {r:?}");
        assert!(close(r.step_ms, t + stream) && r.allreduce_ms == 0.0 && r.link.is_none(), "{name}: {r:?}");
        assert!(close(r.steps_per_s, 1e3 / r.step_ms), "{name}");
    }
    assert!(close(row(&rows, "H100 SXM").stream_ms, bytes / 2500e9 * 1e3));
    // Without a copy measured, the sheet's bandwidth.
    let rows = advise::advise(&req, &[]);
    for r in &rows {
        let g = gpu(r.gpu);
        assert!(close(r.stream_ms, bytes / (g.bandwidth_gbs * 1e9) * 1e3) && close(r.step_ms, r.bound_ms), "{r:?}");
    }
}

fn allreduce(bytes: u64, busbw_gbs: f64, collective: Collective) -> CollectiveRun {
    CollectiveRun { collective, dtype: "float".into(), bytes, time: Summary::of(&[1.0]).unwrap(), algbw_gbs: busbw_gbs, busbw_gbs }
}

#[test]
fn the_all_reduce_runs_at_nccls_bandwidth_else_nvlinks_else_pcies() {
    let multi = MultiResults {
        gpus: vec!["0".into(), "1".into()],
        links: Vec::new(),
        can_access_peer: Vec::new(),
        copies: Vec::new(),
        latency_us: Vec::new(),
        kernel_reads: Vec::new(),
        collectives: vec![
            allreduce(1 << 20, 500.0, Collective::AllReduce),
            allreduce(1 << 30, 300.0, Collective::AllReduce),
            allreduce(1 << 30, 350.0, Collective::AllReduce),
            allreduce(1 << 31, 999.0, Collective::AllGather),
        ],
        scaling: Vec::new(),
        nccl_version: "2.27".into(),
        nvlink_sheet_gbs: None,
    };
    let four = request(Workload::BertBase, Precision::Fp16, 4);
    let rows = advise::advise(&four, &[view(H100, Vec::new(), Some(multi))]);
    // 2(n-1)/n of 110M fp16 gradients at the largest all-reduce's best bus bandwidth.
    let h = row(&rows, "H100 SXM");
    assert!(close(h.allreduce_ms, 1.5 * 110e6 * 2.0 / 350e9 * 1e3), "{h:?}");
    assert_eq!(h.link.as_deref(), Some("NCCL measured 350 GB/s"));
    let a = row(&rows, "A100 SXM4 80GB");
    let nv = gpu("A100 SXM4 80GB").nvlink_gbs.unwrap();
    assert!(close(a.allreduce_ms, 1.5 * 110e6 * 2.0 / (nv as f64 / 2.0 * 1e9) * 1e3), "{a:?}");
    assert_eq!(a.link, Some(format!("sheet: NVLink {} GB/s each way", nv / 2)));
    let g = gpu("RTX 4090");
    let pcie = Pcie { gen_current: g.pcie_gen, gen_max: g.pcie_gen, width_current: 16, width_max: 16 }.theoretical_gbs().unwrap();
    let r = row(&rows, "RTX 4090");
    assert!(close(r.allreduce_ms, 1.5 * 110e6 * 2.0 / (pcie * 1e9) * 1e3), "{r:?}");
    // fp32 gradients are 4 bytes; two GPUs move half of them each way.
    let two = request(Workload::BertBase, Precision::Fp32, 2);
    let r = row(&advise::advise(&two, &[]), "RTX 4090").clone();
    assert!(close(r.allreduce_ms, 1.0 * 110e6 * 4.0 / (pcie * 1e9) * 1e3), "{r:?}");
    assert!(close(r.steps_per_s, 2.0 * 1e3 / r.step_ms) && close(r.per_w, r.steps_per_s / (2.0 * g.tdp_w as f64)));
    assert!(close(r.per_1000_usd.unwrap(), r.steps_per_s / (2.0 * g.price_usd.unwrap() as f64) * 1e3));
    // One GPU, or a workload without gradients: nothing to all-reduce.
    for req in [request(Workload::BertBase, Precision::Fp16, 1), request(Workload::Gemm(Shape(N.to_vec())), Precision::Fp16, 4)] {
        assert!(advise::advise(&req, &[]).iter().all(|r| r.allreduce_ms == 0.0 && r.link.is_none()));
    }
}

#[test]
fn a_constraint_leaves_a_gpu_out_only_past_its_edge() {
    let g = gpu("RTX 4090");
    let (price, tdp) = (g.price_usd.unwrap() as f64, g.tdp_w as f64);
    let base = request(Workload::BertBase, Precision::Fp16, 2);
    let out = |req: &Request| row(&advise::advise(req, &[]), "RTX 4090").excluded.clone();
    assert_eq!(out(&Request { budget_usd: Some(2.0 * price), power_w: Some(2.0 * tdp), ..base.clone() }), None, "at the edge: in");
    assert_eq!(
        out(&Request { budget_usd: Some(2.0 * price - 1.0), ..base.clone() }),
        Some(format!("2 x ${price:.0} is over the ${:.0} budget", 2.0 * price - 1.0))
    );
    assert_eq!(
        out(&Request { power_w: Some(2.0 * tdp - 1.0), ..base.clone() }),
        Some(format!("2 x {tdp} W is over the {:.0} W limit", 2.0 * tdp - 1.0))
    );
    // A GPU without a price is out under any budget.
    let v = row(&advise::advise(&Request { budget_usd: Some(1e9), ..base.clone() }, &[]), "V100 SXM2").clone();
    assert_eq!(v.excluded.as_deref(), Some("no published price (budget $1000000000)"));
    assert_eq!(v.per_1000_usd, None);
    // BERT-base's memory: 16 bytes a parameter and 12 layers of s·b·h·(34 + 5·a·s/h) 2-byte
    // activations; 64 sequences need more than the 4090's 24 GB, 32 do not.
    let gb = |b: f64| (110e6 * 16.0 + 12.0 * 512.0 * b * 768.0 * (34.0 + 5.0 * 12.0 * 512.0 / 768.0)) / 1e9;
    let m = Workload::BertBase.memory_gb(32, Precision::Fp16, Mode::Train).unwrap();
    assert!(close(m, gb(32.0)) && m < 24.0, "{m}");
    assert!(
        close(Workload::BertBase.memory_gb(32, Precision::Fp32, Mode::Train).unwrap(), gb(64.0)),
        "fp32 activations are twice as large"
    );
    let big = Request { batch: 64, ..base.clone() };
    let rows = advise::advise(&big, &[]);
    let r = row(&rows, "RTX 4090");
    assert!(close(r.memory_gb.unwrap(), gb(64.0)));
    assert_eq!(r.excluded, Some(format!("needs {:.0} GB, has 24", gb(64.0))));
    assert!(rows.iter().all(|r| r.excluded.is_some() == (r.memory_gb.unwrap() > gpu(r.gpu).memory_gb as f64)));
    // ResNet-50's: 14 bytes a parameter under autocast, the fp32 images, and per image what
    // autograd saves: 21,073,920 activations of 2 bytes (the stem's input, conv outputs and ReLU
    // outputs, stage by stage) and the max pool's 200,704 int64 indices.
    let half = 21_073_920.0 * 2.0 + 200_704.0 * 8.0 + 3.0 * 224.0 * 224.0 * 4.0;
    let m = Workload::Resnet50.memory_gb(256, Precision::Fp16, Mode::Train).unwrap();
    assert!(close(m, (25.6e6 * 14.0 + 256.0 * half) / 1e9), "{m}");
    let fp32 = Workload::Resnet50.memory_gb(256, Precision::Fp32, Mode::Train).unwrap();
    // In fp32: activations of 4 bytes, no 16-bit copies of the weights or of the image.
    let per_image = (21_073_920.0 - 3.0 * 224.0 * 224.0) * 4.0 + 200_704.0 * 8.0 + 3.0 * 224.0 * 224.0 * 4.0;
    assert!(close(fp32, (25.6e6 * 12.0 + 256.0 * per_image) / 1e9), "{fp32}");
    // Inference: fp32 weights, the fp32 images and the most activations alive at once, in layer
    // 1's first block: its input (64 x 56²) beside the main path's output, the downsampling
    // convolution's and its batch norm's (256 x 56² each).
    let live = 64.0 * 56.0 * 56.0 + 3.0 * 256.0 * 56.0 * 56.0;
    let infer = |e: f64| (25.6e6 * 4.0 + 256.0 * (3.0 * 224.0 * 224.0 * 4.0 + live * e)) / 1e9;
    assert!(close(Workload::Resnet50.memory_gb(256, Precision::Fp16, Mode::Infer).unwrap(), infer(2.0)));
    assert!(close(Workload::Resnet50.memory_gb(256, Precision::Fp32, Mode::Infer).unwrap(), infer(4.0)));
    assert_eq!(Workload::BertBase.memory_gb(32, Precision::Fp16, Mode::Infer), None, "the encoder alone's inference is not modelled");
}

#[test]
fn the_reasoning_names_the_best_rows_and_the_guides_pairs() {
    let req = request(Workload::BertBase, Precision::Fp16, 2);
    let rows = advise::advise(&req, &[]);
    let lines = advise::why(&req, &rows);
    let open: Vec<&Row> = rows.iter().filter(|r| r.excluded.is_none()).collect();
    let fastest = open.iter().min_by(|a, b| a.step_ms.total_cmp(&b.step_ms)).unwrap();
    let dollar = open
        .iter()
        .filter(|r| r.per_1000_usd.is_some())
        .max_by(|a, b| a.per_1000_usd.unwrap().total_cmp(&b.per_1000_usd.unwrap()))
        .unwrap();
    let watt = open.iter().max_by(|a, b| a.per_w.total_cmp(&b.per_w)).unwrap();
    // The sheet alone (no results): one bound, so no range, and the line goes on to the rate.
    assert_eq!(advise::range_text(fastest.step_ms_range, 2), "-");
    let head = format!("fastest: {} at {:.2} ms a step ({:.1} batches/s;", fastest.gpu, fastest.step_ms, fastest.steps_per_s);
    assert!(lines[0].starts_with(&head), "{lines:?}");
    assert!(lines[1].starts_with(&format!("most per dollar: {} at {:.2}", dollar.gpu, dollar.per_1000_usd.unwrap())), "{lines:?}");
    assert!(lines[2].starts_with(&format!("most per watt: {} at {:.3}", watt.gpu, watt.per_w)), "{lines:?}");
    let ms = |n: &str| row(&rows, n).step_ms;
    assert!(
        lines[3].ends_with(&format!("{:.2}x as fast", ms("RTX 4070") / ms("RTX 4090")))
            && lines[3].starts_with("RTX 4090 against RTX 4070"),
        "{lines:?}"
    );
    assert!(
        lines[4].ends_with(&format!("{:.2}x as fast", ms("V100 SXM2") / ms("RTX 4070 Ti")))
            && lines[4].starts_with("RTX 4070 Ti against V100 SXM2"),
        "{lines:?}"
    );
    assert!(lines[5].contains(&format!("its all-reduce takes {:.1} ms", row(&rows, "RTX 4090").allreduce_ms)), "{lines:?}");
    // Without results every row is the sheet's bound, whatever the precision, and the last line
    // says so; one GPU has no all-reduce line.
    let nothing = "the lab has measured no GEMM in this precision near these shapes";
    assert!(lines[6].starts_with(nothing) && lines.len() == 7, "{lines:?}");
    for p in [Precision::Fp16, Precision::Bf16, Precision::Fp8] {
        let req = request(Workload::BertBase, p, 1);
        let lines = advise::why(&req, &advise::advise(&req, &[]));
        assert!(!lines.iter().any(|l| l.contains("NVLink")), "{lines:?}");
        assert!(lines.last().unwrap().starts_with(nothing), "{p:?}: {lines:?}");
    }
    // A measured GEMM near the shapes: no such line, and the rows say what they stand on.
    let one = request(Workload::Gemm(Shape(N.to_vec())), Precision::Fp16, 1);
    let rows = advise::advise(&one, &[view(("NVIDIA H200", 132), vec![vendor(("NVIDIA H200", 132), &N, 0.8)], None)]);
    let lines = advise::why(&one, &rows);
    assert!(!lines.iter().any(|l| l.starts_with(nothing)), "{lines:?}");
    assert_eq!(row(&rows, "H200 SXM").basis, "measured here (1 GEMM)");
}

#[test]
fn a_single_gemm_is_priced_as_a_call_in_ms_and_tflops() {
    let req = request(Workload::Gemm(Shape(N.to_vec())), Precision::Fp16, 1);
    let rows = advise::advise(&req, &[view(("NVIDIA H200", 132), vec![vendor(("NVIDIA H200", 132), &N, 0.8)], None)]);
    let flops = 2.0 * (N[0] * N[1] * N[2]) as f64;
    for r in &rows {
        assert!(close(r.tflops.unwrap(), flops / (r.step_ms * 1e9)), "{}", r.gpu);
        assert_eq!((r.stream_ms, r.allreduce_ms, r.memory_gb), (0.0, 0.0, None), "{}: a GEMM has no step's passes", r.gpu);
    }
    let lines = advise::why(&req, &rows);
    let h200 = row(&rows, "H200 SXM");
    // The H100, predicted from the H200, shares its bound and its time: the measured one first.
    assert_eq!(row(&rows, "H100 SXM").step_ms, h200.step_ms);
    assert_eq!(rows[0].gpu, "H200 SXM", "the measured GPU ranks first of a tie");
    assert!(lines[0].starts_with(&format!("fastest: H200 SXM at {:.2} ms a GEMM", h200.step_ms)), "{lines:?}");
    assert!(lines[0].contains(&format!("{:.1} TFLOP/s", h200.tflops.unwrap())), "{lines:?}");
    assert!(lines[1].contains("TFLOP/s per $1000") && lines[2].contains("TFLOP/s per W"), "{lines:?}");
    // Without a measurement the H100 and the H200 share the sheet's fp8 bound: the line names the
    // one the table ranks first, not the last of the tie.
    let fp8 = request(Workload::Gemm(Shape(N.to_vec())), Precision::Fp8, 1);
    let rows = advise::advise(&fp8, &[]);
    assert_eq!(rows[0].step_ms, rows[1].step_ms, "a tie at the top");
    let lines = advise::why(&fp8, &rows);
    assert!(lines[0].starts_with(&format!("fastest: {} at", rows[0].gpu)), "{lines:?} against {}", rows[0].gpu);
    // A model's step has no single rate.
    let step = request(Workload::BertBase, Precision::Fp16, 1);
    assert!(advise::advise(&step, &[]).iter().all(|r| r.tflops.is_none()));
}

#[test]
fn each_precision_names_its_rate_family_and_element_sizes() {
    use sheet::Precision as S;
    for (p, rate, family, input, output) in [
        (Precision::Fp32, S::Fp32, "sgemm", 4.0, 4.0),
        (Precision::Tf32, S::Tf32, "tf32", 4.0, 4.0),
        (Precision::Fp16, S::Fp16F32Acc, "fp16", 2.0, 2.0),
        (Precision::Bf16, S::Bf16F32Acc, "bf16", 2.0, 2.0),
        (Precision::Int8, S::Int8, "int8", 1.0, 4.0),
        (Precision::Fp8, S::Fp8F32Acc, "fp8", 1.0, 2.0),
    ] {
        assert_eq!((p.sheet(), p.family().name(), p.bytes(), p.out_bytes()), (rate, family, input, output), "{p:?}");
    }
}

#[test]
fn each_workload_says_its_batch_parameters_gemms_and_element_wise_bytes() {
    let sq = |n: u64| Workload::Gemm(Shape(vec![n, n, n]));
    for (w, batch, params) in [
        (Workload::BertBase, 32, Some(110e6)),
        (Workload::BertLarge, 32, Some(340e6)),
        (Workload::Resnet50, 256, Some(25.6e6)),
        (sq(64), 1, None),
    ] {
        assert_eq!((w.default_batch(), w.parameters()), (batch, params), "{w:?}");
    }
    assert!(Workload::BertLarge.describe(8, Mode::Train).starts_with("a BERT-large training step, 8 x 512 tokens: 24 layers'"));
    assert!(Workload::BertBase.describe(8, Mode::Train).starts_with("a BERT-base training step, 8 x 512 tokens: 12 layers'"));
    assert!(Workload::Resnet50.describe(64, Mode::Train).starts_with("a ResNet-50 training step, batch 64:"));
    assert_eq!(Workload::Gemm(Shape(vec![1, 2, 3])).describe(1, Mode::Train), "one GEMM 1x2x3");

    // BERT-large at 8 x 512 tokens: its four layer GEMMs three times a layer, 24 layers, and the
    // fused attention (8 x 16 heads x 512 rows, d = 64) 3.5 times.
    let t = 8 * 512;
    let want: Vec<(Vec<u64>, f64)> = vec![
        (vec![t, 3072, 1024], 72.0),
        (vec![t, 1024, 1024], 72.0),
        (vec![t, 4096, 1024], 72.0),
        (vec![t, 1024, 4096], 72.0),
        (vec![8 * 16 * 512, 512, 64], 84.0),
        (vec![8 * 16 * 512, 64, 512], 84.0),
    ];
    let got: Vec<(Vec<u64>, f64)> = Workload::BertLarge.gemms(8, Mode::Train).into_iter().map(|(s, n)| (s.0, n)).collect();
    assert_eq!(got, want);
    // ResNet-50 at batch 128: the suite's five convolutions at half its 256 images, three times
    // per block of each stage (3, 4, 6, 3) and for 32 1x1 convolutions.
    let got: Vec<(Vec<u64>, f64)> = Workload::Resnet50.gemms(128, Mode::Train).into_iter().map(|(s, n)| (s.0, n)).collect();
    let px = |hw: u64| 128 * hw * hw;
    assert_eq!(
        got,
        vec![
            (vec![px(56), 64, 576], 9.0),
            (vec![px(28), 128, 1152], 12.0),
            (vec![px(14), 256, 2304], 18.0),
            (vec![px(7), 512, 4608], 9.0),
            (vec![px(14), 1024, 256], 96.0),
        ]
    );

    // Element-wise bytes per element forward besides the layer norms: 90 where outputs are 2
    // bytes (casts from fp32 included), 110 where they are 4 (no casts); the layer norms' 16
    // (fp32, two a layer) in every precision. Where there are casts, also 12 bytes a parameter
    // of the GEMMs (12 x hidden² + 9 x hidden a layer) for the weights' and their gradients'.
    let bert = |w: &Workload, b: u64, p| w.stream_bytes(b, p, Mode::Train).unwrap();
    let weights = |layers: f64, h: f64| layers * (12.0 * h * h + 9.0 * h);
    for (p, per, w) in [(Precision::Bf16, 90.0, 12.0), (Precision::Fp8, 90.0, 12.0), (Precision::Tf32, 110.0, 0.0), (Precision::Int8, 110.0, 0.0)] {
        assert!(close(bert(&Workload::BertBase, 4, p), 3.0 * 12.0 * 4.0 * 512.0 * 768.0 * per + w * weights(12.0, 768.0)), "{p:?}");
    }
    assert!(close(bert(&Workload::BertLarge, 4, Precision::Fp16), 3.0 * 24.0 * 4.0 * 512.0 * 1024.0 * 90.0 + 12.0 * weights(24.0, 1024.0)));
    let large = Workload::BertLarge.norms(4, Mode::Train).unwrap();
    assert!(close(large.forward, 24.0 * 4.0 * 512.0 * 1024.0 * 16.0) && close(large.backward, 24.0 * 4.0 * 512.0 * 1024.0 * 24.0));
    assert!(close(
        Workload::BertLarge.memory_gb(8, Precision::Fp16, Mode::Train).unwrap(),
        (340e6 * 16.0 + 24.0 * 512.0 * 8.0 * 1024.0 * (34.0 + 5.0 * 16.0 * 512.0 / 1024.0)) / 1e9
    ));
}

#[test]
fn each_measured_gpu_streams_at_its_own_copy_speed_and_a_zero_copy_counts_for_none() {
    let req = request(Workload::BertBase, Precision::Fp16, 1);
    let bytes = elementwise_bytes(32);
    let copy = |rate: f64| entry("memory", Kind::Baseline, Status::Ok, &[1 << 30], Some(rate));
    let views = [
        view(H100, vec![copy(2500.0)], None),
        view(A100, vec![copy(1500.0)], None),
        view(("NVIDIA GeForce RTX 4090", 128), vec![copy(0.0)], None),
    ];
    let rows = advise::advise(&req, &views);
    let stream = |n: &str| row(&rows, n).stream_ms;
    assert!(close(stream("H100 SXM"), bytes / 2500e9 * 1e3));
    assert!(close(stream("A100 SXM4 80GB"), bytes / 1500e9 * 1e3));
    // The 4090's copy says nothing: it takes the first measured GPU's share, as an unmeasured
    // GPU does.
    let share = 2500.0 / gpu("H100 SXM").bandwidth_gbs;
    for n in ["RTX 4090", "V100 SXM2"] {
        assert!(close(stream(n), bytes / (gpu(n).bandwidth_gbs * 1e9 * share) * 1e3), "{n}");
    }
}

#[test]
fn the_range_carries_the_element_wise_passes_and_the_all_reduce_at_both_ends() {
    let req = request(Workload::BertBase, Precision::Fp16, 2);
    let qkv = req.workload.gemms(req.batch, req.mode)[0].0 .0.clone();
    let copies = entry("memory", Kind::Baseline, Status::Ok, &[1 << 30], Some(2500.0));
    let v = view(H100, vec![vendor(H100, &qkv, 0.5), vendor(H100, &qkv, 0.8), copies], None);
    let rows = advise::advise(&req, &[v]);
    let h = row(&rows, "H100 SXM");
    let t = gemm_ms(&req, gpu("H100 SXM"));
    let rest = h.stream_ms + h.allreduce_ms;
    assert!(h.stream_ms > 0.0 && h.allreduce_ms > 0.0, "{h:?}");
    assert!(
        close(h.step_ms, t / 0.8 + rest) && close(h.step_ms_range.0, t / 0.8 + rest) && close(h.step_ms_range.1, t / 0.5 + rest),
        "{h:?}"
    );
}

/// BERT-base's element-wise bytes at `batch`, in fp16: its passes and its layer norms.
fn elementwise_bytes(batch: u64) -> f64 {
    Workload::BertBase.stream_bytes(batch, Precision::Fp16, Mode::Train).unwrap()
        + Workload::BertBase.norms(batch, Mode::Train).map(|n| n.forward + n.backward).unwrap()
}

#[test]
fn layer_norms_run_at_the_layernorm_familys_best_rate_on_the_steps_own_matrix() {
    let req = request(Workload::BertBase, Precision::Fp16, 1);
    let (other, n) =
        (Workload::BertBase.stream_bytes(32, Precision::Fp16, Mode::Train).unwrap(), Workload::BertBase.norms(32, Mode::Train).unwrap());
    let dims = n.dims;
    let entries = vec![
        entry("memory", Kind::Baseline, Status::Ok, &[1 << 30], Some(2500.0)),
        // The step's own matrix: the best rung's rate counts, not the baseline's (a copy).
        entry("layernorm", Kind::Variant, Status::Ok, &dims, Some(1800.0)),
        entry("layernorm", Kind::Variant, Status::Ok, &dims, Some(2000.0)),
        entry("layernorm", Kind::Baseline, Status::Ok, &dims, Some(2600.0)),
        entry("layernorm", Kind::Variant, Status::Failed, &dims, Some(2400.0)),
        // Another shape is passed over while the step's own is measured.
        entry("layernorm", Kind::Variant, Status::Ok, &[4096, 65536], Some(2300.0)),
    ];
    // Without a backward measurement, the backward passes at the forward's rate.
    let rows = advise::advise(&req, &[view(H100, entries.clone(), None)]);
    let want = (other / 2500e9 + (n.forward + n.backward) / 2000e9) * 1e3;
    assert!(close(row(&rows, "H100 SXM").stream_ms, want), "{} vs {want}", row(&rows, "H100 SXM").stream_ms);
    // With one, at the layernorm_bwd family's best rung on the step's matrix.
    let mut with_bwd = entries.clone();
    with_bwd.push(entry("layernorm_bwd", Kind::Variant, Status::Ok, &dims, Some(1500.0)));
    with_bwd.push(entry("layernorm_bwd", Kind::Baseline, Status::Ok, &dims, Some(2900.0)));
    let rows = advise::advise(&req, &[view(H100, with_bwd, None)]);
    let want = (other / 2500e9 + n.forward / 2000e9 + n.backward / 1500e9) * 1e3;
    assert!(close(row(&rows, "H100 SXM").stream_ms, want), "{} vs {want}", row(&rows, "H100 SXM").stream_ms);
    // A GPU measured without a backward rung prices it at its own forward share, not at another
    // GPU's backward one.
    let fwd_only = vec![
        entry("memory", Kind::Baseline, Status::Ok, &[1 << 30], Some(2500.0)),
        entry("layernorm", Kind::Variant, Status::Ok, &dims, Some(2000.0)),
    ];
    let with_bwd: Vec<_> =
        entries.iter().cloned().chain([entry("layernorm_bwd", Kind::Variant, Status::Ok, &dims, Some(1500.0))]).collect();
    let rows = advise::advise(&req, &[view(H100, with_bwd, None), view(("NVIDIA H200", 132), fwd_only, None)]);
    let want = (other / 2500e9 + (n.forward + n.backward) / 2000e9) * 1e3;
    assert!(close(row(&rows, "H200 SXM").stream_ms, want), "{} vs {want}", row(&rows, "H200 SXM").stream_ms);
    // Without the step's own matrix, the best rung at any shape.
    let elsewhere: Vec<_> = entries.into_iter().filter(|e| e.dims != dims).collect();
    let rows = advise::advise(&req, &[view(H100, elsewhere, None)]);
    assert!(close(row(&rows, "H100 SXM").stream_ms, (other / 2500e9 + (n.forward + n.backward) / 2300e9) * 1e3));
}

/// A range whose bounds print as one number (one measured efficiency, as for one GEMM) prints as
/// "-", not "x-x".
#[test]
fn a_range_of_one_number_prints_as_a_dash() {
    assert_eq!(advise::range_text((1.7012, 1.7014), 3), "-");
    assert_eq!(advise::range_text((1.7012, 1.7016), 3), "1.701-1.702");
    assert_eq!(advise::range_text((29.93, 35.69), 2), "29.93-35.69");
}

/// The fp16 bound of a convolution on `g`, TFLOP/s, from its intensity.
fn conv_bound(g: &Gpu, s: &ConvShape) -> f64 {
    let w = s.work(2.0);
    g.bound(sheet::Precision::Fp16F32Acc, w.flops / (w.bytes_read + w.bytes_written)).unwrap()
}

#[test]
fn convolutions_are_priced_shape_by_shape_at_cudnns_share_on_each() {
    let mut req = request(Workload::Resnet50, Precision::Fp16, 1);
    let convs = req.workload.convs(req.batch, req.mode, req.precision).unwrap();
    // Training: every shape's forward pass and filters' gradient, and its input's gradient but
    // the stem's, whose input (the images) needs none; each as often as the network has it.
    assert_eq!(convs.len(), 3 * 23 - 1);
    assert_eq!(convs.iter().map(|c| c.1).sum::<f64>(), 3.0 * 53.0 - 1.0);
    let stem = ConvShape::of_network(&kernel_lab::facts::networks::RESNET50[0], 1);
    assert!(!convs.iter().any(|(s, _)| *s == stem.with(Pass::Data)));
    // Each pass's convolution: its index in the forward passes, which come first per shape.
    let index = |s: &ConvShape| convs.iter().filter(|(f, _)| f.pass == Pass::Forward).position(|(f, _)| *f == s.with(Pass::Forward)).unwrap();
    // cuDNN's forward pass on the H100 reaching a share of 0.3 + 0.02 i on shape i; the first
    // shape left out, the lab's own rung (a variant) and a failed baseline beside them, which
    // do not count.
    let share = |i: usize| 0.3 + 0.02 * i as f64;
    let (h100, a100) = (gpu("H100 SXM"), gpu("A100 SXM4 80GB"));
    let mut entries = Vec::new();
    for (s, _) in convs.iter().filter(|(s, _)| s.pass == Pass::Forward).skip(1) {
        let rate = share(index(s)) * conv_bound(h100, s);
        entries.push(entry("conv_fp16", Kind::Baseline, Status::Ok, &s.shape().0, Some(rate)));
        entries.push(entry("conv_fp16", Kind::Variant, Status::Ok, &s.shape().0, Some(10.0 * rate)));
        entries.push(entry("conv_fp16", Kind::Baseline, Status::Failed, &s.shape().0, Some(10.0 * rate)));
    }
    let shares: Vec<f64> = (1..23).map(share).collect();
    // The shape the H100 lacks takes the median of its own shares (the upper middle of 22).
    let fill = shares[11];
    let ms = |g: &Gpu, at: &dyn Fn(&ConvShape) -> f64, passes: &[(ConvShape, f64)]| -> f64 {
        passes.iter().map(|(s, n)| n * s.work(2.0).flops / (conv_bound(g, s) * at(s) * 1e12) * 1e3).sum()
    };
    // Each gradient at its forward pass's share, the H100 having measured none.
    let own = |s: &ConvShape| if index(s) == 0 { fill } else { share(index(s)) };
    let rows = advise::advise(&req, &[view(H100, entries.clone(), None)]);
    let h = row(&rows, "H100 SXM");
    assert_eq!(h.basis, "measured here (22 of 68 convolution passes)");
    let t = ms(h100, &own, &convs);
    assert!(close(h.step_ms - h.stream_ms, t) && close(h.step_ms_range.0 - h.stream_ms, t), "{h:?}");
    // The A100, measured nowhere, takes the H100's share on each shape (the pooled median where
    // no GPU has the shape) at its own bound.
    let a = row(&rows, "A100 SXM4 80GB");
    assert_eq!(a.basis, "predicted from 1 measured GPU");
    assert!(close(a.step_ms - a.stream_ms, ms(a100, &own, &convs)), "{a:?}");
    // A gradient cuDNN was measured on is priced at its own share: shape 5's filters' gradient
    // at 0.9, where its forward pass has 0.4.
    let wgrad = convs.iter().find(|(s, _)| s.pass == Pass::Filter && index(s) == 5).unwrap().0;
    let mut with_grad = entries.clone();
    with_grad.push(entry("conv_fp16", Kind::Baseline, Status::Ok, &wgrad.shape().0, Some(0.9 * conv_bound(h100, &wgrad))));
    let h = row(&advise::advise(&req, &[view(H100, with_grad, None)]), "H100 SXM").clone();
    assert_eq!(h.basis, "measured here (23 of 68 convolution passes)");
    assert!(close(h.step_ms - h.stream_ms, ms(h100, &|s| if *s == wgrad { 0.9 } else { own(s) }, &convs)), "{h:?}");
    // Inference runs each convolution's forward pass once.
    req.mode = Mode::Infer;
    let forward = req.workload.convs(req.batch, req.mode, req.precision).unwrap();
    assert!(forward.len() == 23 && forward.iter().all(|(s, _)| s.pass == Pass::Forward));
    let rows = advise::advise(&req, &[view(H100, entries, None)]);
    let h = row(&rows, "H100 SXM");
    assert_eq!(h.basis, "measured here (22 of 23 convolution passes)");
    assert!(close(h.step_ms - h.stream_ms, ms(h100, &own, &forward)), "{h:?}");
    // Without any conv_fp16 entry, the five GEMMs price the step.
    let rows = advise::advise(&req, &[view(H100, vec![vendor(H100, &[802816, 64, 576], 0.5)], None)]);
    assert_eq!(row(&rows, "H100 SXM").basis, "measured here (1 GEMM)");
}

#[test]
fn batch_norms_run_at_the_share_cudnns_reached_on_each_shape_else_at_the_copys() {
    let mut req = request(Workload::Resnet50, Precision::Fp16, 1);
    req.mode = Mode::Infer;
    let h100 = gpu("H100 SXM");
    let bw = h100.bandwidth_gbs * 1e9;
    let copy = entry("memory", Kind::Baseline, Status::Ok, &[1 << 30], Some(0.9 * h100.bandwidth_gbs));
    let items = req.workload.batch_norms(req.batch, req.precision, req.mode).unwrap();
    let elementwise = req.workload.stream_bytes(req.batch, req.precision, req.mode).unwrap() / (0.9 * bw);
    let bn_bytes: f64 = items.iter().map(|b| b.1).sum();
    // No batch norm measured: at the copy's share.
    let rows = advise::advise(&req, &[view(H100, vec![copy.clone()], None)]);
    assert!(close(row(&rows, "H100 SXM").stream_ms, (elementwise + bn_bytes / (0.9 * bw)) * 1e3));
    // cuDNN's (the baseline) at 0.4 of the bandwidth on the first shape and 0.5 on the rest; the
    // lab's faster rung does not count. The A100, measured nowhere, takes the same shares.
    let mut entries = vec![copy];
    for (i, (s, _)) in items.iter().enumerate() {
        let share = if i == 0 { 0.4 } else { 0.5 };
        entries.push(entry("batchnorm_fp16", Kind::Baseline, Status::Ok, &s.0, Some(share * h100.bandwidth_gbs)));
        entries.push(entry("batchnorm_fp16", Kind::Variant, Status::Ok, &s.0, Some(0.9 * h100.bandwidth_gbs)));
    }
    let bn =
        |g: &Gpu| items.iter().enumerate().map(|(i, (_, b))| b / (if i == 0 { 0.4 } else { 0.5 } * g.bandwidth_gbs * 1e9)).sum::<f64>();
    let rows = advise::advise(&req, &[view(H100, entries.clone(), None)]);
    assert!(close(row(&rows, "H100 SXM").stream_ms, (elementwise + bn(h100)) * 1e3));
    let a100 = gpu("A100 SXM4 80GB");
    let a = row(&rows, "A100 SXM4 80GB");
    assert!(close(
        a.stream_ms,
        (req.workload.stream_bytes(req.batch, req.precision, req.mode).unwrap() / (0.9 * a100.bandwidth_gbs * 1e9) + bn(a100)) * 1e3
    ));
    // Training: each shape's forward (4 bytes an element) and backward (6) passes, at the
    // inference share of the same shape where the GPU measured no pass in training, and at the
    // pass's own share where it did (the first shape's backward at 0.25).
    req.mode = Mode::Train;
    let passes = req.workload.batch_norms(req.batch, req.precision, req.mode).unwrap();
    assert_eq!(passes.len(), 2 * items.len());
    assert!(passes.iter().all(|(s, _)| matches!(s.0.get(4), Some(1) | Some(2))));
    let backward0 = passes[1].0.clone();
    entries.push(entry("batchnorm_fp16", Kind::Baseline, Status::Ok, &backward0.0, Some(0.25 * h100.bandwidth_gbs)));
    let train_bn: f64 = passes
        .iter()
        .map(|(s, b)| {
            let share = if *s == backward0 { 0.25 } else if items.iter().position(|(i, _)| i.0[..] == s.0[..4]) == Some(0) { 0.4 } else { 0.5 };
            b / (share * h100.bandwidth_gbs * 1e9)
        })
        .sum();
    let rows = advise::advise(&req, &[view(H100, entries, None)]);
    let train_elementwise = req.workload.stream_bytes(req.batch, req.precision, req.mode).unwrap() / (0.9 * bw);
    assert!(close(row(&rows, "H100 SXM").stream_ms, (train_elementwise + train_bn) * 1e3));
}

/// A transfers record holding only a launch measurement: `queued_us` and `graph_us` a kernel.
fn launches(queued_us: f64, graph_us: f64) -> Transfers {
    Transfers {
        date: String::new(),
        git_commit: String::new(),
        pcie: None,
        transfers: Vec::new(),
        overlap: None,
        launches: Some(Launches { kernel: "k".into(), bytes: 16384, launches: 100, host_us: 3.0, queued_us, graph_us }),
    }
}

#[test]
fn a_steps_launch_gaps_are_its_launches_times_the_measured_launch_cost() {
    let copies = || vec![entry("memory", Kind::Baseline, Status::Ok, &[1 << 30], Some(2500.0))];
    let mut measured = view(H100, copies(), None);
    measured.transfers = Some(launches(2.5, 1.0));
    for (workload, mode) in [(Workload::Resnet50, Mode::Train), (Workload::BertBaseMlm, Mode::Infer), (Workload::BertBase, Mode::Train)] {
        let req = Request { mode, ..request(workload.clone(), Precision::Fp16, 1) };
        let without = advise::advise(&req, &[view(H100, copies(), None)]);
        let with = advise::advise(&req, &[measured.clone()]);
        for (a, b) in without.iter().zip(&with) {
            // Unmeasured GPUs take the measured one's cost: a launch's is mostly the host's.
            let k = b.launches.unwrap_or_else(|| panic!("{workload:?} {mode:?}: no launches counted")).total();
            // Without a launch cost the launches are still counted, their gaps not priced.
            assert!(a.gpu == b.gpu && a.launches == b.launches && a.gaps_ms.is_none(), "{a:?}");
            let gaps = b.gaps_ms.unwrap();
            assert!(close(gaps, k * 2.5e-3) && close(b.step_ms, a.step_ms + gaps), "{workload:?}: {b:?}");
            // The step is its parts: GEMMs, passes, all-reduce and gaps.
            assert!(close(b.gemm_ms + b.stream_ms + b.allreduce_ms + gaps, b.step_ms) && close(a.gemm_ms, b.gemm_ms), "{b:?}");
            // The range reaches down to the gaps a graph's launches leave, queued less graph.
            assert!(close(b.step_ms_range.0, a.step_ms_range.0 + k * 1.5e-3), "{b:?}");
            assert!(close(b.step_ms_range.1, a.step_ms_range.1 + k * 2.5e-3), "{b:?}");
        }
    }
    // The count follows the step: training launches more than inference, the MLM step more than
    // the encoder alone, and autocast's casts are kernels an fp32 step does not launch.
    let count = |workload: Workload, mode: Mode, p: Precision| {
        let req = Request { mode, ..request(workload, p, 1) };
        row(&advise::advise(&req, &[measured.clone()]), "H100 SXM").launches.unwrap().kernels
    };
    for w in [Workload::Resnet50, Workload::BertBaseMlm] {
        assert!(count(w.clone(), Mode::Train, Precision::Fp16) > 2.0 * count(w.clone(), Mode::Infer, Precision::Fp16), "{w:?}");
        assert!(count(w.clone(), Mode::Train, Precision::Fp32) < count(w.clone(), Mode::Train, Precision::Fp16), "{w:?}");
    }
    assert!(count(Workload::BertBaseMlm, Mode::Train, Precision::Fp16) > count(Workload::BertBase, Mode::Train, Precision::Fp16));
    // One GEMM is one call: no gaps between kernels to price.
    let gemm = advise::advise(&request(Workload::Gemm(Shape(N.to_vec())), Precision::Fp16, 1), &[measured]);
    assert!(gemm.iter().all(|r| r.launches.is_none() && r.gaps_ms.is_none()));
}

#[test]
fn the_element_wise_passes_range_reaches_up_to_the_slowest_streaming_rung() {
    let req = request(Workload::BertBase, Precision::Fp16, 1);
    let h100 = gpu("H100 SXM");
    // The element-wise passes other than the layer norms, which their own family prices.
    let bytes = Workload::BertBase.stream_bytes(32, Precision::Fp16, Mode::Train).unwrap();
    let copy = || entry("memory", Kind::Baseline, Status::Ok, &[1 << 30], Some(2500.0));
    let base = advise::advise(&req, &[view(H100, vec![copy()], None)]);
    // Rungs at the largest array count, the slowest of them; a slower one at a smaller array, a
    // failed one, and one faster than the copy do not.
    let rungs = vec![
        copy(),
        entry("memory", Kind::Variant, Status::Ok, &[1 << 30], Some(2000.0)),
        entry("memory", Kind::Variant, Status::Ok, &[1 << 30], Some(2400.0)),
        entry("memory", Kind::Variant, Status::Ok, &[1 << 30], Some(2600.0)),
        entry("memory", Kind::Variant, Status::Ok, &[1 << 20], Some(900.0)),
        entry("memory", Kind::Variant, Status::Failed, &[1 << 30], Some(1000.0)),
    ];
    let with = advise::advise(&req, &[view(H100, rungs, None)]);
    for (a, b) in base.iter().zip(&with) {
        let g = gpu(a.gpu);
        // The measured GPU's shares, and the others take them.
        let wider = bytes / (g.bandwidth_gbs * 1e9) * 1e3 * (h100.bandwidth_gbs / 2000.0 - h100.bandwidth_gbs / 2500.0);
        assert!(close(a.step_ms, b.step_ms) && close(a.step_ms_range.0, b.step_ms_range.0), "{}: the point and the low end stay", a.gpu);
        assert!(close(b.step_ms_range.1, a.step_ms_range.1 + wider), "{}: {:?} vs {:?} + {wider}", a.gpu, b.step_ms_range, a.step_ms_range);
    }
    // A rung faster than the copy leaves the range as the copy's alone.
    let fast = vec![copy(), entry("memory", Kind::Variant, Status::Ok, &[1 << 30], Some(2600.0))];
    let same = advise::advise(&req, &[view(H100, fast, None)]);
    assert!(base.iter().zip(&same).all(|(a, b)| close(a.step_ms_range.1, b.step_ms_range.1)));
}
