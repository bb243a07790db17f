//! The batch-norm family's two passes in training, cuDNN's alone (the lab's rung runs the
//! inference pass): the forward, which normalises with the batch's own mean and variance and
//! saves the mean and inverse deviation, and the backward, which turns dy into dx and gamma's and
//! beta's gradients (`gpu::dnn_bn_training`). A shape names its pass (`NxHxWxC-train`,
//! `NxHxWxC-backward`, a fifth dimension 1 or 2).
//!
//! The references, in f64 from the inputs' exact values, N = n h w pixels a channel: the mean
//! and biased variance of each channel; y = (x - mean) / sqrt(var + eps) gamma + beta; the saved
//! mean and 1 / sqrt(var + eps); dbeta = the sum of dy, dgamma = the sum of dy x^ (x^ the
//! normalised x), dx = gamma / sqrt(var + eps) (dy - dbeta / N - x^ dgamma / N). Every element of
//! every output is checked: y or dx in one norm, each per-channel array in its own.

use crate::gpu::cuda::CudaSlice;
use half::f16;

use super::batchnorm::EPS;
use super::inputs::{poison, random_f32, Readback};
use super::tensor::kinds::{Fp16, Kind};
use super::{Case, Shape};
use crate::error::{LabError, Result};
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::dnn::unmade;
use crate::gpu::dnn_bn_training::{BatchNormTraining, BnTrainParams};
use crate::schema::check::{Check, Precision};
use crate::verify;

/// Which pass of a batch norm a shape times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BnPass {
    /// With the running statistics, as a network in eval mode runs it (the rung's and cuDNN's).
    Inference,
    /// The forward in training, with the batch's statistics.
    Train,
    Backward,
}

impl BnPass {
    pub fn of(shape: &Shape) -> BnPass {
        match shape.0.get(4) {
            Some(1) => BnPass::Train,
            Some(2) => BnPass::Backward,
            _ => BnPass::Inference,
        }
    }
}

/// Per channel of x (pixels x c), the mean and the biased variance, in f64.
pub fn batch_stats(x: &[f32], c: usize) -> Vec<(f64, f64)> {
    let pixels = (x.len() / c) as f64;
    let mut sums = vec![(0.0f64, 0.0f64); c];
    for (i, &v) in x.iter().enumerate() {
        let s = &mut sums[i % c];
        s.0 += v as f64;
        s.1 += v as f64 * v as f64;
    }
    sums.into_iter()
        .map(|(s, s2)| {
            let mean = s / pixels;
            (mean, (s2 / pixels - mean * mean).max(0.0))
        })
        .collect()
}

/// dx for every element and, per channel, dgamma then dbeta, in f64.
pub fn backward_reference(x: &[f32], dy: &[f32], gamma: &[f32], c: usize) -> (Vec<f64>, Vec<f64>) {
    let stats = batch_stats(x, c);
    let pixels = (x.len() / c) as f64;
    let norm = |i: usize| (x[i] as f64 - stats[i % c].0) / (stats[i % c].1 + EPS).sqrt();
    let mut sums = vec![0.0f64; 2 * c];
    for (i, &g) in dy.iter().enumerate() {
        sums[i % c] += g as f64 * norm(i);
        sums[c + i % c] += g as f64;
    }
    let dx = (0..x.len())
        .map(|i| {
            let ch = i % c;
            gamma[ch] as f64 / (stats[ch].1 + EPS).sqrt() * (dy[i] as f64 - sums[c + ch] / pixels - norm(i) * sums[ch] / pixels)
        })
        .collect();
    (dx, sums)
}

/// One pass in training: x (and dy) on the GPU, cuDNN's op, the references of every output.
struct TrainingCase {
    pass: BnPass,
    x: CudaSlice<f16>,
    dy: Option<CudaSlice<f16>>,
    /// y or dx.
    dst: CudaSlice<f16>,
    params: BnTrainParams,
    dnn: Result<BatchNormTraining>,
    /// y or dx; then the saved mean and inverse deviation, or dgamma and dbeta, each of c.
    want: Vec<f64>,
    want_channels: Vec<f64>,
    c: usize,
    out: Readback<f16>,
}

