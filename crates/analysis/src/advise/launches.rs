//! A step's launch gaps: what eager PyTorch launches for it, counted from the network as
//! `scripts/torch_step.py` runs it, times what a launch costs the GPU once the host runs ahead
//! of it (`kernel-lab transfers`' `launches`, measured per GPU).
//!
//! What a launch costs: with 100 launches of a one-block copy queued behind a long kernel, the
//! GPU takes `queued_us` a kernel, the copy's own brief run and the gap before the next together;
//! the same launches as one CUDA graph take `graph_us`. The gap between two kernels of an eager
//! step is at most `queued_us` (the copy takes some time) and at least `queued_us - graph_us` (a
//! graph's gaps are no longer than a stream's): the prediction takes the first, its range reaches
//! down to the second. A step whose GPU also waits for its host (where a run of short kernels
//! takes the GPU less time than eager PyTorch needs to issue them) has longer gaps than either.
//! The kernels' own time is priced elsewhere, as GEMMs and passes.
//!
//! The count is of PyTorch's operators, each one kernel or a known few, and of the memsets the
//! vendor libraries put on the stream: on the Hopper GPUs profiled, cuBLASLt and cuDNN zero a
//! workspace before nearly every GEMM, convolution and fused attention they run, one memset a
//! call (a memset is no kernel, but it is queued and leaves its gap as a kernel does; older
//! architectures' engines may need fewer). Not counted: the helpers a vendor library adds for the
//! engine it picks (cuDNN's workspace inits and paddings, split-K passes and reductions, fused
//! attention's preprocessing) and their further memsets, and PyTorch's own small kernels around
//! the loss and the GradScaler beyond the four named in `update`.

use serde::Serialize;

use crate::facts::networks::{RESNET50, RESNET50_STAGES};
use crate::facts::sheet::{self, Gpu};
use crate::store::View;

use super::workload::{autocast, Mode, Precision, Workload};

/// What a network's step puts on the GPU's stream: its kernels and the vendor libraries'
/// memsets, each a launch with its gap.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Launches {
    pub kernels: f64,
    pub memsets: f64,
}

impl Launches {
    pub fn total(&self) -> f64 {
        self.kernels + self.memsets
    }
}

/// The launches of a network's step (None for one GEMM).
pub fn count(w: &Workload, mode: Mode, p: Precision) -> Option<Launches> {
    Some(Launches { kernels: kernels(w, mode, p)?, memsets: library_calls(w, mode)? })
}

/// The step's calls into cuBLASLt and cuDNN, a memset each. ResNet-50: each convolution and the
/// fc, in training also each one's two gradients (no input gradient for the stem). BERT: per
/// layer six GEMMs and fused attention, in training each GEMM's two gradients and attention's
/// backward (the encoder's input taken to need its gradient, as embeddings below it do); the MLM
/// head's two GEMMs and, in training, their four gradients.
fn library_calls(w: &Workload, mode: Mode) -> Option<f64> {
    let train = mode == Mode::Train;
    Some(match w {
        Workload::Resnet50 => {
            let convs: f64 = RESNET50.iter().map(|c| c.count as f64).sum();
            let forward = convs + 1.0;
            forward + if train { (convs - 1.0) + convs + 2.0 } else { 0.0 }
        }
        Workload::BertBase | Workload::BertLarge | Workload::BertBaseMlm => {
            let (layers, _, _) = w.bert()?;
            let head = if *w == Workload::BertBaseMlm { 2.0 } else { 0.0 };
            let forward = layers * 7.0 + head;
            forward + if train { layers * 13.0 + 2.0 * head } else { 0.0 }
        }
        Workload::Gemm(_) => return None,
    })
}

