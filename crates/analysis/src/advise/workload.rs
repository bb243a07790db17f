//! A workload as the lab can price it: its GEMMs per training step (the lab's own BERT and
//! ResNet-50 suites, or one GEMM) and the bytes of its gradients; the memory a step needs is
//! `memory.rs`'s.

use crate::facts::family::{FamilyId, GemmInput};
use crate::facts::networks::RESNET50;
use crate::facts::sheet::Precision as Sheet;
use crate::measure::families::conv_shape::{ConvShape, Pass};
use crate::measure::families::sgemm::{gemm_suites, gemm_work};
use crate::measure::families::shapes::Shapes;
use crate::measure::families::Shape;
use crate::schema::entry::Work;

/// The precision the workload computes in, and what follows from it (`--precision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    Fp32,
    Tf32,
    Fp16,
    Bf16,
    Int8,
    Fp8,
}

impl Precision {
    /// The sheet's rate the GEMMs run at.
    pub fn sheet(self) -> Sheet {
        match self {
            Precision::Fp32 => Sheet::Fp32,
            Precision::Tf32 => Sheet::Tf32,
            Precision::Fp16 => Sheet::Fp16F32Acc,
            Precision::Bf16 => Sheet::Bf16F32Acc,
            Precision::Int8 => Sheet::Int8,
            Precision::Fp8 => Sheet::Fp8F32Acc,
        }
    }

    /// Bytes of an output element: training writes fp16 and bf16 results (and fp8 GEMMs bf16
    /// ones); fp32, tf32 and int8 (int32) write 4.
    pub fn out_bytes(self) -> f64 {
        match self {
            Precision::Fp16 | Precision::Bf16 | Precision::Fp8 => 2.0,
            Precision::Fp32 | Precision::Tf32 | Precision::Int8 => 4.0,
        }
    }

    /// Bytes of an input element.
    pub fn bytes(self) -> f64 {
        match self {
            Precision::Fp32 | Precision::Tf32 => 4.0,
            Precision::Fp16 | Precision::Bf16 => 2.0,
            Precision::Int8 | Precision::Fp8 => 1.0,
        }
    }

    /// The lab's family that measures GEMMs in this precision.
    pub fn family(self) -> FamilyId {
        FamilyId::gemm(match self {
            Precision::Fp32 => GemmInput::Fp32,
            Precision::Tf32 => GemmInput::Tf32,
            Precision::Fp16 => GemmInput::Fp16,
            Precision::Int8 => GemmInput::Int8,
            Precision::Bf16 => GemmInput::Bf16,
            Precision::Fp8 => GemmInput::Fp8,
        })
    }
}

/// What a step runs (`--mode`, as `scripts/torch_step.py --mode` runs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Forward, backward and the optimizer's update (the model in training mode: dropout on).
    Train,
    /// The forward pass alone (the model in eval mode: dropout off, no gradients).
    Infer,
}

