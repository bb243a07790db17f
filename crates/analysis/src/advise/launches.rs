//! A step's launch gaps: the kernels eager PyTorch launches for it, counted from the network as
//! `scripts/torch_step.py` runs it, times what a launch costs the GPU once the host runs ahead
//! of it (`kernel-lab transfers`' `launches`, measured per GPU).
//!
//! What a launch costs: with 100 launches of a one-block copy queued behind a long kernel, the
//! GPU takes `queued_us` a kernel, the copy's own brief run and the gap before the next together;
//! the same launches as one CUDA graph take `graph_us`. The gap between two kernels of an eager
//! step is at most `queued_us` (the copy takes some time) and at least `queued_us - graph_us` (a
//! graph's gaps are no longer than a stream's): the prediction takes the first, its range reaches
//! down to the second. The kernels' own time is priced elsewhere, as GEMMs and passes.
//!
//! The count is of PyTorch's operators, each one kernel or a known few; the helpers a vendor
//! library adds by the engine it picks (cuDNN's workspace inits and paddings, split-K
//! reductions, fused attention's preprocessing) are not counted, so in training, where they are
//! many, the count falls short of the profile's.

use crate::facts::networks::{RESNET50, RESNET50_STAGES};
use crate::facts::sheet::{self, Gpu};
use crate::store::View;

use super::workload::{autocast, Mode, Precision, Workload};

/// Kernels a step launches, where the workload is a network's step (None for one GEMM).
pub fn kernels(w: &Workload, mode: Mode, p: Precision) -> Option<f64> {
    let cast = if autocast(p) { 1.0 } else { 0.0 };
    let train = mode == Mode::Train;
    let (fwd, bwd, update) = match w {
        Workload::Resnet50 => resnet50(train, cast),
        Workload::BertBase | Workload::BertBaseMlm | Workload::BertLarge => {
            let (layers, _, _) = w.bert()?;
            let (f, b) = bert_layer(train, cast);
            let (fwd, bwd) = (layers * f, layers * b);
            if *w != Workload::BertBaseMlm {
                // The encoder alone: no embeddings, head or update.
                (fwd, bwd, 0.0)
            } else {
                let (hf, hb) = bert_mlm_ends(train, cast);
                (fwd + hf, bwd + hb, update_kernels(w, cast, 202.0))
            }
        }
        Workload::Gemm(_) => return None,
    };
    Some(if train { fwd + bwd + update } else { fwd })
}

/// ResNet-50 (forward, backward, update): per convolution its weight's cast under autocast, the
/// convolution and its batch norm (in training also the norm's `num_batches_tracked += 1`); a
/// ReLU after every convolution but the projections and the blocks' thirds, and after each
/// residual add; the images' cast, the two pools, the fc with its weight's and bias's casts, the
/// loss's log-softmax and NLL. Backward: each of those but the casts once more (the pools' and
/// the fc's two and three: zero-fill and scatter, the input's and weight's gradients and the
/// bias's sum; no input gradient for the stem), the residual adds' gradient sums, each weight's
/// gradient cast back to fp32. The update: SGD's fused foreach kernels for 161 tensors.
fn resnet50(train: bool, cast: f64) -> (f64, f64, f64) {
    let convs: f64 = RESNET50.iter().map(|c| c.count as f64).sum();
    let projections = RESNET50_STAGES.len() as f64;
    let blocks: f64 = RESNET50_STAGES.iter().map(|s| s.2 as f64).sum();
    let relus = convs - projections;
    let casts = cast * (1.0 + convs + 2.0);
    let forward = casts + 2.0 * convs + relus + blocks + 2.0 + 1.0 + 2.0 + if train { convs } else { 0.0 };
    let backward = 2.0 + 3.0 + 1.0 + 2.0 + relus + convs + (convs - 1.0) + convs + blocks + cast * (convs + 2.0);
    // Each convolution's weight, its batch norm's two, the fc's two.
    let tensors = convs + 2.0 * convs + 2.0;
    (forward, backward, update_kernels(&Workload::Resnet50, cast, tensors))
}

