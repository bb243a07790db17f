//! The softmax families: each row of a rows x cols matrix replaced by its softmax, against
//! cuDNN's (loaded at run time; skipped with the reason where it is absent) and the DRAM ceiling.
//! Shape: [rows, cols]. Work: the matrix read once and written once, the least a rung can move.
//! Three families share this module, one per storage (`softmax` in fp32, `softmax_fp16`,
//! `softmax_bf16`, whose inputs are the logits below rounded to their type): the arithmetic is
//! fp32 in each, and cuDNN runs on the same data.
//!
//! The inputs are logits in [-8, 8) with rows that break careless kernels: two offset by +-10^4
//! (exp overflows, or every term underflows, without the max subtracted), masked rows whose -inf
//! elements must come out exactly 0, and, last, the three rows PyTorch's torch.softmax answers
//! with NaN: one holding a NaN, one holding +inf, one all -inf. Those must come out NaN in every
//! element, and not with the poison's bits, which an unwritten row keeps.

use std::marker::PhantomData;

use half::{bf16, f16};

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use crate::element::{self, by_storage, Element};
use super::inputs::{per_row, poison, random_f32, Readback};
use super::shapes::RowShapes;
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes, Suite};
use crate::error::{LabError, Result};
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::dnn::RowSoftmax;
use crate::gpu::ffi::lab_softmax_args;
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};

/// The softmax family whose matrices hold `E`.
pub struct Softmax<E>(PhantomData<E>);
pub static FP32: Softmax<f32> = Softmax(PhantomData);
pub static FP16: Softmax<f16> = Softmax(PhantomData);
pub static BF16: Softmax<bf16> = Softmax(PhantomData);

/// The baseline's name in tables and results.
pub const CUDNN_SOFTMAX: &str = "cuDNN softmax";

const fn info(id: FamilyId, precision: Precision) -> FamilyInfo {
    FamilyInfo {
        id,
        baseline: Some(CUDNN_SOFTMAX),
        vendor_best: false,
        precision,
        unit: Unit::Gbs,
        arithmetic: sheet::Precision::Fp32,
        shapes: Shapes::Matrix,
    }
}
static FP32_INFO: FamilyInfo = info(FamilyId::Softmax, Precision::Fp32);
static FP16_INFO: FamilyInfo = info(FamilyId::SoftmaxFp16, Precision::Fp16Storage);
static BF16_INFO: FamilyInfo = info(FamilyId::SoftmaxBf16, Precision::Bf16Storage);

/// BERT-base's attention softmax at batch 32 x 512: 32 x 12 heads x 512 rows of 512.
pub const ROWS: RowShapes = RowShapes { bert: [32 * 12 * 512, 512] };

/// Rows from here on, when there are at least this many, hold the rows PyTorch answers with NaN.
pub const NAN_ROWS: usize = 3;
/// Rows a case needs before its special rows are planted (fewer rows are all plain logits).
pub const SPECIAL_FROM: usize = 8;
/// The rows after the first three that carry a mask over their tail (up to half the row).
const MASKED_ROWS: usize = 64;

impl<E: Element> Family for Softmax<E> {
    fn info(&self) -> &'static FamilyInfo {
        by_storage(E::STORAGE, &FP32_INFO, &FP16_INFO, &BF16_INFO)
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        ROWS.defaults(quick)
    }
    fn suites(&self) -> Vec<Suite> {
        ROWS.suites("BERT-base's attention softmax at batch 32 x 512 (196,608 rows of 512)")
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        ROWS.tune_sizes()
    }
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        RowShapes::work(shape, 1, E::STORAGE.bytes())
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let (rows, cols) = (shape.0[0] as usize, shape.0[1] as usize);
        let mut host = logits(rows, cols, seed);
        let stored = element::rounded::<E>(&mut host);
        let nan_rows = if rows >= SPECIAL_FROM { NAN_ROWS } else { 0 };
        let stats = row_stats(&host, rows - nan_rows, cols);
        Ok(Box::new(SoftmaxCase::<E> {
            src: gpu.stream.clone_htod(&stored)?,
            // SAFETY: poisoned before every launch.
            dst: unsafe { gpu.stream.alloc::<E>(rows * cols) }?,
            dnn: RowSoftmax::new(gpu, rows, cols).map_err(|e| e.to_string()),
            host,
            stats,
            rows,
            cols,
            nan_rows,
            out: Readback::default(),
        }))
    }
}

