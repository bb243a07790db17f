//! `kernel-lab advise`: the workload's GEMMs, the ranking arithmetic against the spec sheet, the
//! constraints, and bad input as one-line errors.

use kernel_lab::analysis::advise::{self, workload, Mode, Precision, Request, Workload};
use kernel_lab::facts::sheet;

fn request(workload: Workload, precision: Precision) -> Request {
    let batch = workload.default_batch();
    Request { workload, mode: Mode::Train, precision, batch, budget_usd: None, power_w: None, gpus: 1 }
}

#[test]
fn a_bert_base_step_is_its_gemms_three_times_with_fused_attention() {
    let gemms = Workload::BertBase.gemms(32, Mode::Train);
    // Per layer 2 x 16384 tokens x 768 x (2304 + 768 + 3072) plus the MLP's way down (3072 -> 768),
    // three times (forward, two gradients), and fused attention (32 x 12 heads x 2 GEMMs of
    // 2 x 512 x 512 x 64) 3.5 times: its backward recomputes the scores.
    let flops: f64 = gemms.iter().map(|(s, n)| n * workload::work(s, Precision::Fp16).flops).sum();
    let dense = 2.0 * 16384.0 * (768.0 * 2304.0 + 768.0 * 768.0 + 768.0 * 3072.0 + 3072.0 * 768.0);
    let attention = 32.0 * 12.0 * 2.0 * (2.0 * 512.0 * 512.0 * 64.0);
    assert!((flops / (12.0 * (3.0 * dense + 3.5 * attention)) - 1.0).abs() < 1e-12, "{flops}");
    // The element-wise passes over the tokens' activations, bytes per element forward: four casts
    // fp32 -> fp16 (6 each: query's, key's, value's and the FFN's inputs), three dropouts over
    // 1 + 4 + 1 widths (5 each), two fp32 residual adds (10 each), GELU over 4 (4 each): 90 in
    // fp16; in fp32 no casts and 4-byte elements: 110. The two fp32 layer norms (8 each) are
    // apart, on the tokens x hidden matrix the layernorm family measures. Under autocast the
    // GEMMs' 12 x (12 x 768² + 9 x 768) weights and biases are cast (6 bytes) and their
    // gradients cast back (6); 6 bytes a parameter at inference; none in fp32.
    let weights = 12.0 * (12.0 * 768.0 * 768.0 + 9.0 * 768.0);
    let bytes = Workload::BertBase.stream_bytes(32, Precision::Fp16, Mode::Train).unwrap();
    assert!((bytes / (3.0 * 12.0 * 16384.0 * 768.0 * 90.0 + 12.0 * weights) - 1.0).abs() < 1e-12, "{bytes}");
    let bytes = Workload::BertBase.stream_bytes(32, Precision::Fp16, Mode::Infer).unwrap();
    assert!((bytes / (12.0 * 16384.0 * 768.0 * 60.0 + 6.0 * weights) - 1.0).abs() < 1e-12, "{bytes}");
    let bytes = Workload::BertBase.stream_bytes(32, Precision::Fp32, Mode::Train).unwrap();
    assert!((bytes / (3.0 * 12.0 * 16384.0 * 768.0 * 110.0) - 1.0).abs() < 1e-12, "{bytes}");
    // Backward, each reads x and dy and writes dx (12 each), as the layernorm_bwd family does.
    let n = Workload::BertBase.norms(32, Mode::Train).unwrap();
    assert!((n.forward / (12.0 * 16384.0 * 768.0 * 16.0) - 1.0).abs() < 1e-12 && n.dims == [16384, 768], "{n:?}");
    assert!((n.backward / (12.0 * 16384.0 * 768.0 * 24.0) - 1.0).abs() < 1e-12, "{n:?}");
    assert_eq!(Workload::Resnet50.norms(256, Mode::Train), None);
    // ResNet-50, per image: 11,113,984 convolution outputs, of which the projections' 1,505,280
    // (56² x 256 + 28² x 512 + 14² x 1024 + 7² x 2048); 5,519,360 block outputs (3, 4, 6 and 3
    // blocks of those shapes); the stem's 802,816 and the max pool's 200,704. ReLU follows the
    // 9,608,704 others. Inference: the images' cast to fp16 (6 bytes a value), ReLU 4 bytes, the
    // adds 6, the pool 2 + 2 and its int64 indices, the average pool's 7² x 2048 in, 2048 out.
    let (relu, blocks, stem, pooled) = (9_608_704.0, 5_519_360.0, 802_816.0, 200_704.0);
    let (image, avg_pool) = (6.0 * 150_528.0, 2.0 * 50.0 * 2048.0);
    let infer = image + 4.0 * relu + 6.0 * blocks + 2.0 * (stem + pooled) + 8.0 * pooled + avg_pool;
    let bytes = Workload::Resnet50.stream_bytes(256, Precision::Fp16, Mode::Infer).unwrap();
    assert!((bytes / (256.0 * infer) - 1.0).abs() < 1e-12, "{bytes}");
    // Training: the backward passes (ReLU's 6, the gradients' sum 6, the pool's scatter and
    // zero-fill, the average pool's), and 34 bytes a parameter for the update under autocast,
    // 20 (SGD with momentum alone) in fp32.
    let train = infer + 6.0 * relu + 6.0 * blocks + 10.0 * pooled + 4.0 * stem + avg_pool;
    let bytes = Workload::Resnet50.stream_bytes(256, Precision::Fp16, Mode::Train).unwrap();
    assert!((bytes / (256.0 * train + 25.6e6 * 34.0) - 1.0).abs() < 1e-12, "{bytes}");
    let fp32 = 2.0 * (train - image - 8.0 * pooled - 8.0 * pooled) + 16.0 * pooled;
    let bytes = Workload::Resnet50.stream_bytes(256, Precision::Fp32, Mode::Train).unwrap();
    assert!((bytes / (256.0 * fp32 + 25.6e6 * 20.0) - 1.0).abs() < 1e-12, "{bytes}");
    // Batch norm on every convolution output: 4 bytes an element at inference, 10 in training.
    for (mode, per) in [(Mode::Infer, 4.0), (Mode::Train, 10.0)] {
        let bn: f64 = Workload::Resnet50.batch_norms(256, Precision::Fp16, mode).unwrap().iter().map(|b| b.1).sum();
        assert!((bn / (256.0 * 11_113_984.0 * per) - 1.0).abs() < 1e-12, "{bn}");
    }
    assert_eq!(Workload::BertBase.batch_norms(32, Precision::Fp16, Mode::Train), None);
    assert_eq!(Workload::Gemm(kernel_lab::measure::families::Shape(vec![8, 8, 8])).stream_bytes(1, Precision::Fp16, Mode::Train), None);
    assert_eq!(Workload::BertLarge.gemms(8, Mode::Train)[0].0 .0[0], 8 * 512, "the batch sets the tokens");
    assert_eq!(Workload::parse("gemm 4096"), Ok(Workload::Gemm(kernel_lab::measure::families::Shape(vec![4096, 4096, 4096]))));
    for bad in ["bert", "gemm", "gemm 4x4", "gemm 0x1x1", "resnet"] {
        assert!(Workload::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn bert_base_mlm_is_bert_base_and_its_head_its_cross_entropy_and_adamw() {
    let (base, mlm) = (Workload::BertBase, Workload::parse("bert-base-mlm").unwrap());
    let tokens = 32.0 * 512.0;
    // Two more GEMMs, three times each: the head's 768 x 768 transform and its projection onto
    // the 30,522-word vocabulary, on every token.
    let flops = |w: &Workload| -> f64 { w.gemms(32, Mode::Train).iter().map(|(s, n)| n * workload::work(s, Precision::Fp16).flops).sum() };
    let head = 3.0 * 2.0 * tokens * 768.0 * (768.0 + 30522.0);
    assert!((flops(&mlm) - flops(&base) - head).abs() / head < 1e-12);
    // The head's GELU (4 bytes an element, three times), 36 bytes a logit for the fp32
    // cross-entropy under fp16 autocast, 28 bytes a parameter for AdamW and 8 for the
    // GradScaler's unscaling, and autocast's 12 bytes a parameter for the head's weights (its
    // transform's 768² + 768, the projection's 30522 x 769).
    let extra = mlm.stream_bytes(32, Precision::Fp16, Mode::Train).unwrap() - base.stream_bytes(32, Precision::Fp16, Mode::Train).unwrap();
    let head = 768.0 * 769.0 + 30522.0 * 769.0;
    let want = 3.0 * tokens * 768.0 * 4.0 + tokens * 30522.0 * 36.0 + 109.5e6 * (28.0 + 8.0) + 12.0 * head;
    assert!((extra / want - 1.0).abs() < 1e-12, "{extra} vs {want}");
    // In fp32 there are no casts: 24 bytes a logit.
    let extra32 =
        mlm.stream_bytes(32, Precision::Fp32, Mode::Train).unwrap() - base.stream_bytes(32, Precision::Fp32, Mode::Train).unwrap();
    assert!((extra32 / (3.0 * tokens * 768.0 * 8.0 + tokens * 30522.0 * 24.0 + 109.5e6 * 28.0) - 1.0).abs() < 1e-12);
    // Two more layer norms: the embeddings' and the head's.
    let (a, b) = (base.norms(32, Mode::Train).unwrap(), mlm.norms(32, Mode::Train).unwrap());
    assert!((b.forward / a.forward - 26.0 / 24.0).abs() < 1e-12 && (b.backward / a.backward - 26.0 / 24.0).abs() < 1e-12);
}

#[test]
fn without_measurements_each_gpu_is_its_bound_and_constraints_leave_gpus_out() {
    let req = request(Workload::Gemm(kernel_lab::measure::families::Shape(vec![8192, 8192, 8192])), Precision::Fp16);
    let rows = advise::advise(&req, &[]);
    let with_rate = sheet::GPUS.iter().filter(|g| g.rate(sheet::Precision::Fp16F32Acc).is_some()).count();
    assert_eq!(rows.len(), with_rate);
    for r in &rows {
        assert!(r.basis.contains("bound") && (r.step_ms - r.bound_ms).abs() < 1e-9, "{r:?}");
        let g = sheet::find(r.gpu).unwrap();
        // 2 x 8192³ FLOPs at the fp16 rate: compute-bound on every GPU of the sheet.
        let want = 2.0 * 8192f64.powi(3) / (g.rate(sheet::Precision::Fp16F32Acc).unwrap() * 1e12) * 1e3;
        assert!((r.step_ms / want - 1.0).abs() < 1e-9, "{}: {} vs {want}", r.gpu, r.step_ms);
        assert!((r.per_w - r.steps_per_s / g.tdp_w as f64).abs() < 1e-12);
    }
    assert!(rows.windows(2).all(|w| w[0].step_ms <= w[1].step_ms), "fastest first");

    let budget = Request { budget_usd: Some(2000.0), power_w: Some(400.0), ..req };
    let rows = advise::advise(&budget, &[]);
    for r in &rows {
        let g = sheet::find(r.gpu).unwrap();
        let fits = g.price_usd.is_some_and(|p| p as f64 <= 2000.0) && g.tdp_w as f64 <= 400.0;
        assert_eq!(r.excluded.is_none(), fits, "{r:?}");
    }
    let first_out = rows.iter().position(|r| r.excluded.is_some()).unwrap_or(rows.len());
    assert!(rows[first_out..].iter().all(|r| r.excluded.is_some()), "the ones left out come last");
}

#[test]
fn several_gpus_add_the_gradients_all_reduce_over_their_link() {
    let one = request(Workload::BertBase, Precision::Fp16);
    let four = Request { gpus: 4, ..one.clone() };
    let (a, b) = (advise::advise(&one, &[]), advise::advise(&four, &[]));
    for r in &b {
        let single = a.iter().find(|x| x.gpu == r.gpu).unwrap();
        let g = sheet::find(r.gpu).unwrap();
        // 2(n-1)/n x 110M fp16 gradients over the sheet's link (NVLink each way, else PCIe x16).
        let link = g.nvlink_gbs.map(|nv| nv as f64 / 2.0);
        let want = link.map(|bw| 1.5 * 110e6 * 2.0 / (bw * 1e9) * 1e3);
        if let Some(w) = want {
            assert!((r.allreduce_ms / w - 1.0).abs() < 1e-9, "{}: {} vs {w}", r.gpu, r.allreduce_ms);
        }
        assert!((r.step_ms - single.step_ms - r.allreduce_ms).abs() < 1e-9 && r.link.is_some());
        assert!((r.steps_per_s - 4.0 * 1e3 / r.step_ms).abs() < 1e-9);
    }
    let rtx = b.iter().find(|r| r.gpu == "RTX 4090").unwrap();
    assert!(rtx.link.as_deref().unwrap().contains("no NVLink"), "{:?}", rtx.link);
}

#[test]
fn bad_input_is_one_line() {
    for (args, want) in [
        (vec!["--workload", "gpt2"], "--workload"),
        (vec!["--workload", "bert-base", "--usd", "-5"], "--usd"),
        (vec!["--workload", "bert-base", "--watts", "0"], "--watts"),
        (vec!["--workload", "bert-base", "--precision", "fp4"], "fp4"),
        (vec!["--workload", "bert-base", "--batch", "0"], "--batch must be at least 1"),
        (vec!["--workload", "bert-base", "--gpu-count", "0"], "--gpu-count must be at least 1"),
        // The shape rule bench applies: a dimension over the lab's limit is refused.
        (vec!["--workload", "gemm 100000000000"], "over the lab's limit"),
        (vec!["--workload", "gemm 4096x4096"], "neither N nor MxNxK"),
        (vec!["--workload", "bert-base", "--results-dir", "/no/such"], "cannot read"),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kernel-lab")).arg("advise").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want) && err.trim_end().lines().count() == 1, "{args:?}: {err}");
        assert!(!err.contains("Some("), "no Rust debug text: {err}");
    }
}

#[test]
fn inference_is_the_forward_pass_alone_in_eval_mode() {
    let mlm = Workload::parse("bert-base-mlm").unwrap();
    let tokens = 32.0 * 512.0;
    let flops = |w: &Workload, m: Mode| -> f64 { w.gemms(32, m).iter().map(|(s, n)| n * workload::work(s, Precision::Fp16).flops).sum() };
    // The layers' and the head's GEMMs once, not three times; fused attention once, not 3.5 times.
    let attention = 2.0 * 12.0 * 2.0 * (32.0 * 12.0 * 512.0) * 512.0 * 64.0;
    let train = flops(&mlm, Mode::Train);
    let infer = flops(&mlm, Mode::Infer);
    assert!(((train - 3.5 * attention) / 3.0 - (infer - attention)).abs() / infer < 1e-12, "{train} {infer}");
    // Element-wise: no dropout, no backward, no AdamW; the loss's cast and log-softmax forward;
    // the weights' casts once (the layers' and the head's).
    let e = 2.0;
    let per_element = 4.0 * (4.0 + e) + 2.0 * (4.0 + e + 4.0) + 4.0 * 2.0 * e;
    let weights = 12.0 * (12.0 * 768.0 * 768.0 + 9.0 * 768.0) + 768.0 * 769.0 + 30522.0 * 769.0;
    let want = 12.0 * tokens * 768.0 * per_element + tokens * 768.0 * 2.0 * e + tokens * 30522.0 * ((e + 4.0) + 8.0) + (4.0 + e) * weights;
    let got = mlm.stream_bytes(32, Precision::Fp16, Mode::Infer).unwrap();
    assert!((got / want - 1.0).abs() < 1e-12, "{got} vs {want}");
    let (infer, train) = (mlm.norms(32, Mode::Infer).unwrap(), mlm.norms(32, Mode::Train).unwrap());
    assert!(infer.forward == train.forward && infer.backward == 0.0, "the forward alone: {infer:?}");
    // Its peak is the loss's: fp32 weights, fp16 logits and 6 bytes a logit beside them, and two
    // fp32 tokens x hidden tensors (the encoder's output and the head's transform).
    let peak = 109.5e6 * 4.0 + tokens * 30522.0 * (2.0 + 6.0) + 2.0 * tokens * 768.0 * 4.0;
    assert!((mlm.memory_gb(32, Precision::Fp16, Mode::Infer).unwrap() - peak / 1e9).abs() < 1e-9);
    assert_eq!(mlm.memory_gb(32, Precision::Fp32, Mode::Infer), None, "no autocast: not measured, not modelled");
    assert!(mlm.describe(32, Mode::Infer).starts_with("a BERT-base forward pass with its MLM head"));
    // Two GPUs in inference reduce no gradients.
    let req = Request { mode: Mode::Infer, gpus: 2, ..request(mlm, Precision::Fp16) };
    assert!(advise::advise(&req, &[]).iter().all(|r| r.allreduce_ms == 0.0));
}

/// A torch_step.py line for `gpu` that took `ms`.
fn torch_line(gpu: &str, workload: &str, mode: &str, ms: f64) -> String {
    format!(
        "{{\"workload\":\"{workload}\",\"mode\":\"{mode}\",\"batch\":32,\"gpu\":\"{gpu}\",\"time\":{{\"median_ms\":{ms},\"max_memory_allocated_gb\":13.0}},\"profile\":{{}}}}"
    )
}

#[test]
fn pytorchs_steps_are_held_to_the_prediction_for_their_gpu_workload_and_mode() {
    use kernel_lab::analysis::advise::against;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("steps.jsonl");
    let lines =
        [torch_line("NVIDIA H100 80GB HBM3", "bert-base-mlm", "train", 60.0), torch_line("NVIDIA H200", "bert-base-mlm", "infer", 20.0)];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let steps = against::read(&file).unwrap();
    let checks = against::check(&steps, &[]).unwrap();
    assert_eq!((checks[0].gpu, checks[1].gpu), ("H100 SXM", "H200 SXM"), "PyTorch's device names, matched to the sheet");
    for (c, (mode, ms)) in checks.iter().zip([(Mode::Train, 60.0), (Mode::Infer, 20.0)]) {
        let req = Request { mode, ..request(Workload::BertBaseMlm, Precision::Fp16) };
        let row = advise::advise(&req, &[]).into_iter().find(|r| r.gpu == c.gpu).unwrap();
        assert_eq!((c.mode, c.pytorch_ms, c.predicted_ms), (mode, ms, row.step_ms));
        assert!((c.error - (row.step_ms / ms - 1.0)).abs() < 1e-12);
        assert_eq!(c.inside, row.step_ms_range.0 <= ms && ms <= row.step_ms_range.1);
    }
    // The parts: the model's GEMMs and memory-bound passes add up to its step; torch.profiler's
    // categories are summed into the same parts only where the step lists its longest kernels.
    for c in &checks {
        let sum: f64 = c.parts.iter().map(|p| p.1).sum();
        assert!((sum - c.predicted_ms).abs() < 1e-9 && c.parts.iter().all(|p| p.2.is_none()), "{:?}", c.parts);
    }
    // The timed step's gaps are its median less the time kernels ran in the profiled step: from
    // busy_ms where the file has it, else the profiled step less its own gaps (which the
    // profiler widens). The host's phases add up to the step's host time.
    let profiled = torch_line("NVIDIA H200", "resnet50", "train", 40.0).replace(
        "\"profile\":{}",
        "\"profile\":{\"step_ms\":42.0,\"ms\":{\"gemm\":1.0,\"convolution\":2.0,\"attention\":0.5,\"normalisation\":4.0,\"element-wise\":3.0,\"launch gaps\":6.0},\"top\":[{\"kernel\":\"k\"}]}",
    );
    std::fs::write(&file, &profiled).unwrap();
    let c = &against::check(&against::read(&file).unwrap(), &[]).unwrap()[0];
    let measured: Vec<Option<f64>> = c.parts.iter().map(|p| p.2).collect();
    assert_eq!(measured, [Some(3.5), Some(7.0), Some(4.0)], "GEMMs, memory-bound passes, launch gaps");
    assert_eq!(c.host_ms, None);
    assert_eq!((c.kernels, c.gap_us()), (None, None), "no count, no gap a launch");
    let timed = profiled.replace("\"step_ms\":42.0", "\"step_ms\":42.0,\"busy_ms\":39.5,\"kernels\":250").replace(
        "\"max_memory_allocated_gb\":13.0",
        "\"max_memory_allocated_gb\":13.0,\"host_ms\":{\"forward\":6.0,\"backward\":7.5,\"update\":1.0}",
    );
    std::fs::write(&file, &timed).unwrap();
    let c = &against::check(&against::read(&file).unwrap(), &[]).unwrap()[0];
    assert_eq!((c.parts[2].2, c.host_ms), (Some(0.5), Some(14.5)));
    assert_eq!((c.kernels, c.memsets), (Some(250), None));
    assert!((c.gap_us().unwrap() - 2.0).abs() < 1e-9, "0.5 ms of gaps over 250 kernels: {:?}", c.gap_us());
    // Where the profile counts its memsets, each is a launch with its gap too.
    std::fs::write(&file, timed.replace("\"kernels\":250", "\"kernels\":200,\"other\":{\"memset\":{\"calls\":50,\"ms\":0.1}}")).unwrap();
    let c = &against::check(&against::read(&file).unwrap(), &[]).unwrap()[0];
    assert_eq!((c.kernels, c.memsets), (Some(200), Some(50)));
    assert!((c.gap_us().unwrap() - 2.0).abs() < 1e-9, "0.5 ms of gaps over 250 launches: {:?}", c.gap_us());
    // A GPU the sheet lacks, a mode that is neither, a line that is not a step: one-line errors.
    let one = |line: String| {
        std::fs::write(&file, line).unwrap();
        against::read(&file).map_err(|e| e.to_string()).and_then(|s| against::check(&s, &[]).map(drop))
    };
    assert!(one(torch_line("NVIDIA Quadro K1", "resnet50", "train", 1.0)).unwrap_err().contains("not a GPU of the spec sheet"));
    assert!(one(torch_line("NVIDIA H200", "resnet50", "eval", 1.0)).unwrap_err().contains("neither train nor infer"));
    assert!(one("{\"workload\": 3}".into()).unwrap_err().contains("line 1: not a torch_step.py step"));
}

/// The kernels the model counts for each step against those torch.profiler saw in the H100's
/// reference profiles: at inference all but two or three; in training fewer, by the helpers
/// cuDNN and cuBLASLt add for the engines they pick (workspace inits, split-K passes and
/// reductions, fused attention's preprocessing) and a few of PyTorch's small kernels, never more.
/// The memsets, one a library call: at inference within three of the profile's; in training
/// fewer, by the further memsets some engines need (a quarter of them at most).
#[test]
fn the_launches_counted_meet_the_h100_profiles() {
    use kernel_lab::analysis::advise::against;
    use kernel_lab::analysis::store::{self, Group};
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/nvidia-h100-80gb-hbm3-sm_90");
    let views = store::views(&store::read(&[folder.clone()]).unwrap(), Group::Model);
    let steps = against::read(&folder.join("pytorch/steps.jsonl")).unwrap();
    let checks = against::check(&steps, &views).unwrap();
    assert_eq!(checks.len(), 4);
    let queued = views[0].transfers.as_ref().and_then(|t| t.launches.as_ref()).unwrap().queued_us;
    for c in &checks {
        let model = c.predicted_launches.unwrap();
        let (kernels, memsets) = (c.kernels.unwrap() as f64, c.memsets.unwrap() as f64);
        let short = if c.mode == Mode::Infer { 3.0 } else { 0.15 * kernels };
        let k = model.kernels;
        assert!(k <= kernels && k >= kernels - short, "{} {:?}: {k} kernels counted, {kernels} profiled", c.workload, c.mode);
        let m = model.memsets;
        let fits = if c.mode == Mode::Infer { (m - memsets).abs() <= 3.0 } else { m <= memsets && m >= 0.75 * memsets };
        assert!(fits, "{} {:?}: {m} memsets counted, {memsets} profiled", c.workload, c.mode);
        let gaps = c.parts.iter().find(|p| p.0 == "launch gaps").unwrap();
        assert!((gaps.1 - model.total() * queued / 1e3).abs() < 1e-9, "{gaps:?}");
    }
}

/// The counts themselves, pinned: each was checked kernel by kernel against the H100's profiles
/// (`results/nvidia-h100-80gb-hbm3-sm_90/pytorch/steps.jsonl` lists every kernel a step launched,
/// and its memsets); a change to the count is a change to check there again.
#[test]
fn the_launch_counts_are_pinned() {
    let count = |workload: Workload, mode: Mode, p: Precision| {
        let req = Request { mode, ..request(workload, p) };
        let rows = advise::advise(&req, &[]);
        let n = rows[0].launches.unwrap();
        assert!(rows.iter().all(|r| r.launches == Some(n)), "one count on every GPU");
        (n.kernels, n.memsets)
    };
    let fp16 = Precision::Fp16;
    assert_eq!(count(Workload::Resnet50, Mode::Infer, fp16), (233.0, 54.0));
    assert_eq!(count(Workload::Resnet50, Mode::Train, fp16), (583.0, 161.0));
    assert_eq!(count(Workload::BertBaseMlm, Mode::Infer, fp16), (356.0, 86.0));
    assert_eq!(count(Workload::BertBaseMlm, Mode::Train, fp16), (1055.0, 246.0));
    // Without autocast: no casts, no GradScaler; the libraries are called as often.
    assert_eq!(count(Workload::Resnet50, Mode::Infer, Precision::Fp32), (233.0 - 57.0, 54.0));
    assert_eq!(count(Workload::BertBase, Mode::Infer, Precision::Fp32), (12.0 * 12.0, 12.0 * 7.0));
    assert_eq!(count(Workload::BertBase, Mode::Train, Precision::Fp32).1, 12.0 * 20.0);
    assert_eq!(count(Workload::BertLarge, Mode::Infer, fp16).1, 24.0 * 7.0);
    assert_eq!(count(Workload::BertLarge, Mode::Train, fp16).1, 24.0 * 20.0);
}