/// One BERT layer (forward, backward), as transformers' eager post-norm layer runs it: six GEMMs
/// (query, key, value, attention's output, the FFN's two), fused attention, two residual adds,
/// two layer norms, GELU; under autocast each GEMM's weight and bias cast and four inputs
/// (query's, key's, value's, the FFN's first); in training two dropouts and attention's RNG
/// offsets. Backward: each GEMM's two gradients and its bias's sum, attention's, the dropouts',
/// each norm's input and parameter gradients, GELU's, four gradient sums where the stream feeds
/// several layers, and each cast's gradient cast back.
fn bert_layer(train: bool, cast: f64) -> (f64, f64) {
    let forward = cast * 16.0 + 6.0 + 1.0 + 2.0 + 2.0 + 1.0 + if train { 3.0 } else { 0.0 };
    let backward = 12.0 + 6.0 + 1.0 + 2.0 + 4.0 + 1.0 + 4.0 + cast * 16.0;
    (forward, backward)
}

/// What the MLM step adds to the layers (forward, backward): the embeddings (three gathers, two
/// adds, a layer norm, in training a dropout), the head's transform (GEMM, GELU, layer norm) and
/// projection onto the vocabulary, each with its input's, weight's and bias's casts, the loss in
/// fp32 (a cast, log-softmax, NLL). Backward: the loss's, the head's GEMMs' gradients and bias
/// sums, its GELU's and norm's, the casts back, the tied weight's two gradients summed, and the
/// embeddings': dropout, layer norm, and per table the dense backward (for the words and the
/// positions a radix sort of the 64-bit ids, eight passes, and about ten kernels to sum each
/// id's rows: 18; for the two token types one kernel).
fn bert_mlm_ends(train: bool, cast: f64) -> (f64, f64) {
    let embeddings = 3.0 + 2.0 + 1.0 + if train { 1.0 } else { 0.0 };
    let head = 2.0 * cast * 3.0 + 2.0 + 1.0 + 1.0;
    let loss = cast + 2.0;
    let backward = (2.0 + cast) + (2.0 * 3.0 + 1.0 + 2.0 + cast * 6.0) + 1.0 + (1.0 + 2.0 + 2.0 * 18.0 + 1.0);
    (embeddings + head + loss, backward)
}

/// The update's kernels: the optimizer's fused foreach kernel and, under autocast, the
/// GradScaler's unscaling (each launch of a foreach kernel takes up to 320 chunks of 65,536
/// elements, a tensor at least one) and its four small kernels (the loss's scaling, the inverse
/// scale, zeroing the inf flag, the scale's update).
fn update_kernels(w: &Workload, cast: f64, tensors: f64) -> f64 {
    let params = w.parameters().unwrap_or(0.0);
    let foreach = ((params / 65536.0 + tensors) / 320.0).ceil();
    foreach + cast * (foreach + 4.0)
}

/// A measured launch cost, microseconds a kernel: the gap's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Gap {
    pub low_us: f64,
    pub high_us: f64,
}

/// The launch costs of the measured GPUs, from each view's newest transfers run.
pub struct LaunchCosts(Vec<(&'static Gpu, Gap)>);

impl LaunchCosts {
    pub fn new(views: &[View]) -> LaunchCosts {
        let mut all: Vec<(&'static Gpu, Gap)> = Vec::new();
        for v in views {
            let (Some(gpu), Some(l)) =
                (sheet::for_device(&v.device.name, v.device.sms), v.transfers.as_ref().and_then(|t| t.launches.as_ref()))
            else {
                continue;
            };
            if !all.iter().any(|(g, _)| g.name == gpu.name) {
                all.push((gpu, Gap { low_us: (l.queued_us - l.graph_us).max(0.0), high_us: l.queued_us }));
            }
        }
        LaunchCosts(all)
    }

    /// The GPU's own gap, else the measured GPUs' median (a launch's cost is mostly the host's
    /// and the driver's); None where no GPU measured it.
    pub fn gap(&self, gpu: &Gpu) -> Option<Gap> {
        if let Some((_, g)) = self.0.iter().find(|(g, _)| g.name == gpu.name) {
            return Some(*g);
        }
        let median = |f: fn(&Gap) -> f64| {
            let mut v: Vec<f64> = self.0.iter().map(|(_, g)| f(g)).collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        Some(Gap { low_us: median(|g| g.low_us)?, high_us: median(|g| g.high_us)? })
    }
}
