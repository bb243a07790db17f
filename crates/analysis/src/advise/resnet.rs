//! ResNet-50's memory-bound passes as eager PyTorch runs them, counted from the network's table
//! (`facts::networks::RESNET50`): what each pass reads and writes per image, in the
//! activations' width `e` (2 bytes under autocast).
//!
//! - Batch norm after each of the 53 convolutions, on its output: at inference one read and one
//!   write (4 bytes an element in fp16); in training the forward reads x and writes y, the
//!   backward reads x and dy and writes dx (4 and 6 bytes: the least cuDNN's kernels can move).
//!   Each is priced at the share of the bandwidth cuDNN's kernel for that pass reached on each
//!   shape (the batchnorm_fp16 family's baseline at inference, which PyTorch's eval mode calls,
//!   and its persistent training kernels, which its train mode calls), a pass in training the
//!   GPU did not measure at the inference share of the same shape.
//! - The rest at the copy's share: ReLU in place, forward reading and writing every activation it
//!   follows (each convolution's output but the projections' and the blocks' third, which the
//!   residual add takes first, then the ReLU after it); backward reading the output and the
//!   gradient and writing the gradient. The residual add of each of the 16 blocks reads two and
//!   writes one block output; backward, autograd sums the two branches' gradients, as many
//!   bytes. The stem's max pool reads its 112² x 64 and writes 56² x 64 (training also its int64
//!   indices, which CUDA's kernel writes at inference too; backward zero-fills and scatters
//!   back); the head's average pool; under autocast the images' cast to 16 bits. Training's
//!   update: SGD with momentum (20 bytes a parameter), under autocast also the GradScaler's
//!   unscaling (8) and the weights' 16-bit copies (6).

use crate::facts::family::FamilyId;
use crate::facts::networks::{RESNET50, RESNET50_STAGES};
use crate::facts::sheet::{self, Gpu};
use crate::measure::families::batchnorm;
use crate::measure::families::Shape;
use crate::schema::entry::{Kind, Status};
use crate::store::View;

use super::median;
use super::workload::Mode;

/// Per image, elements: every convolution's output; the projections' outputs; the blocks'
/// outputs (the residual adds'); the stem's output and the max pool's.
struct Counts {
    conv_out: f64,
    projections: f64,
    blocks: f64,
    stem: f64,
    pooled: f64,
}

fn counts() -> Counts {
    let conv_out = RESNET50.iter().map(|c| (c.count as u64 * c.out_hw() * c.out_hw() * c.k) as f64).sum();
    let out = |(hw, width, _): &(u64, u64, u32)| (hw * hw * 4 * width) as f64;
    let projections = RESNET50_STAGES.iter().map(out).sum();
    let blocks = RESNET50_STAGES.iter().map(|s| s.2 as f64 * out(s)).sum();
    let stem = &RESNET50[0];
    let stem = (stem.out_hw() * stem.out_hw() * stem.k) as f64;
    Counts { conv_out, projections, blocks, stem, pooled: stem / 4.0 }
}

/// Bytes of the passes other than batch norm, for a step of `batch` images and `params`
/// parameters, activations `e` bytes wide; `autocast`: fp32 weights and images cast to 16 bits.
pub fn stream_bytes(batch: u64, e: f64, mode: Mode, params: f64, autocast: bool) -> f64 {
    let c = counts();
    let relu = c.conv_out - c.projections;
    // The images cast (fp32 in, e out) under autocast; the head's average pool of 7² x 2048.
    let image = if autocast { (4.0 + e) * 224.0 * 224.0 * 3.0 } else { 0.0 };
    let avg_pool = e * (49.0 + 1.0) * 2048.0;
    // CUDA's max pool writes its int64 indices at inference too.
    let forward = image + 2.0 * e * relu + 3.0 * e * c.blocks + e * (c.stem + c.pooled) + 8.0 * c.pooled + avg_pool;
    let per_image = match mode {
        Mode::Infer => forward,
        Mode::Train => forward + 3.0 * e * relu + 3.0 * e * c.blocks + e * c.pooled + 8.0 * c.pooled + 2.0 * e * c.stem + avg_pool,
    };
    // SGD with momentum; under autocast also the GradScaler's unscaling and the weights' copies.
    let update = if mode == Mode::Train { params * (20.0 + if autocast { 8.0 + 6.0 } else { 0.0 }) } else { 0.0 };
    batch as f64 * per_image + update
}

