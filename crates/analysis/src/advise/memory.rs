//! The memory a step needs on one GPU, where the lab can say: what `advise` holds against each
//! GPU's memory, and `advise --against` against PyTorch's torch.cuda.max_memory_allocated.

use super::workload::{autocast, Mode, Precision, Workload, SEQ, VOCAB};

impl Workload {
    /// Memory a training step needs on one GPU, GB, where the lab can say. BERT: weights,
    /// gradients and Adam's state at 16 bytes a parameter (mixed precision), and the activations of
    /// Korthikanti et al. (2022), s·b·h·(34 + 5·a·s/h) bytes a layer at 2 bytes an element.
    /// ResNet-50: weights, gradients and SGD's momentum at 12 bytes a parameter, 2 more for the
    /// fp16 or bf16 copies autocast keeps through a step, the batch of fp32 images, and what
    /// autograd saves for the backward pass (`resnet_saved_bytes`). Inference keeps no
    /// gradients: ResNet-50's peak is its fp32 weights, the images and the most activations alive
    /// at once (`resnet_live_peak`); BERT's with its MLM head, under autocast, its fp32 weights
    /// and its loss's peak (`bert_mlm_loss_peak`). None for the rest of BERT's inference.
    pub fn memory_gb(&self, batch: u64, p: Precision, mode: Mode) -> Option<f64> {
        let images = 3.0 * 224.0 * 224.0 * 4.0;
        if mode == Mode::Infer {
            let live = match self {
                Workload::Resnet50 => batch as f64 * (images + resnet_live_peak(p) * p.out_bytes()),
                Workload::BertBaseMlm if autocast(p) => bert_mlm_loss_peak(batch, self.bert()?.1 as f64, p),
                _ => return None,
            };
            return Some((self.parameters()? * 4.0 + live) / 1e9);
        }
        if *self == Workload::Resnet50 {
            let per_parameter = 12.0 + if autocast(p) { 2.0 } else { 0.0 };
            return Some((self.parameters()? * per_parameter + batch as f64 * (images + resnet_saved_bytes(p))) / 1e9);
        }
        let (layers, hidden, heads) = self.bert()?;
        let (hidden, heads, s) = (hidden as f64, heads as f64, SEQ as f64);
        let act = layers * s * batch as f64 * hidden * (34.0 + 5.0 * heads * s / hidden) * p.bytes() / 2.0;
        Some((self.parameters()? * 16.0 + act) / 1e9)
    }
}

/// The most bytes alive at once, beside the fp32 weights, in an inference step of BERT with its
/// MLM head and loss under autocast: the loss's. The logits (tokens x vocabulary, in the GEMMs'
/// 16-bit type) and, beside them, what PyTorch's cross-entropy allocates under autocast, 6 bytes
/// a logit (measured with PyTorch 2.11 at 32 x 512 tokens: 3.0 GB over the logits' 1.0; a
/// log-softmax alone adds 4, its fp32 output); and the encoder's output and the head's
/// transform, each tokens x hidden in fp32 after its layer norm.
fn bert_mlm_loss_peak(batch: u64, hidden: f64, p: Precision) -> f64 {
    let tokens = (batch * SEQ) as f64;
    tokens * VOCAB as f64 * (p.out_bytes() + 6.0) + 2.0 * tokens * hidden * 4.0
}

/// What autograd keeps of one image through a ResNet-50 training step (torchvision's, ReLUs in
/// place), bytes, activations in the GEMMs' output type: each convolution's input (the stem's,
/// under autocast, the image's 16-bit copy; else the image itself, counted with the batch); each
/// batch norm's input, the convolution's output; each ReLU's output, which the next convolution
/// reads (the residual add keeps nothing, its output is the block's, ReLU'd in place); the max
/// pool's int64 indices. A stage's first block runs its 1x1 at the previous stage's resolution
/// (the stride is its 3x3's) and adds a downsampling convolution and batch norm, whose input is
/// the block's.
fn resnet_saved_bytes(p: Precision) -> f64 {
    let e = p.out_bytes();
    let image = if autocast(p) { 3.0 * 224.0 * 224.0 } else { 0.0 };
    let stem = image + 2.0 * 112.0 * 112.0 * 64.0 + 56.0 * 56.0 * 64.0;
    let stages = [(56.0, 64.0, 3.0, 56.0), (28.0, 128.0, 4.0, 56.0), (14.0, 256.0, 6.0, 28.0), (7.0, 512.0, 3.0, 14.0)];
    // Per block: the three convolutions' outputs (c, c, 4c channels) kept by their batch norms,
    // two ReLU outputs (c) and the block's (4c); in the first, the 1x1's two at `first` and
    // the downsampling batch norm's input (4c).
    let blocks: f64 =
        stages.iter().map(|&(hw, c, n, first)| n * 12.0 * c * hw * hw + 2.0 * c * (first * first - hw * hw) + 4.0 * c * hw * hw).sum();
    (stem + blocks) * e + 56.0 * 56.0 * 64.0 * 8.0
}

/// The most activations of one image alive at once in a ResNet-50 forward pass without autograd
/// (torchvision's blocks, ReLUs in place, an intermediate freed once the next layer read it):
/// a layer's input and output beside the block's input, kept for the residual; a stage's first
/// block runs its downsampling convolution and batch norm while the main path's output waits for
/// the add. Under autocast the stem's 16-bit copy of the image lives through the first
/// convolution. Elements; the largest is layer 1's first block (2,609,152).
fn resnet_live_peak(p: Precision) -> f64 {
    let image = if autocast(p) { 3.0 * 224.0 * 224.0 } else { 0.0 };
    let (stem, pooled): (f64, f64) = (112.0 * 112.0 * 64.0, 56.0 * 56.0 * 64.0);
    let mut peak = (image + stem).max(2.0 * stem).max(stem + pooled);
    // (output side, width c, blocks, the first block's input side and channels)
    let stages = [(56.0, 64.0, 3, 56.0, 64.0), (28.0, 128.0, 4, 56.0, 256.0), (14.0, 256.0, 6, 28.0, 512.0), (7.0, 512.0, 3, 14.0, 1024.0)];
    for (hw, c, blocks, first, first_in) in stages {
        let (out, wide) = (c * hw * hw, 4.0 * c * hw * hw);
        for b in 0..blocks {
            let (x, side) = if b == 0 { (first_in * first * first, first) } else { (wide, hw) };
            let entry = c * side * side;
            let phases = [x + 2.0 * entry, x + entry + out, x + 2.0 * out, x + out + wide, x + 2.0 * wide];
            peak = phases.into_iter().fold(peak, f64::max);
            if b == 0 {
                peak = peak.max(x + 3.0 * wide);
            }
        }
    }
    peak
}
