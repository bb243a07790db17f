//! The layernorm families: each row of a rows x cols matrix normalised to mean 0 and variance
//! 1 (the biased variance plus eps, as torch.nn.LayerNorm), then scaled by gamma and shifted by
//! beta, against cudaMemcpy of the matrix (cuDNN's legacy API has no layer norm): a rung is judged
//! by the bytes it moves against the copy's. Shape: [rows, cols]. Work: the matrix read once and
//! written once, the least a rung can move (gamma and beta, two rows, are not counted). Three
//! families share this module, one per storage (`layernorm` in fp32, `layernorm_fp16`,
//! `layernorm_bf16`: matrix, gamma and beta in that type, rounded from the inputs below); the
//! statistics and the affine step are fp32 in each.
//!
//! The inputs are values in [-1, 1) with, from the eighth row on, rows that break careless
//! kernels: one offset by 32 (a mean held to fp32's precision there), one constant (variance 0:
//! the output is beta, and a mean that is not exactly the constant, or E[x^2] - E[x]^2's
//! rounding noise, is magnified by 1 / sqrt(eps)), and, last, the two rows PyTorch answers with
//! NaN: one holding a NaN, one holding +inf. Those must come out NaN in every element, and not
//! with the poison's bits, which an unwritten row keeps.

use std::marker::PhantomData;

use half::{bf16, f16};

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use crate::element::{self, by_storage, Element};
use super::inputs::{memcpy_d2d, per_row, poison, random_f32, Readback, MEMCPY_D2D};
use super::shapes::RowShapes;
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes, Suite};
use crate::error::Result;
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::lab_layernorm_args;
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};

/// The layernorm family whose matrices hold `E`.
pub struct LayerNorm<E>(PhantomData<E>);
pub static FP32: LayerNorm<f32> = LayerNorm(PhantomData);
pub static FP16: LayerNorm<f16> = LayerNorm(PhantomData);
pub static BF16: LayerNorm<bf16> = LayerNorm(PhantomData);

const fn info(id: FamilyId, precision: Precision) -> FamilyInfo {
    FamilyInfo { id, baseline: Some(MEMCPY_D2D), vendor_best: false, precision, unit: Unit::Gbs, arithmetic: sheet::Precision::Fp32, shapes: Shapes::Matrix }
}
static FP32_INFO: FamilyInfo = info(FamilyId::LayerNorm, Precision::Fp32);
static FP16_INFO: FamilyInfo = info(FamilyId::LayerNormFp16, Precision::Fp16Storage);
static BF16_INFO: FamilyInfo = info(FamilyId::LayerNormBf16, Precision::Bf16Storage);

/// BERT-base's layer norms at batch 32 x 512: 16,384 tokens of 768.
pub const ROWS: RowShapes = RowShapes { bert: [32 * 512, 768] };
/// torch.nn.LayerNorm's default.
pub const EPS: f32 = 1e-5;
/// Rows from here on, when there are at least SPECIAL_FROM, hold the rows answered with NaN.
const NAN_ROWS: usize = 2;
/// The fewest rows that get the special rows (the module's comment says which).
pub const SPECIAL_FROM: usize = 8;
/// The constant row, among the special rows.
pub const CONSTANT_ROW: usize = 1;

impl<E: Element> Family for LayerNorm<E> {
    fn info(&self) -> &'static FamilyInfo {
        by_storage(E::STORAGE, &FP32_INFO, &FP16_INFO, &BF16_INFO)
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        ROWS.defaults(quick)
    }
    fn suites(&self) -> Vec<Suite> {
        ROWS.suites("BERT-base's layer norms at batch 32 x 512 (16,384 rows of 768)")
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        ROWS.tune_sizes()
    }
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        RowShapes::work(shape, 1, E::STORAGE.bytes())
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let (rows, cols) = (shape.0[0] as usize, shape.0[1] as usize);
        let mut host = inputs(rows, cols, seed);
        let stored = element::rounded::<E>(&mut host);
        let nan_rows = if rows >= SPECIAL_FROM { NAN_ROWS } else { 0 };
        let mut affine = random_f32(2 * cols, seed ^ 0x9e37_79b9_7f4a_7c15);
        affine[..cols].iter_mut().for_each(|g| *g = 1.0 + 0.5 * *g); // gamma in [0.5, 1.5)
        let affine_stored = element::rounded::<E>(&mut affine);
        let stats = row_stats(&host, rows - nan_rows, cols);
        Ok(Box::new(LayerNormCase::<E> {
            src: gpu.stream.clone_htod(&stored)?,
            gamma: gpu.stream.clone_htod(&affine_stored[..cols])?,
            beta: gpu.stream.clone_htod(&affine_stored[cols..])?,
            // SAFETY: poisoned before every launch.
            dst: unsafe { gpu.stream.alloc::<E>(rows * cols) }?,
            host,
            affine,
            stats,
            rows,
            cols,
            nan_rows,
            baseline: false,
            out: Readback::default(),
        }))
    }
}

