//! The layernorm_bwd family: the layer norm's backward pass over a rows x cols fp32 matrix, as
//! training runs it: from the forward's input x, the mean and rstd it saved, gamma and the loss's
//! gradient dy, the gradients dx (rows x cols), dgamma and dbeta (cols each). Judged, as the
//! forward is, against cudaMemcpy of the matrix (cuDNN's legacy API has no layer norm), each by
//! its own bytes: a rung's rate against the copy's. Shape: [rows, cols]. Work: x and dy read
//! once, dx written once, the least a rung can move; the copy's, one read and one write.
//!
//! x is the forward family's finite inputs (where there are at least eight rows, row 0 offset by
//! 32 and row 1 constant, whose rstd is 1 / sqrt(eps)); mean and rstd are its statistics rounded to fp32,
//! as the forward saves them; dy is drawn from [-1, 1). Where there are at least eight rows, the
//! last row's dy holds a NaN in column cols / 3: PyTorch answers with NaN across that row of dx
//! and in that column of dgamma and dbeta, and with numbers everywhere else. Those must come out
//! NaN, and not with the poison's bits.
//!
//! dgamma and dbeta are added in a fixed order, so they come out the same bits from launch to
//! launch on one GPU: the check after timing holds the last timed launch's to the first's.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use super::inputs::{memcpy_d2d, per_row, poison, random_f32, Readback, MEMCPY_D2D};
use super::layernorm::{finite_inputs, row_stats, CONSTANT_ROW, ROWS, SPECIAL_FROM};
use super::shapes::RowShapes;
use super::stream_k::Scratch;
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes, Suite};
use crate::error::Result;
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::manifest::Config;
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::lab_layernorm_bwd_args;
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};

pub struct LayerNormBwd;

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::LayerNormBwd,
    baseline: Some(MEMCPY_D2D),
    vendor_best: false,
    precision: Precision::Fp32,
    unit: Unit::Gbs,
    arithmetic: sheet::Precision::Fp32,
    shapes: Shapes::Matrix,
};

impl Family for LayerNormBwd {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        ROWS.defaults(quick)
    }
    fn suites(&self) -> Vec<Suite> {
        ROWS.suites("the backward pass of BERT-base's layer norms at batch 32 x 512 (16,384 rows of 768)")
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        ROWS.tune_sizes()
    }
    /// A rung reads x and dy and writes dx; the baseline (None) copies one matrix.
    fn work(&self, shape: &Shape, launch: Option<&Launch>) -> Work {
        RowShapes::work(shape, if launch.is_some() { 2 } else { 1 }, 4)
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let (rows, cols) = (shape.0[0] as usize, shape.0[1] as usize);
        let p = Problem::new(rows, cols, seed);
        Ok(Box::new(BackwardCase {
            x_dev: gpu.stream.clone_htod(&p.x)?,
            dy_dev: gpu.stream.clone_htod(&p.dy)?,
            gamma_dev: gpu.stream.clone_htod(&p.gamma)?,
            mean_dev: gpu.stream.clone_htod(&p.mean)?,
            rstd_dev: gpu.stream.clone_htod(&p.rstd)?,
            // SAFETY: poisoned before every launch.
            dx: unsafe { gpu.stream.alloc::<f32>(rows * cols) }?,
            // SAFETY: as dx; dgamma then dbeta.
            dparams: unsafe { gpu.stream.alloc::<f32>(2 * cols) }?,
            scratch: Scratch::default(),
            columns: p.columns(),
            p,
            baseline: false,
            launched: None,
            first: None,
            out: Readback::default(),
            out_params: Readback::default(),
        }))
    }
}

/// One backward problem on the host: the kernel's inputs, and the per-row sums the reference
/// needs.
pub struct Problem {
    pub rows: usize,
    pub cols: usize,
    pub x: Vec<f32>,
    pub dy: Vec<f32>,
    pub gamma: Vec<f32>,
    /// The forward's saved statistics, in fp32.
    pub mean: Vec<f32>,
    pub rstd: Vec<f32>,
    /// Each row's mean of g = dy * gamma and of g * xhat, in f64 (NaN in the NaN row).
    row_means: Vec<(f64, f64)>,
    /// The row whose dy holds a NaN, and its column, where there is one.
    pub nan_at: Option<(usize, usize)>,
}

