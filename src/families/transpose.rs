//! The transpose family: dst (cols x rows) = src (rows x cols) transposed, fp32, against a
//! cudaMemcpy of the same bytes. Shape: [rows, cols]. Work: the matrix read once and written once.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::{memcpy_d2d, parse_count, poison, random_f32, Case, Family, Shape, Unit, Work, MEMCPY_D2D};
use crate::device::{DeviceInfo, Gpu, Kernel};
use crate::error::Result;
use crate::ffi::lab_transpose_args;
use crate::registry::Config;
use crate::verify::{self, Check, Precision};

pub struct Transpose;

impl Family for Transpose {
    fn name(&self) -> &'static str {
        "transpose"
    }
    fn baseline(&self) -> Option<&'static str> {
        Some(MEMCPY_D2D)
    }
    fn precision(&self) -> Precision {
        Precision::Exact
    }
    fn unit(&self) -> Unit {
        Unit::Gbs
    }
    fn dims(&self) -> &'static [&'static str] {
        &["rows", "cols"]
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
    fn parse_size(&self, text: &str) -> std::result::Result<Shape, String> {
        let parts: Vec<&str> = text.split('x').collect();
        let dims = match parts.len() {
            1 => vec![parse_count(parts[0], "matrix side")?; 2],
            2 => vec![parse_count(parts[0], "rows")?, parse_count(parts[1], "columns")?],
            _ => return Err(format!("'{text}' is neither N nor ROWSxCOLS")),
        };
        if dims.iter().any(|&d| d >= 1 << 31) || dims[0] * dims[1] > 1 << 31 {
            return Err(format!("{}x{} is over the lab's 2^31 elements", dims[0], dims[1]));
        }
        Ok(Shape(dims))
    }
    fn work(&self, shape: &Shape, _config: Option<&Config>) -> Work {
        let b = 4.0 * (shape.0[0] * shape.0[1]) as f64;
        Work { flops: 0.0, bytes_read: b, bytes_written: b }
    }
    fn peak(&self, dev: &DeviceInfo, _config: Option<&Config>) -> Option<f64> {
        dev.peak_dram_gbs()
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
}

impl Case for TransposeCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        self.baseline = false;
        let (tx, ty) = (kernel.define("TILE_X")? as u64, kernel.define("TILE_Y")? as u64);
        let grid = ((self.cols as u64).div_ceil(tx) as u32, (self.rows as u64).div_ceil(ty) as u32, 1);
        let (src, _s) = self.src.device_ptr(&gpu.stream);
        let (dst, _d) = self.dst.device_ptr_mut(&gpu.stream);
        let args = lab_transpose_args { src, dst, rows: self.rows as i32, cols: self.cols as i32 };
        // SAFETY: transpose kernels take lab_transpose_args; src and dst hold rows x cols floats.
        unsafe { kernel.launch(&gpu.stream, grid, &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.baseline = true;
        memcpy_d2d(gpu, &mut self.dst, &self.src)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = gpu.stream.clone_dtoh(&self.dst)?;
        let want = if self.baseline { &self.host } else { &self.want };
        Ok(verify::check(&out, want.iter().enumerate().map(|(i, &x)| (i, x as f64)), precision))
    }
}
