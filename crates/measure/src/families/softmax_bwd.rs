//! The softmax_bwd family: the softmax's backward pass over each row of a rows x cols fp32 matrix,
//! dx = y (dy - sum(dy y)) with y the forward's output and dy the loss's gradient with respect to
//! it, against cuDNN's softmax backward (loaded at run time; skipped with the reason where it is
//! absent) and the DRAM ceiling. Shape: [rows, cols]. Work: y and dy read once, dx written once,
//! the least a rung can move.
//!
//! y is the forward family's answer to its own inputs (`softmax::logits`): rows offset by
//! +-10^4, masked rows whose masked elements have y = 0 (and so dx = 0), and, last, the three
//! rows the forward answers with NaN, whose gradient PyTorch answers with NaN too: those must come
//! out NaN in every element, and not with the poison's bits. dy is drawn from [-1, 1).

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use super::inputs::{per_row, poison, random_f32, Readback};
use super::shapes::RowShapes;
// The forward's shapes: BERT-base's attention softmax at batch 32 x 512.
use super::softmax::{logits, row_stats, NAN_ROWS, ROWS, SPECIAL_FROM};
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes, Suite};
use crate::error::{LabError, Result};
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::dnn::RowSoftmaxBackward;
use crate::gpu::ffi::lab_softmax_bwd_args;
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};

pub struct SoftmaxBwd;

/// The baseline's name in tables and results.
pub const CUDNN_SOFTMAX_BACKWARD: &str = "cuDNN softmax backward";

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::SoftmaxBwd,
    baseline: Some(CUDNN_SOFTMAX_BACKWARD),
    vendor_best: false,
    precision: Precision::Fp32,
    unit: Unit::Gbs,
    arithmetic: sheet::Precision::Fp32,
    shapes: Shapes::Matrix,
};

impl Family for SoftmaxBwd {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        ROWS.defaults(quick)
    }
    fn suites(&self) -> Vec<Suite> {
        ROWS.suites("the backward pass of BERT-base's attention softmax at batch 32 x 512 (196,608 rows of 512)")
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        ROWS.tune_sizes()
    }
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        RowShapes::work(shape, 2, 4)
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let (rows, cols) = (shape.0[0] as usize, shape.0[1] as usize);
        let nan_rows = if rows >= SPECIAL_FROM { NAN_ROWS } else { 0 };
        let y = forward(rows, cols, seed);
        let dy = random_f32(rows * cols, seed ^ 0x9e37_79b9_7f4a_7c15);
        let sums = dot_rows(&y, &dy, rows - nan_rows, cols);
        Ok(Box::new(BackwardCase {
            y_dev: gpu.stream.clone_htod(&y)?,
            dy_dev: gpu.stream.clone_htod(&dy)?,
            // SAFETY: poisoned before every launch.
            dx: unsafe { gpu.stream.alloc::<f32>(rows * cols) }?,
            dnn: RowSoftmaxBackward::new(gpu, rows, cols).map_err(|e| e.to_string()),
            y,
            dy,
            sums,
            rows,
            cols,
            nan_rows,
            out: Readback::default(),
        }))
    }
}

/// y: the forward's output for its inputs drawn from `seed`, rounded to fp32; NaN across the rows
/// the forward answers with NaN.
pub fn forward(rows: usize, cols: usize, seed: u64) -> Vec<f32> {
    let x = logits(rows, cols, seed);
    let nan_rows = if rows >= SPECIAL_FROM { NAN_ROWS } else { 0 };
    let stats = row_stats(&x, rows - nan_rows, cols);
    let mut y: Vec<f32> = per_row(rows - nan_rows, &|r| {
        let (m, s) = stats[r];
        x[r * cols..(r + 1) * cols].iter().map(|&v| ((v as f64 - m).exp() / s) as f32).collect::<Vec<f32>>()
    })
    .into_iter()
    .flatten()
    .collect();
    y.resize(rows * cols, f32::NAN);
    y
}

/// Each of the first `rows` rows' sum of dy * y, in f64.
pub fn dot_rows(y: &[f32], dy: &[f32], rows: usize, cols: usize) -> Vec<f64> {
    per_row(rows, &|r| (r * cols..(r + 1) * cols).map(|i| y[i] as f64 * dy[i] as f64).sum::<f64>())
}

/// The f64 gradient of element `i`, its row's sum of dy * y in `sums`.
pub fn reference(y: &[f32], dy: &[f32], sums: &[f64], cols: usize, i: usize) -> f64 {
    y[i] as f64 * (dy[i] as f64 - sums[i / cols])
}

struct BackwardCase {
    y: Vec<f32>,
    dy: Vec<f32>,
    /// The defined rows' sums of dy * y.
    sums: Vec<f64>,
    rows: usize,
    cols: usize,
    /// The last rows, which must come out NaN.
    nan_rows: usize,
    y_dev: CudaSlice<f32>,
    dy_dev: CudaSlice<f32>,
    dx: CudaSlice<f32>,
    /// cuDNN's softmax backward, or why it cannot run here.
    dnn: std::result::Result<RowSoftmaxBackward, String>,
    out: Readback<f32>,
}

impl Case for BackwardCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dx)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::SoftmaxBwd = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let grid = kernel.grid(gpu, self.cols as u64, self.rows as u64, 0)?;
        let (y, _y) = self.y_dev.device_ptr(&gpu.stream);
        let (dy, _dy) = self.dy_dev.device_ptr(&gpu.stream);
        let (dx, _dx) = self.dx.device_ptr_mut(&gpu.stream);
        let args = lab_softmax_bwd_args { y, dy, dx, rows: self.rows as i32, cols: self.cols as i32 };
        // SAFETY: softmax_bwd kernels take lab_softmax_bwd_args; y, dy and dx hold rows x cols floats.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, _gpu: &Gpu) -> Result<()> {
        match &self.dnn {
            Ok(dnn) => dnn.launch(&self.y_dev, &self.dy_dev, &mut self.dx),
            Err(why) => Err(LabError::Unavailable(why.clone())),
        }
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = self.out.read(gpu, &self.dx)?;
        let defined = (self.rows - self.nan_rows) * self.cols;
        let (y, dy, sums, cols) = (&self.y, &self.dy, &self.sums, self.cols);
        let mut check = verify::check(&out[..defined], defined, &|i| (i, reference(y, dy, sums, cols, i)), precision);
        verify::check_nan_tail(&mut check, out, defined);
        Ok(check)
    }
}