impl Problem {
    pub fn new(rows: usize, cols: usize, seed: u64) -> Problem {
        let x = finite_inputs(rows, cols, seed);
        let stats = row_stats(&x, rows, cols);
        let mut dy = random_f32(rows * cols, seed ^ 0x9e37_79b9_7f4a_7c15);
        let nan_at = (rows >= SPECIAL_FROM).then_some((rows - 1, cols / 3));
        if let Some((r, c)) = nan_at {
            dy[r * cols + c] = f32::NAN;
        }
        let gamma: Vec<f32> = random_f32(cols, seed ^ 0x2545_f491_4f6c_dd1d).iter().map(|g| 1.0 + 0.5 * g).collect();
        let mean: Vec<f32> = stats.iter().map(|s| s.0 as f32).collect();
        let rstd: Vec<f32> = stats.iter().map(|s| s.1 as f32).collect();
        let row_means = per_row(rows, &|r| {
            let (m, s) = (mean[r] as f64, rstd[r] as f64);
            let (mut g, mut gx) = (0.0, 0.0);
            for j in 0..cols {
                let gj = dy[r * cols + j] as f64 * gamma[j] as f64;
                g += gj;
                gx += gj * (x[r * cols + j] as f64 - m) * s;
            }
            (g / cols as f64, gx / cols as f64)
        });
        Problem { rows, cols, x, dy, gamma, mean, rstd, row_means, nan_at }
    }

    fn xhat(&self, i: usize) -> f64 {
        let r = i / self.cols;
        (self.x[i] as f64 - self.mean[r] as f64) * self.rstd[r] as f64
    }

    /// The f64 dx of element `i`.
    pub fn dx(&self, i: usize) -> f64 {
        let (r, j) = (i / self.cols, i % self.cols);
        let (mg, mgx) = self.row_means[r];
        self.rstd[r] as f64 * (self.dy[i] as f64 * self.gamma[j] as f64 - mg - self.xhat(i) * mgx)
    }

    /// dgamma then dbeta, in f64: the column sums of dy * xhat and of dy (the row sums of the
    /// threads' shares of rows, added in order).
    pub fn columns(&self) -> Vec<f64> {
        let cols = self.cols;
        let parts = verify::chunked(self.rows, 64, &|rows| {
            let mut s = vec![0.0f64; 2 * cols];
            for i in rows.start * cols..rows.end * cols {
                let d = self.dy[i] as f64;
                s[i % cols] += d * self.xhat(i);
                s[cols + i % cols] += d;
            }
            s
        });
        parts.into_iter().fold(vec![0.0; 2 * cols], |mut a, p| {
            a.iter_mut().zip(p).for_each(|(a, p)| *a += p);
            a
        })
    }

    /// Checks dx (`out`, rows x cols) and dgamma then dbeta (`params`, 2 x cols) against the
    /// reference (`columns`): every element, the NaN row and column held to NaN. The constant
    /// row is compared apart: its dx is rstd = 1 / sqrt(eps) times the others' size, and in one
    /// norm with them it would set the scale every other row's error is measured against.
    pub fn check(&self, out: &[f32], params: &[f32], columns: &[f64], precision: Precision) -> Check {
        let (rows, cols) = (self.rows, self.cols);
        let defined = self.nan_at.map_or(rows, |(r, _)| r) * cols;
        let mut dx = match self.nan_at.map(|_| CONSTANT_ROW) {
            Some(c) => {
                // Every defined row but the constant one, then the constant one.
                let other = |j: usize| if j < c * cols { j } else { j + cols };
                let rest = verify::check(&out[..defined], defined - cols, &|j| (other(j), self.dx(other(j))), precision);
                let mut own = verify::check(&out[c * cols..(c + 1) * cols], cols, &|j| (j, self.dx(c * cols + j)), precision);
                own.first_bad.iter_mut().for_each(|b| b.0 += c * cols);
                own.nonfinite = 0; // counted in `rest`, whose scan covers the whole output
                verify::merge(rest, own)
            }
            None => verify::check(&out[..defined], defined, &|i| (i, self.dx(i)), precision),
        };
        verify::check_nan_tail(&mut dx, out, defined);
        // dgamma and dbeta, each without the NaN column, which is held to NaN apart.
        let skip = self.nan_at.map(|(_, c)| c);
        let keep: Vec<usize> = (0..2 * cols).filter(|&k| Some(k % cols) != skip).collect();
        let mut sums = Check::default();
        for half in [0..cols, cols..2 * cols] {
            let at: Vec<usize> = keep.iter().copied().filter(|k| half.contains(k)).collect();
            let got: Vec<f32> = at.iter().map(|&k| params[k]).collect();
            let mut c = verify::check(&got, at.len(), &|n| (n, columns[at[n]]), precision);
            c.first_bad.iter_mut().for_each(|b| b.0 = rows * cols + at[b.0]);
            sums = verify::merge(sums, c);
        }
        for k in skip.map_or(vec![], |c| vec![c, cols + c]) {
            let mut nan = Check { tolerance: precision.tolerance(), ..Check::default() };
            verify::check_nan_tail(&mut nan, &params[k..k + 1], 0);
            nan.first_bad.iter_mut().for_each(|b| b.0 = rows * cols + k);
            sums = verify::merge(sums, nan);
        }
        verify::merge(dx, sums)
    }
}

