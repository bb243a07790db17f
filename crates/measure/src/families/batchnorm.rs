//! The batch-norm family at inference: `batchnorm_fp16`, y = (x - mean) / sqrt(var + eps) *
//! gamma + beta per channel, as a network in eval mode runs it after each convolution: fp16
//! activations channels last, fp32 running statistics and affine parameters, against cuDNN's
//! `cudnnBatchNormalizationForwardInference` (loaded at run time; skipped with the reason where
//! absent) and the DRAM ceiling. Shape: [n, h, w, c]. Work: the activations read once and written
//! once, 4 bytes an element, and the four parameter arrays read.
//!
//! Inputs: activations uniform in [-1, 1) made exact in fp16; means in [-0.5, 0.5), variances in
//! [0.25, 2.25), gammas in [0.5, 1.5), betas in [-0.5, 0.5), each channel its own; eps PyTorch's
//! default. The reference is every element in f64 from those exact values.
//!
//! A shape may name a pass in training instead (`-train`, `-backward`), cuDNN's alone:
//! `batchnorm_training`.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};
use half::f16;

use super::batchnorm_training::{self, BnPass};
use super::conv::RESNET_BATCH;
use super::inputs::{poison, random_f32, Readback};
use super::tensor::kinds::{Fp16, Kind};
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes, Suite};
use crate::error::Result;
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::networks::RESNET50;
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::dnn::unmade;
use crate::gpu::dnn_bn::{BatchNormInference, BnParams};
use crate::gpu::ffi::lab_batchnorm_args;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};
use crate::verify;

pub struct BatchNorm;
pub static BATCHNORM_FP16: BatchNorm = BatchNorm;

/// The baseline's name in tables and results.
pub const CUDNN_BN: &str = "cuDNN batch norm (inference)";
/// PyTorch's BatchNorm2d default.
pub const EPS: f64 = 1e-5;

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::BatchNormFp16,
    baseline: Some(CUDNN_BN),
    vendor_best: false,
    precision: Precision::Fp16Storage,
    unit: Unit::Gbs,
    arithmetic: sheet::Precision::Fp32,
    shapes: Shapes::Nhwc,
};

/// ResNet-50's batch norms at batch `n`: one after each convolution, on its output, as the
/// distinct n x p x p x k shapes in the order the network first meets them, each with how many
/// of the 53 have it.
pub fn resnet50(n: u64) -> Vec<(Shape, u32)> {
    let mut out: Vec<(Shape, u32)> = Vec::new();
    for c in &RESNET50 {
        let s = Shape(vec![n, c.out_hw(), c.out_hw(), c.k]);
        match out.iter_mut().find(|(o, _)| *o == s) {
            Some((_, count)) => *count += c.count,
            None => out.push((s, c.count)),
        }
    }
    out
}

