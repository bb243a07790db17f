//! The transpose family: dst (cols x rows) = src (rows x cols) transposed, fp32, against a
//! cudaMemcpy of the same bytes. Shape: [rows, cols]. Work: the matrix read once and written once.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use super::inputs::{memcpy_d2d, poison, random_f32, Readback, MEMCPY_D2D};
use super::{Case, Family, FamilyInfo, Shape, Shapes};
use crate::error::Result;
use crate::facts::family::FamilyId;
use crate::facts::launch::Launch;
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::lab_transpose_args;
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};

pub struct Transpose;

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::Transpose,
    baseline: Some(MEMCPY_D2D),
    vendor_best: false,
    precision: Precision::Exact,
    unit: Unit::Gbs,
    arithmetic: sheet::Precision::Fp32,
    shapes: Shapes::Matrix,
};

impl Family for Transpose {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    /// 1 GiB matrices: one square, one whose sides are off every tile.
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        if quick {
            vec![Shape(vec![4095, 8193])]
        } else {
            vec![Shape(vec![16384, 16384]), Shape(vec![16383, 16385])]
        }
    }
    /// The full-size square: the vector rung needs sides that are multiples of 4.
    fn tune_sizes(&self) -> Vec<Shape> {
        vec![Shape(vec![16384, 16384])]
    }
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        let b = 4.0 * (shape.0[0] * shape.0[1]) as f64;
        Work { flops: 0.0, bytes_read: b, bytes_written: b }
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let (rows, cols) = (shape.0[0] as usize, shape.0[1] as usize);
        let host = random_f32(rows * cols, seed);
        Ok(Box::new(TransposeCase {
            src: gpu.stream.clone_htod(&host)?,
            want: transposed(&host, rows, cols),
            // SAFETY: poisoned before every launch.
            dst: unsafe { gpu.stream.alloc::<f32>(rows * cols) }?,
            host,
            rows,
            cols,
            baseline: false,
            out: Readback::default(),
        }))
    }
}

/// The reference: `src` (rows x cols) transposed on the host, in 64 x 64 blocks so both sides
/// stay in cache (an element-at-a-time gather over 1 GiB takes minutes).
pub fn transposed(src: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    const B: usize = 64;
    let mut out = vec![0.0f32; rows * cols];
    for i0 in (0..rows).step_by(B) {
        for j0 in (0..cols).step_by(B) {
            for i in i0..(i0 + B).min(rows) {
                for j in j0..(j0 + B).min(cols) {
                    out[j * rows + i] = src[i * cols + j];
                }
            }
        }
    }
    out
}

struct TransposeCase {
    host: Vec<f32>,
    /// `host` transposed.
    want: Vec<f32>,
    rows: usize,
    cols: usize,
    src: CudaSlice<f32>,
    dst: CudaSlice<f32>,
    baseline: bool,
    out: Readback<f32>,
}

impl Case for TransposeCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        self.baseline = false;
        let grid = kernel.grid(gpu, self.cols as u64, self.rows as u64, 0)?;
        let (src, _s) = self.src.device_ptr(&gpu.stream);
        let (dst, _d) = self.dst.device_ptr_mut(&gpu.stream);
        let args = lab_transpose_args { src, dst, rows: self.rows as i32, cols: self.cols as i32 };
        // SAFETY: transpose kernels take lab_transpose_args; src and dst hold rows x cols floats.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.baseline = true;
        memcpy_d2d(gpu, &mut self.dst, &self.src)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = self.out.read(gpu, &self.dst)?;
        let want = if self.baseline { &self.host } else { &self.want };
        Ok(verify::check(out, want.len(), &|i| (i, want[i] as f64), precision))
    }
}