/// The batch norms of a step: each distinct shape (n x h x w x c) and pass with the bytes its
/// batch norms move in all: at inference x in and y out; in training the forward's the same and
/// the backward's x and dy in, dx out (the batchnorm_fp16 family's shapes, `-train` and
/// `-backward` a fifth dimension).
pub fn batch_norm_bytes(batch: u64, e: f64, mode: Mode) -> Vec<(Shape, f64)> {
    let passes: &[(Option<u64>, f64)] = match mode {
        Mode::Infer => &[(None, 2.0)],
        Mode::Train => &[(Some(1), 2.0), (Some(2), 3.0)],
    };
    batchnorm::resnet50(batch)
        .into_iter()
        .flat_map(|(s, n)| {
            let elements = s.0.iter().product::<u64>() as f64;
            passes.iter().map(move |&(pass, per)| (Shape(s.0.iter().copied().chain(pass).collect()), n as f64 * elements * e * per))
        })
        .collect()
}

/// The share of the sheet's bandwidth cuDNN's batch norm reached on each shape, per measured GPU.
pub struct BnShares(Vec<(&'static Gpu, Vec<(Vec<u64>, f64)>)>);

impl BnShares {
    pub fn new(views: &[View]) -> BnShares {
        let mut all: Vec<(&'static Gpu, Vec<(Vec<u64>, f64)>)> = Vec::new();
        for v in views {
            let Some(gpu) = sheet::for_device(&v.device.name, v.device.sms) else { continue };
            let found = v
                .entries
                .iter()
                .filter(|e| {
                    FamilyId::parse(&e.family) == Some(FamilyId::BatchNormFp16) && e.kind == Kind::Baseline && e.status == Status::Ok
                })
                .filter_map(|e| Some((e.dims.clone(), e.rate? / gpu.bandwidth_gbs)));
            match all.iter_mut().find(|(g, _)| g.name == gpu.name) {
                Some((_, s)) => s.extend(found),
                None => all.push((gpu, found.collect())),
            }
        }
        all.retain(|(_, s)| !s.is_empty());
        BnShares(all)
    }

    /// Seconds for `items` (shape, bytes) on `gpu`: each shape and pass at the GPU's own share
    /// for it, else (a pass in training it did not measure) at its share for the same shape at
    /// inference, else its own median share of that pass, else the measured GPUs' median for
    /// the shape and pass (or at inference); None where no GPU measured a batch norm.
    pub fn time_s(&self, gpu: &Gpu, items: &[(Shape, f64)]) -> Option<f64> {
        let own = self.0.iter().find(|(g, _)| g.name == gpu.name).map(|(_, s)| s);
        let all_median = median(self.0.iter().flat_map(|(_, s)| s.iter().map(|x| x.1)).collect())?;
        let others = |d: &[u64]| median(self.0.iter().filter_map(|(_, s)| share_at(s, d)).collect());
        let share = |dims: &Vec<u64>| -> f64 {
            let inference = &dims[..4];
            let own_pass = own.and_then(|s| median(s.iter().filter(|x| x.0.get(4) == dims.get(4)).map(|x| x.1).collect()));
            own.and_then(|s| share_at(s, dims))
                .or_else(|| own.and_then(|s| share_at(s, inference)))
                .or(own_pass)
                .or_else(|| others(dims))
                .or_else(|| others(inference))
                .unwrap_or(all_median)
        };
        Some(items.iter().map(|(s, bytes)| bytes / (share(&s.0) * gpu.bandwidth_gbs * 1e9)).sum())
    }
}

/// A GPU's median share for the batch norms of exactly `dims` (shape and pass).
fn share_at(shares: &[(Vec<u64>, f64)], dims: &[u64]) -> Option<f64> {
    median(shares.iter().filter(|x| x.0 == dims).map(|x| x.1).collect())
}