/// The inputs: values in [-1, 1) drawn from `seed`, with the special rows planted where there are
/// at least SPECIAL_FROM rows (the module's comment says which).
pub fn inputs(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut x = finite_inputs(rows, cols, seed);
    if rows < SPECIAL_FROM {
        return x;
    }
    let last = rows - NAN_ROWS;
    x[last * cols + cols / 3] = f32::NAN;
    x[(last + 1) * cols + cols / 3] = f32::INFINITY;
    x
}

/// The inputs without their non-finite rows: the offset and the constant row planted where there
/// are at least SPECIAL_FROM rows.
pub fn finite_inputs(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut x = random_f32(rows * cols, seed);
    if rows >= SPECIAL_FROM {
        let row = |r: usize| r * cols..(r + 1) * cols;
        x[row(0)].iter_mut().for_each(|v| *v += 32.0);
        let c = x[CONSTANT_ROW * cols];
        x[row(CONSTANT_ROW)].iter_mut().for_each(|v| *v = c);
    }
    x
}

/// Each of the first `rows` rows' mean and 1 / sqrt(variance + eps), in f64 (two passes).
pub fn row_stats(x: &[f32], rows: usize, cols: usize) -> Vec<(f64, f64)> {
    per_row(rows, &|r| {
        let row = &x[r * cols..(r + 1) * cols];
        let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
        let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / cols as f64;
        (mean, 1.0 / (var + EPS as f64).sqrt())
    })
}

/// The f64 layer norm of element `i`, with `affine` gamma then beta (cols each).
pub fn reference(x: &[f32], affine: &[f32], stats: &[(f64, f64)], cols: usize, i: usize) -> f64 {
    let (mean, rstd) = stats[i / cols];
    let j = i % cols;
    (x[i] as f64 - mean) * rstd * affine[j] as f64 + affine[cols + j] as f64
}

struct LayerNormCase<E: Element> {
    /// The inputs, each exact in E.
    host: Vec<f32>,
    /// gamma, then beta, each exact in E.
    affine: Vec<f32>,
    /// The defined rows' (mean, rstd).
    stats: Vec<(f64, f64)>,
    rows: usize,
    cols: usize,
    /// The last rows, which must come out NaN.
    nan_rows: usize,
    src: CudaSlice<E>,
    gamma: CudaSlice<E>,
    beta: CudaSlice<E>,
    dst: CudaSlice<E>,
    baseline: bool,
    out: Readback<E>,
}

impl<E: Element> Case for LayerNormCase<E> {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::LayerNorm = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        self.baseline = false;
        let grid = kernel.grid(gpu, self.cols as u64, self.rows as u64, 0)?;
        let (src, _s) = self.src.device_ptr(&gpu.stream);
        let (gamma, _g) = self.gamma.device_ptr(&gpu.stream);
        let (beta, _b) = self.beta.device_ptr(&gpu.stream);
        let (dst, _d) = self.dst.device_ptr_mut(&gpu.stream);
        let args = lab_layernorm_args { src, dst, gamma, beta, rows: self.rows as i32, cols: self.cols as i32, eps: EPS };
        // SAFETY: layernorm kernels take lab_layernorm_args; src and dst hold rows x cols elements
        // of the family's storage, which the build compiled its kernels for (LAB_ELEM), gamma and
        // beta cols each.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.baseline = true;
        memcpy_d2d(gpu, &mut self.dst, &self.src)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = self.out.read(gpu, &self.dst)?;
        let x = &self.host;
        if self.baseline {
            let copied = |i: usize| (i, x[i] as f64);
            let defined = (self.rows - self.nan_rows) * self.cols;
            // The copy of the NaN and +inf rows is compared bit for bit apart from the norm.
            let mut check = verify::check(&out[..defined], defined, &copied, Precision::Exact);
            let tail_same = out[defined..].iter().zip(&x[defined..]).all(|(a, b)| a.widen().to_bits() == b.to_bits());
            check.compared += out.len() - defined;
            check.beyond += usize::from(!tail_same);
            return Ok(check);
        }
        let defined = (self.rows - self.nan_rows) * self.cols;
        let (affine, stats, cols) = (&self.affine, &self.stats, self.cols);
        let mut check = verify::check(&out[..defined], defined, &|i| (i, reference(x, affine, stats, cols, i)), precision);
        verify::check_nan_tail(&mut check, out, defined);
        Ok(check)
    }
}