/// Kernels a step launches, where the workload is a network's step (None for one GEMM).
fn kernels(w: &Workload, mode: Mode, p: Precision) -> Option<f64> {
    let cast = if autocast(p) { 1.0 } else { 0.0 };
    let train = mode == Mode::Train;
    let params = w.parameters()?;
    let (forward, backward, update) = match w {
        Workload::Resnet50 => {
            let (f, b, tensors) = resnet50(train, cast);
            // SGD with momentum: the weights, their gradients and the momenta, three lists.
            (f, b, foreach(tensors, params, 3) + scaler(cast, tensors, params))
        }
        Workload::BertBase | Workload::BertLarge => {
            // The encoder alone: no embeddings, head or update.
            let (layers, _, _) = w.bert()?;
            let (f, b) = bert_layer(train, cast);
            (layers * f, layers * b, 0.0)
        }
        Workload::BertBaseMlm => {
            let (layers, _, _) = w.bert()?;
            let ((f, b), (ends_f, ends_b)) = (bert_layer(train, cast), bert_mlm_ends(train, cast));
            // Each layer's 16 tensors (four dense layers' weights and biases, two layer norms'
            // two each, the FFN's two pairs), the embeddings' three tables and layer norm, the
            // head's transform, layer norm and bias.
            let tensors = 16.0 * layers + 5.0 + 5.0;
            // AdamW (fused): the weights, gradients and two moments, four lists, after adding 1
            // to each tensor's step count; under the GradScaler it takes the count back where
            // the gradients were not finite (two lists: the counts and the flag).
            let adamw = foreach(tensors, tensors, 1) + foreach(tensors, params, 4) + cast * foreach(tensors, tensors, 2);
            (layers * f + ends_f, layers * b + ends_b, adamw + scaler(cast, tensors, params))
        }
        Workload::Gemm(_) => return None,
    };
    Some(if train { forward + backward + update } else { forward })
}

/// ResNet-50's kernels (forward, backward) and its parameter tensors. Forward: per
/// convolution its weight's cast under autocast, the convolution and its batch norm (in training
/// also the norm's `num_batches_tracked += 1`); a ReLU after every convolution but the
/// projections and the blocks' thirds, and one after each residual add; the images' cast, the max
/// pool and the average pool, the fc with its weight's and bias's casts, the loss (log-softmax,
/// its output cast to fp32, NLL). Backward: the loss's (NLL, the cast back, log-softmax), the
/// fc's input and weight gradients and its bias's sum, the average pool's, the max pool's
/// zero-fill and scatter, each ReLU's, batch norm's and convolution's (the input's gradient
/// and the filters', no input gradient for the stem), the residual adds' gradient sums, and
/// each cast weight's gradient cast back to fp32.
fn resnet50(train: bool, cast: f64) -> (f64, f64, f64) {
    let convs: f64 = RESNET50.iter().map(|c| c.count as f64).sum();
    let projections = RESNET50_STAGES.len() as f64;
    let blocks: f64 = RESNET50_STAGES.iter().map(|s| s.2 as f64).sum();
    let relus = (convs - projections - blocks) + blocks;
    let weight_casts = cast * (convs + 2.0);
    let counters = if train { convs } else { 0.0 };
    let forward = cast + weight_casts + convs + convs + counters + relus + blocks + 2.0 + 1.0 + (2.0 + cast);
    let fc = 3.0;
    let pools = 1.0 + 2.0;
    let conv_grads = (convs - 1.0) + convs;
    let backward = (2.0 + cast) + fc + pools + relus + convs + conv_grads + blocks + weight_casts;
    // Each convolution's weight, its batch norm's two, the fc's two.
    (forward, backward, convs + 2.0 * convs + 2.0)
}

/// One BERT layer (forward, backward), as transformers' eager post-norm layer runs it: six GEMMs
/// (query, key, value, attention's output, the FFN's two), fused attention, two residual adds,
/// two layer norms, GELU; under autocast each GEMM's weight and bias cast and four inputs
/// (query's, key's, value's, the FFN's first); in training two dropouts and attention's RNG
/// offsets. Backward: each GEMM's two gradients and its bias's sum, attention's, the dropouts',
/// each norm's input and parameter gradients, GELU's, four gradient sums where the stream feeds
/// several layers (query, key and value's input also feeds the residual; so does the FFN's),
/// each cast's gradient cast back, and under autocast the residual adds' gradients cast to fp16
/// for their fp16 branches.
fn bert_layer(train: bool, cast: f64) -> (f64, f64) {
    let casts = cast * (12.0 + 4.0);
    let forward = casts + 6.0 + 1.0 + 2.0 + 2.0 + 1.0 + if train { 2.0 + 1.0 } else { 0.0 };
    let backward = 6.0 * 2.0 + 6.0 + 1.0 + 2.0 + 2.0 * 2.0 + 1.0 + 4.0 + casts + cast * 2.0;
    (forward, backward)
}