impl Mode {
    /// How many times a forward GEMM's FLOPs a step runs: training adds the inputs' gradient and
    /// the weights' gradient, each as many FLOPs as the forward.
    fn gemm_passes(self) -> f64 {
        match self {
            Mode::Train => 3.0,
            Mode::Infer => 1.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    BertBase,
    /// BERT-base with its masked-language-model head and AdamW's update: the step
    /// `scripts/torch_step.py --workload bert-base-mlm` trains with PyTorch.
    BertBaseMlm,
    BertLarge,
    Resnet50,
    Gemm(Shape),
}

/// BERT's sequence length; the batch counts sequences.
pub(super) const SEQ: u64 = 512;
/// Layers, hidden size, attention heads.
const BASE: (f64, u64, u64) = (12.0, 768, 12);
const LARGE: (f64, u64, u64) = (24.0, 1024, 16);
/// BERT's vocabulary: the MLM head's classes.
pub(super) const VOCAB: u64 = 30522;
/// Bytes a parameter AdamW's update moves (fused, fp32): it reads the weight, its gradient and
/// the two moments and writes the weight and the moments.
const ADAMW_BYTES: f64 = 7.0 * 4.0;

impl Workload {
    /// "bert-base", "bert-large", "resnet50" or "gemm MxNxK" ("gemm 4096" is square).
    pub fn parse(text: &str) -> Result<Workload, String> {
        match text.trim() {
            "bert-base" => Ok(Workload::BertBase),
            "bert-base-mlm" => Ok(Workload::BertBaseMlm),
            "bert-large" => Ok(Workload::BertLarge),
            "resnet50" => Ok(Workload::Resnet50),
            t => {
                let dims = t
                    .strip_prefix("gemm")
                    .map(str::trim)
                    .ok_or_else(|| format!("--workload '{t}': expected bert-base, bert-base-mlm, bert-large, resnet50 or gemm MxNxK"))?;
                // The shape rule bench, verify and tune apply: a GEMM the lab cannot run is not
                // one it can predict.
                Shapes::Gemm.parse(dims).map(Workload::Gemm).map_err(|m| format!("--workload '{t}': {m}"))
            }
        }
    }

    /// The batch a step of it takes when none is given (the suites' own).
    pub fn default_batch(&self) -> u64 {
        match self {
            Workload::BertBase | Workload::BertBaseMlm | Workload::BertLarge => 32,
            Workload::Resnet50 => 256,
            Workload::Gemm(_) => 1,
        }
    }

    /// What a step is, said in the table.
    pub fn describe(&self, batch: u64, mode: Mode) -> String {
        let text = self.describe_training(batch);
        match (mode, self) {
            (Mode::Train, _) | (_, Workload::Gemm(_)) => text,
            (Mode::Infer, _) => format!(
                "{} (inference: the forward pass alone)",
                text.replacen(" training step", " forward pass", 1)
                    .replace(", forward and backward", "")
                    .replace(", and AdamW's update", "")
                    .replace(", and SGD's update", "")
            ),
        }
    }

    fn describe_training(&self, batch: u64) -> String {
        match self {
            Workload::BertBase => format!("a BERT-base training step, {batch} x {SEQ} tokens: 12 layers' dense and attention GEMMs and their element-wise passes, forward and backward"),
            Workload::BertBaseMlm => format!("a BERT-base training step with its MLM head, {batch} x {SEQ} tokens: 12 layers' dense and attention GEMMs, the head's transform and its projection onto {VOCAB} classes, their element-wise passes and the cross-entropy, forward and backward, and AdamW's update"),
            Workload::BertLarge => format!("a BERT-large training step, {batch} x {SEQ} tokens: 24 layers' dense and attention GEMMs and their element-wise passes, forward and backward"),
            Workload::Resnet50 => format!(
                "a ResNet-50 training step, batch {batch}: its 53 convolutions (in fp16 at cuDNN's rate on each of their 23 shapes where the lab measured it, else as 5 implicit GEMMs at cuBLAS's efficiency), its batch norms, ReLUs, residual adds and max pool, forward and backward, and SGD's update"
            ),
            Workload::Gemm(s) => format!("one GEMM {}x{}x{}", s.0[0], s.0[1], s.0[2]),
        }
    }

    /// The step's GEMMs with how often each runs. Training runs each forward GEMM three times
    /// (forward, the inputs' gradient, the weights' gradient: the same FLOPs each), inference once.
    pub fn gemms(&self, batch: u64, mode: Mode) -> Vec<(Shape, f64)> {
        let passes = mode.gemm_passes();
        let suite = |name: &str| gemm_suites().into_iter().find(|s| s.name == name).map(|s| s.shapes).unwrap_or_default();
        let rows = |shapes: &[Shape], per: f64, m: u64| -> Vec<(Shape, f64)> {
            shapes.iter().map(|s| (Shape(vec![m, s.0[1], s.0[2]]), per)).collect()
        };
        // Per layer, per sequence and head: the scores Q·Kᵀ (s x s x d) and their weighting of V
        // (s x d x s), d = hidden / heads, as one batched call each: priced as a GEMM with the
        // batch and heads stacked into M (the same FLOPs; a batched call runs like a large GEMM).
        // Fused attention, as frameworks run it by default (FlashAttention): the backward
        // recomputes the scores, so in training the pair costs 1 + 2.5 times its forward FLOPs, not 3.
        // The GEMMs' roofline counts the scores' traffic, which a fused kernel never makes: on a
        // GPU of less bandwidth it prices the pair above what a fused kernel takes.
        let attention = |(layers, hidden, heads): (f64, u64, u64)| {
            let (d, rows) = (hidden / heads, batch * heads * SEQ);
            let per = if mode == Mode::Train { 3.5 } else { 1.0 } * layers;
            vec![(Shape(vec![rows, SEQ, d]), per), (Shape(vec![rows, d, SEQ]), per)]
        };
        match self {
            // The suite holds BERT-base's four layer GEMMs, then BERT-large's, at 32 x 512 tokens.
            Workload::BertBase => [rows(&suite("bert")[..4], passes * 12.0, batch * SEQ), attention(BASE)].concat(),
            // The head: a hidden x hidden transform, then the projection onto the vocabulary, on
            // every token (the loss then picks the masked ones).
            Workload::BertBaseMlm => {
                let (tokens, hidden) = (batch * SEQ, BASE.1);
                let head = [(Shape(vec![tokens, hidden, hidden]), passes), (Shape(vec![tokens, VOCAB, hidden]), passes)];
                [Workload::BertBase.gemms(batch, mode), head.to_vec()].concat()
            }
            Workload::BertLarge => [rows(&suite("bert")[4..8], passes * 24.0, batch * SEQ), attention(LARGE)].concat(),
            Workload::Resnet50 => {
                let shapes = suite("resnet");
                let per_image = |s: &Shape| s.0[0] / 256;
                // Blocks per stage 3, 4, 6, 3 (one 3x3 convolution each); two 1x1 per block.
                [3.0, 4.0, 6.0, 3.0, 32.0]
                    .iter()
                    .zip(&shapes)
                    .map(|(&n, s)| (Shape(vec![per_image(s) * batch, s.0[1], s.0[2]]), passes * n))
                    .collect()
            }
            Workload::Gemm(s) => vec![(s.clone(), 1.0)],
        }
    }

    /// The step's convolutions, each distinct shape and pass with how often it runs (training
    /// adds the input's and the filters' gradients; the stem has no input gradient), where the
    /// lab measures convolutions in the workload's precision (the conv family's fp16); None for
    /// the rest, which `gemms` prices.
    pub fn convs(&self, batch: u64, mode: Mode, p: Precision) -> Option<Vec<(ConvShape, f64)>> {
        match (self, p) {
            // Training adds each convolution's two gradients, but the stem's input's: the images
            // need none.
            (Workload::Resnet50, Precision::Fp16) => Some(
                RESNET50
                    .iter()
                    .enumerate()
                    .flat_map(|(i, c)| {
                        let s = ConvShape::of_network(c, batch);
                        let passes = match mode {
                            Mode::Infer => vec![Pass::Forward],
                            Mode::Train if i == 0 => vec![Pass::Forward, Pass::Filter],
                            Mode::Train => vec![Pass::Forward, Pass::Data, Pass::Filter],
                        };
                        passes.into_iter().map(move |pass| (s.with(pass), c.count as f64))
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The FLOPs of a single GEMM (None for a model's step, which is priced as a step).
    pub fn flops(&self, batch: u64) -> Option<f64> {
        match self {
            Workload::Gemm(_) => {
                Some(self.gemms(batch, Mode::Infer).iter().map(|(s, n)| n * 2.0 * s.0.iter().map(|&d| d as f64).product::<f64>()).sum())
            }
            _ => None,
        }
    }

    /// Parameters, for the gradients a data-parallel step all-reduces and the optimizer's state.
    pub fn parameters(&self) -> Option<f64> {
        match self {
            Workload::BertBase => Some(110e6),
            // BertForMaskedLM's, the decoder's weight tied to the word embeddings.
            Workload::BertBaseMlm => Some(109.5e6),
            Workload::BertLarge => Some(340e6),
            Workload::Resnet50 => Some(25.6e6),
            Workload::Gemm(_) => None,
        }
    }
}

impl Workload {
    /// The parameters BERT's GEMMs read, which autocast casts: each layer's four hidden x hidden
    /// and two hidden x 4 hidden matrices with their biases; with the MLM head also its
    /// transform and its projection onto the vocabulary (the word embeddings, tied).
    fn gemm_parameters(&self) -> Option<f64> {
        let (layers, hidden, _) = self.bert()?;
        let h = hidden as f64;
        let layer = 4.0 * (h * h + h) + (h * 4.0 * h + 4.0 * h) + (4.0 * h * h + h);
        let head = if *self == Workload::BertBaseMlm { h * h + h + VOCAB as f64 * (h + 1.0) } else { 0.0 };
        Some(layers * layer + head)
    }

    pub(super) fn bert(&self) -> Option<(f64, u64, u64)> {
        match self {
            Workload::BertBase | Workload::BertBaseMlm => Some(BASE),
            Workload::BertLarge => Some(LARGE),
            _ => None,
        }
    }

    /// Bytes the step's element-wise passes other than its layer and batch norms move, which run
    /// at memory speed. ResNet-50: ReLU, the residual adds, the max pool and the update, counted
    /// in `resnet`. BERT, as transformers' eager post-norm encoder layer runs under autocast: the
    /// residual stream and layer norms stay in fp32 (autocast's fp32 list) and are cast to the
    /// GEMMs' type by each GEMM that reads them, four a layer (query, key and value are three
    /// Linear layers, each casting its own input, and the FFN's first; torch.profiler counts 198
    /// casts in an inference step, the weights' among them); dropout (after attention, in the
    /// FFN, after the FFN) reads, writes and stores a byte mask; GELU runs over the FFN's 4 x
    /// hidden. Attention is fused: its scores never reach memory. The backward passes move about
    /// twice the forward's; inference runs the forward alone, in eval mode (no dropout). Autocast
    /// also casts every weight the GEMMs read each forward, and in training casts its gradient
    /// back; with the MLM head's step, the GradScaler unscales every gradient before the update.
    pub fn stream_bytes(&self, batch: u64, p: Precision, mode: Mode) -> Option<f64> {
        let passes = mode.gemm_passes();
        if *self == Workload::Resnet50 {
            return Some(super::resnet::stream_bytes(batch, p.bytes(), mode, self.parameters()?, autocast(p)));
        }
        let (layers, hidden, _) = self.bert()?;
        let (e, f32) = (p.out_bytes(), 4.0);
        let casts = if e < f32 { 4.0 * (f32 + e) } else { 0.0 };
        let dropouts = if mode == Mode::Train { (1.0 + 4.0 + 1.0) * (2.0 * e + 1.0) } else { 0.0 };
        let residuals = 2.0 * (f32 + e + f32);
        let gelu = 4.0 * 2.0 * e;
        // Bytes per element of the tokens' activations (tokens x hidden), forward; the layer
        // norms' are `norms`, priced apart.
        let per_element = casts + dropouts + residuals + gelu;
        let tokens = (batch * SEQ) as f64;
        // The weights' 16-bit copies (f32 in, e out) and in training their gradients' way back
        // (e in, f32 out).
        let weight_casts = match (e < f32, mode) {
            (false, _) => 0.0,
            (true, Mode::Infer) => f32 + e,
            (true, Mode::Train) => 2.0 * (f32 + e),
        };
        let layers_bytes = passes * layers * tokens * hidden as f64 * per_element + self.gemm_parameters()? * weight_casts;
        if *self != Workload::BertBaseMlm {
            return Some(layers_bytes);
        }
        // The head: GELU over its transform's output; the cross-entropy over every token's
        // logits, which autocast runs in fp32: a cast from the GEMM's type, log-softmax, and
        // backward the loss's dense gradient, log-softmax's (reading its output) and the cast
        // back; then AdamW's update of every parameter.
        let head_gelu = passes * tokens * hidden as f64 * 2.0 * e;
        let cast = if e < f32 { e + f32 } else { 0.0 };
        // Under autocast the GradScaler unscales every gradient (f32 in and out) before the update.
        let unscale = if e < f32 { 2.0 * f32 } else { 0.0 };
        let (cross_entropy, optimizer) = match mode {
            Mode::Train => (cast + 2.0 * f32 + f32 + 3.0 * f32 + cast, self.parameters()? * (ADAMW_BYTES + unscale)),
            // The loss is still computed (the script asks for it), forward only; no update.
            Mode::Infer => (cast + 2.0 * f32, 0.0),
        };
        Some(layers_bytes + head_gelu + tokens * VOCAB as f64 * cross_entropy + optimizer)
    }

    /// The step's batch norms (ResNet-50's, one after each convolution): each distinct shape with
    /// the bytes they move, which `resnet::BnShares` prices. None for a workload without them.
    pub fn batch_norms(&self, batch: u64, p: Precision, mode: Mode) -> Option<Vec<(Shape, f64)>> {
        (*self == Workload::Resnet50).then(|| super::resnet::batch_norm_bytes(batch, p.bytes(), mode))
    }

    /// The step's layer norms (two a layer; with the MLM head also the embeddings' and the
    /// head's own), over the matrix they normalise, tokens x hidden, which the layernorm and
    /// layernorm_bwd families measure. None for a workload without them.
    pub fn norms(&self, batch: u64, mode: Mode) -> Option<Norms> {
        let (layers, hidden, _) = self.bert()?;
        let count = 2.0 * layers + if *self == Workload::BertBaseMlm { 2.0 } else { 0.0 };
        let elements = count * (batch * SEQ * hidden) as f64;
        let backward = if mode == Mode::Train { elements * 12.0 } else { 0.0 };
        Some(Norms { forward: elements * 8.0, backward, dims: [batch * SEQ, hidden] })
    }
}

/// The bytes a step's layer norms move, in fp32. Forward, each reads and writes the residual
/// stream; backward, each reads x and dy and writes dx, what the layernorm_bwd family's rungs move
/// (PyTorch's backward reads x and dy once more, in a second kernel, for gamma's and beta's
/// gradients; the lab's fused rung takes them from the same read).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Norms {
    pub forward: f64,
    pub backward: f64,
    /// tokens x hidden: the shape whose measurements price them.
    pub dims: [u64; 2],
}

/// Whether a training step in `p` runs under autocast: fp32 weights, 16-bit activations.
pub(super) fn autocast(p: Precision) -> bool {
    matches!(p, Precision::Fp16 | Precision::Bf16)
}

/// The work of one GEMM of the workload in `p`.
pub fn work(shape: &Shape, p: Precision) -> Work {
    gemm_work(shape, p.bytes(), p.out_bytes())
}