impl Family for BatchNorm {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    /// Quick: stage 1's activations at batch 32. Else ResNet-50's stem, stage 1's widest and
    /// stage 4's, at batch 256.
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        if quick {
            vec![Shape(vec![32, 56, 56, 64])]
        } else {
            vec![Shape(vec![256, 112, 112, 64]), Shape(vec![256, 56, 56, 256]), Shape(vec![256, 7, 7, 2048])]
        }
    }
    fn suites(&self) -> Vec<Suite> {
        let shapes = || resnet50(RESNET_BATCH).into_iter().map(|(s, _)| s);
        vec![
            Suite {
                name: "resnet50",
                about: "ResNet-50's 53 batch norms as their 12 shapes, batch 256 (what advise prices its step from)",
                shapes: shapes().collect(),
            },
            Suite {
                name: "resnet50-training",
                about: "the same shapes' forward and backward in training, cuDNN's (what advise prices a training step from)",
                shapes: shapes().flat_map(|s| [1, 2].map(|pass| Shape(s.0.iter().copied().chain([pass]).collect()))).collect(),
            },
        ]
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        vec![Shape(vec![256, 56, 56, 256])]
    }
    /// The activations in and out at 2 bytes each (the backward reads x and dy), and the
    /// per-channel arrays: four floats read at inference, two read and two written in training.
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        let elements = shape.0[..4].iter().product::<u64>() as f64;
        let (ins, c) = (if BnPass::of(shape) == BnPass::Backward { 2.0 } else { 1.0 }, shape.0[3] as f64);
        let (read, written) = if BnPass::of(shape) == BnPass::Inference { (16.0, 0.0) } else { (8.0, 8.0) };
        Work { flops: 0.0, bytes_read: 2.0 * ins * elements + read * c, bytes_written: 2.0 * elements + written * c }
    }
    fn kernels_take(&self, shape: &Shape) -> std::result::Result<(), String> {
        match BnPass::of(shape) {
            BnPass::Inference => Ok(()),
            _ => Err("needs the inference pass: a pass in training is cuDNN's alone".into()),
        }
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        if BnPass::of(shape) != BnPass::Inference {
            return batchnorm_training::prepare(gpu, shape, seed);
        }
        let [n, h, w, c] = [0, 1, 2, 3].map(|i| shape.0[i] as usize);
        let (x_in, x) = Fp16::draw(n * h * w * c, seed);
        let spread = |lo: f32, width: f32, salt: u64| -> Vec<f32> {
            random_f32(c, seed ^ salt).into_iter().map(|v| lo + width * (v + 1.0) / 2.0).collect()
        };
        let stats = [spread(-0.5, 1.0, 0x11), spread(0.25, 2.0, 0x22), spread(0.5, 1.0, 0x33), spread(-0.5, 1.0, 0x44)];
        let up = |v: &Vec<f32>| gpu.stream.clone_htod(v);
        Ok(Box::new(BatchNormCase {
            src: gpu.stream.clone_htod(&x_in)?,
            // SAFETY: poisoned before every launch.
            dst: unsafe { gpu.stream.alloc::<f16>(x.len()) }?,
            dev: [up(&stats[0])?, up(&stats[1])?, up(&stats[2])?, up(&stats[3])?],
            dnn: BatchNormInference::new(gpu, [n, h, w, c]),
            x,
            stats,
            c,
            out: Readback::default(),
        }))
    }
}

/// Element i of the activations `x` normalised: `stats` are mean, var, gamma and beta.
pub fn reference(x: &[f32], stats: &[Vec<f32>; 4], c: usize, i: usize) -> f64 {
    let ch = i % c;
    let [mean, var, gamma, beta] = stats.each_ref().map(|s| s[ch] as f64);
    (x[i] as f64 - mean) / (var + EPS).sqrt() * gamma + beta
}

struct BatchNormCase {
    src: CudaSlice<f16>,
    dst: CudaSlice<f16>,
    /// mean, var, gamma, beta on the GPU.
    dev: [CudaSlice<f32>; 4],
    dnn: Result<BatchNormInference>,
    /// The activations' exact values, and the statistics and parameters.
    x: Vec<f32>,
    stats: [Vec<f32>; 4],
    c: usize,
    out: Readback<f16>,
}

impl Case for BatchNormCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::BatchNorm = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let grid = kernel.grid(gpu, 0, 0, self.x.len() as u64)?;
        let s = &gpu.stream;
        let (src, _s) = self.src.device_ptr(s);
        let (dst, _d) = self.dst.device_ptr_mut(s);
        let [(mean, _m), (var, _v), (gamma, _g), (beta, _b)] = self.dev.each_ref().map(|d| d.device_ptr(s));
        let (c, pixels) = (self.c as i32, (self.x.len() / self.c) as u64);
        let args = lab_batchnorm_args { src, dst, mean, var, gamma, beta, eps: EPS as f32, c, pixels };
        // SAFETY: batchnorm kernels take lab_batchnorm_args; src and dst hold pixels x c fp16
        // elements, the four parameter arrays c floats each.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, _gpu: &Gpu) -> Result<()> {
        let [mean, var, gamma, beta] = &self.dev;
        let dnn = self.dnn.as_ref().map_err(unmade)?;
        dnn.launch(&self.src, &mut self.dst, &BnParams { mean, var, gamma, beta, eps: EPS })
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = self.out.read(gpu, &self.dst)?;
        let (x, stats, c) = (&self.x, &self.stats, self.c);
        Ok(verify::check(out, out.len(), &|i| (i, reference(x, stats, c, i)), precision))
    }
}