/// The inputs: logits in [-8, 8) drawn from `seed`, with the special rows planted where there
/// are at least SPECIAL_FROM rows (the module's comment says which).
pub fn logits(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let mut x = random_f32(rows * cols, seed);
    x.iter_mut().for_each(|v| *v *= 8.0);
    if rows < SPECIAL_FROM {
        return x;
    }
    let row = |r: usize| r * cols..(r + 1) * cols;
    x[row(0)].iter_mut().for_each(|v| *v += 1e4);
    x[row(1)].iter_mut().for_each(|v| *v -= 1e4);
    x[row(2)].iter_mut().skip(1).step_by(2).for_each(|v| *v = f32::NEG_INFINITY);
    for r in 3..MASKED_ROWS.min(rows - NAN_ROWS) {
        let masked = r % (cols / 2 + 1);
        x[row(r)].iter_mut().rev().take(masked).for_each(|v| *v = f32::NEG_INFINITY);
    }
    let last = rows - NAN_ROWS;
    x[last * cols + cols / 3] = f32::NAN;
    x[(last + 1) * cols + cols / 3] = f32::INFINITY;
    x[row(last + 2)].iter_mut().for_each(|v| *v = f32::NEG_INFINITY);
    x
}

/// Each of the first `rows` rows' max and sum of exp(x - max), in f64: every such row has a
/// finite element and no NaN or +inf.
pub fn row_stats(x: &[f32], rows: usize, cols: usize) -> Vec<(f64, f64)> {
    per_row(rows, &|r| {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
        (m, row.iter().map(|&v| (v as f64 - m).exp()).sum::<f64>())
    })
}

/// The f64 softmax of element `i` of a matrix whose rows have `stats`.
pub fn reference(x: &[f32], stats: &[(f64, f64)], cols: usize, i: usize) -> f64 {
    let (m, s) = stats[i / cols];
    (x[i] as f64 - m).exp() / s
}

struct SoftmaxCase<E: Element> {
    /// The inputs, each exact in E.
    host: Vec<f32>,
    /// The defined rows' (max, sum of exp(x - max)).
    stats: Vec<(f64, f64)>,
    rows: usize,
    cols: usize,
    /// The last rows, which must come out NaN.
    nan_rows: usize,
    src: CudaSlice<E>,
    dst: CudaSlice<E>,
    /// cuDNN's softmax, or why it cannot run here.
    dnn: std::result::Result<RowSoftmax<E>, String>,
    out: Readback<E>,
}

impl<E: Element> Case for SoftmaxCase<E> {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Softmax = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let grid = kernel.grid(gpu, self.cols as u64, self.rows as u64, 0)?;
        let (src, _s) = self.src.device_ptr(&gpu.stream);
        let (dst, _d) = self.dst.device_ptr_mut(&gpu.stream);
        let args = lab_softmax_args { src, dst, rows: self.rows as i32, cols: self.cols as i32 };
        // SAFETY: softmax kernels take lab_softmax_args; src and dst hold rows x cols elements of
        // the family's storage, which the build compiled its kernels for (LAB_ELEM).
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, _gpu: &Gpu) -> Result<()> {
        match &self.dnn {
            Ok(dnn) => dnn.launch(&self.src, &mut self.dst),
            Err(why) => Err(LabError::Unavailable(why.clone())),
        }
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = self.out.read(gpu, &self.dst)?;
        let defined = (self.rows - self.nan_rows) * self.cols;
        let (x, stats, cols) = (&self.host, &self.stats, self.cols);
        let mut check = verify::check(&out[..defined], defined, &|i| (i, reference(x, stats, cols, i)), precision);
        verify::check_nan_tail(&mut check, out, defined);
        Ok(check)
    }
}