/// A training pass of `shape` ([n, h, w, c, pass]).
pub fn prepare(gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
    let [n, h, w, c] = [0, 1, 2, 3].map(|i| shape.0[i] as usize);
    let pass = BnPass::of(shape);
    let (x_in, x) = Fp16::draw(n * h * w * c, seed);
    let affine = |lo: f32, salt: u64| -> Vec<f32> { random_f32(c, seed ^ salt).into_iter().map(|v| lo + (v + 1.0) / 2.0).collect() };
    let (gamma, beta) = (affine(0.5, 0x33), affine(-0.5, 0x44));
    let zeros = || gpu.stream.alloc_zeros::<f32>(c);
    let mut params = BnTrainParams {
        gamma: gpu.stream.clone_htod(&gamma)?,
        beta: gpu.stream.clone_htod(&beta)?,
        running: [zeros()?, zeros()?],
        saved: [zeros()?, zeros()?],
        grads: [zeros()?, zeros()?],
        eps: EPS,
    };
    let x_dev = gpu.stream.clone_htod(&x_in)?;
    // SAFETY: poisoned before every launch.
    let mut dst = unsafe { gpu.stream.alloc::<f16>(x.len()) }?;
    let mut dnn = BatchNormTraining::new(gpu, [n, h, w, c]);
    let (want, want_channels, dy) = match pass {
        BnPass::Train => {
            let stats = batch_stats(&x, c);
            let y = (0..x.len())
                .map(|i| {
                    let (mean, var) = stats[i % c];
                    (x[i] as f64 - mean) / (var + EPS).sqrt() * gamma[i % c] as f64 + beta[i % c] as f64
                })
                .collect();
            let saved = stats.iter().map(|s| s.0).chain(stats.iter().map(|s| 1.0 / (s.1 + EPS).sqrt())).collect();
            (y, saved, None)
        }
        _ => {
            let (dy_in, dy) = Fp16::draw(x.len(), seed ^ 0x5851_f42d);
            let (dx, sums) = backward_reference(&x, &dy, &gamma, c);
            // The backward reads what a forward saved: one forward now, into dst (poisoned later).
            if let Ok(op) = dnn.as_mut() {
                op.forward(&x_dev, &mut dst, &mut params)?;
            }
            (dx, sums, Some(gpu.stream.clone_htod(&dy_in)?))
        }
    };
    Ok(Box::new(TrainingCase { pass, x: x_dev, dy, dst, params, dnn, want, want_channels, c, out: Readback::default() }))
}

impl Case for TrainingCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)?;
        // The per-channel outputs too; the backward's saved statistics are its inputs.
        let outputs = if self.pass == BnPass::Train { &mut self.params.saved } else { &mut self.params.grads };
        outputs.iter_mut().try_for_each(|o| poison(gpu, o))
    }

    fn launch(&mut self, _gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        // `kernels_take` keeps the rung off a training pass, so this is an error, not a skip.
        Err(LabError::Usage(format!("{} runs the inference pass, not {:?}", kernel.spec.name, self.pass)))
    }

    fn launch_baseline(&mut self, _gpu: &Gpu) -> Result<()> {
        let dnn = self.dnn.as_mut().map_err(|e| unmade(e))?;
        match &self.dy {
            None => dnn.forward(&self.x, &mut self.dst, &mut self.params),
            Some(dy) => dnn.backward(&self.x, dy, &mut self.dst, &mut self.params),
        }
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = self.out.read(gpu, &self.dst)?;
        let want = &self.want;
        let mut check = verify::check(out, out.len(), &|i| (i, want[i]), precision);
        let arrays = if self.pass == BnPass::Train { &self.params.saved } else { &self.params.grads };
        for (k, array) in arrays.iter().enumerate() {
            let got = gpu.stream.clone_dtoh(array)?;
            let at = &self.want_channels[k * self.c..(k + 1) * self.c];
            let mut one = verify::check(&got, self.c, &|j| (j, at[j]), precision);
            one.first_bad.iter_mut().for_each(|b| b.0 += out.len() + k * self.c);
            check = verify::merge(check, one);
        }
        Ok(check)
    }
}