/// What the MLM step adds to the layers (forward, backward): the embeddings (three gathers, two
/// adds, a layer norm, in training a dropout), the head's transform (GEMM, GELU, layer norm, whose
/// fp16 input autocast casts to fp32) and projection onto the vocabulary, each GEMM with its
/// input's, weight's and bias's casts, and the loss (log-softmax, its output cast to fp32, NLL).
/// Backward: the loss's (NLL, the cast back, log-softmax), the head's two GEMMs' gradients and
/// bias sums, its GELU's and layer norm's (with its input's cast back), the GEMMs' casts back,
/// the tied weight's two gradients summed, and the embeddings': dropout, layer norm, and per table
/// the dense backward (for the words and the positions a radix sort of the 64-bit ids, eight
/// passes, and a dozen kernels to sum each id's rows: 20 each; for the two token types one).
fn bert_mlm_ends(train: bool, cast: f64) -> (f64, f64) {
    let embeddings = 3.0 + 2.0 + 1.0 + if train { 1.0 } else { 0.0 };
    let gemm_casts = cast * 2.0 * 3.0;
    let head = 2.0 + gemm_casts + 1.0 + (1.0 + cast);
    let loss = 2.0 + cast;
    let head_grads = 2.0 * 3.0 + 1.0 + (2.0 + cast) + gemm_casts;
    let embedding_grads = 1.0 + 2.0 + 2.0 * 20.0 + 1.0;
    (embeddings + head + loss, (2.0 + cast) + head_grads + 1.0 + embedding_grads)
}

/// The launches of one fused foreach kernel over `tensors` of `elements` in all, on `lists`
/// tensor lists: PyTorch's `multi_tensor_apply` launches once it holds 320 chunks of 65,536
/// elements (each tensor at least one), or its cap of tensors for that many lists.
fn foreach(tensors: f64, elements: f64, lists: usize) -> f64 {
    const CAP: [f64; 5] = [110.0, 64.0, 48.0, 36.0, 30.0];
    let by_chunks = ((elements / 65536.0 + tensors) / 320.0).ceil();
    by_chunks.max((tensors / CAP[lists - 1]).ceil())
}

/// Under autocast, the GradScaler's kernels: its unscaling of every gradient (one list) and
/// four small ones (the loss's scaling, the inverse scale, zeroing the inf flag, the scale's
/// update).
fn scaler(cast: f64, tensors: f64, params: f64) -> f64 {
    cast * (foreach(tensors, params, 1) + 4.0)
}

/// A measured launch cost, microseconds a kernel: the gap's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Gap {
    pub low_us: f64,
    pub high_us: f64,
}

/// The launch costs of the measured GPUs, each GPU's from its newest transfers run that
/// measured them.
pub struct LaunchCosts(Vec<(&'static Gpu, String, Gap)>);

impl LaunchCosts {
    pub fn new(views: &[View]) -> LaunchCosts {
        let mut all: Vec<(&'static Gpu, String, Gap)> = Vec::new();
        for v in views {
            let (Some(gpu), Some(t)) = (sheet::for_device(&v.device.name, v.device.sms), v.transfers.as_ref()) else { continue };
            let Some(l) = t.launches.as_ref() else { continue };
            let gap = Gap { low_us: (l.queued_us - l.graph_us).max(0.0), high_us: l.queued_us };
            match all.iter_mut().find(|(g, _, _)| g.name == gpu.name) {
                Some(seen) if seen.1 < t.date => *seen = (gpu, t.date.clone(), gap),
                Some(_) => {}
                None => all.push((gpu, t.date.clone(), gap)),
            }
        }
        LaunchCosts(all)
    }

    /// The GPU's own gap, else the measured GPUs' median (a launch's cost is mostly the host's
    /// and the driver's); None where no GPU measured it.
    pub fn gap(&self, gpu: &Gpu) -> Option<Gap> {
        if let Some((_, _, g)) = self.0.iter().find(|(g, _, _)| g.name == gpu.name) {
            return Some(*g);
        }
        let all = |f: fn(&Gap) -> f64| super::median(self.0.iter().map(|(_, _, g)| f(g)).collect());
        Some(Gap { low_us: all(|g| g.low_us)?, high_us: all(|g| g.high_us)? })
    }
}