struct BackwardCase {
    p: Problem,
    /// dgamma then dbeta, in f64.
    columns: Vec<f64>,
    x_dev: CudaSlice<f32>,
    dy_dev: CudaSlice<f32>,
    gamma_dev: CudaSlice<f32>,
    mean_dev: CudaSlice<f32>,
    rstd_dev: CudaSlice<f32>,
    dx: CudaSlice<f32>,
    dparams: CudaSlice<f32>,
    /// The blocks' partial column sums and the grid barrier's two words.
    scratch: Scratch,
    baseline: bool,
    /// The kernel (variant, configuration) launched last.
    launched: Option<(&'static str, Config)>,
    /// dgamma and dbeta as a kernel's first check found them: later checks of the same kernel
    /// must find the same bits, since the column sums are added in a fixed order.
    first: Option<((&'static str, Config), Vec<f32>)>,
    out: Readback<f32>,
    out_params: Readback<f32>,
}

impl Case for BackwardCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dx)?;
        poison(gpu, &mut self.dparams)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::LayerNormBwd = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        self.baseline = false;
        self.launched = Some((kernel.spec.name.as_str(), kernel.config.clone()));
        let (rows, cols) = (self.p.rows, self.p.cols);
        let grid = kernel.grid(gpu, cols as u64, rows as u64, 0)?;
        let (partial, barrier) = self.scratch.get(gpu, grid.0 as usize * 2 * cols * 4, 2)?;
        let (x, _x) = self.x_dev.device_ptr(&gpu.stream);
        let (dy, _dy) = self.dy_dev.device_ptr(&gpu.stream);
        let (gamma, _g) = self.gamma_dev.device_ptr(&gpu.stream);
        let (mean, _m) = self.mean_dev.device_ptr(&gpu.stream);
        let (rstd, _r) = self.rstd_dev.device_ptr(&gpu.stream);
        let (dx, _dx) = self.dx.device_ptr_mut(&gpu.stream);
        let (dgamma, _dp) = self.dparams.device_ptr_mut(&gpu.stream);
        let dbeta = dgamma + 4 * cols as u64;
        let args =
            lab_layernorm_bwd_args { x, dy, gamma, mean, rstd, dx, dgamma, dbeta, partial, barrier, rows: rows as i32, cols: cols as i32 };
        // SAFETY: layernorm_bwd kernels take lab_layernorm_bwd_args; x, dy and dx hold rows x
        // cols floats, gamma, dgamma and dbeta cols, mean and rstd rows; partial holds 2 x cols
        // floats for each block of the resident grid, barrier two zeroed words.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.baseline = true;
        memcpy_d2d(gpu, &mut self.dx, &self.x_dev)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = self.out.read(gpu, &self.dx)?;
        if self.baseline {
            let x = &self.p.x;
            return Ok(verify::check(out, out.len(), &|i| (i, x[i] as f64), Precision::Exact));
        }
        let params = self.out_params.read(gpu, &self.dparams)?;
        let mut check = self.p.check(out, params, &self.columns, precision);
        match (&self.launched, &self.first) {
            (Some(k), Some((key, bits))) if k == key => {
                let differ = || params.iter().zip(bits).enumerate().filter(|(_, (a, b))| a.to_bits() != b.to_bits());
                check.unrepeated = differ().count();
                check.first_bad.extend(differ().take(1).map(|(i, (&a, &b))| (i, a as f64, b as f64)));
            }
            (Some(k), _) => self.first = Some((k.clone(), params.to_vec())),
            (None, _) => {}
        }
        Ok(check)
    }
}
