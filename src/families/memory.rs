//! The memory family: STREAM's copy, scale, add and triad against cudaMemcpy device to device.
//! Shape: [bytes per array]. Work: the arrays the operation reads, read once, and one written.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::{array_sizes, memcpy_d2d, parse_bytes, poison, random_f32, Case, Family, Shape, Unit, Work, MEMCPY_D2D};
use crate::device::{DeviceInfo, Gpu, Kernel};
use crate::error::Result;
use crate::ffi::lab_stream_args;
use crate::registry::Config;
use crate::verify::{self, Check, Precision};

pub struct Memory;

const MIB: u64 = 1 << 20;
/// STREAM's scalar.
const SCALAR: f32 = 3.0;

/// The host's version of each OP, with the same single roundings as the kernels' _rn intrinsics.
fn op(code: i64, b: f32, c: f32) -> f32 {
    match code {
        0 => b,
        1 => SCALAR * b,
        2 => b + c,
        _ => b + SCALAR * c,
    }
}

/// Arrays read by OP (a config without OP is the baseline, a copy).
fn reads(config: Option<&Config>) -> f64 {
    match config.and_then(|c| c.define("OP")) {
        Some(2 | 3) => 2.0,
        _ => 1.0,
    }
}

/// "1024 MiB", "1024 MiB+12 B": array sizes as the tables show them.
pub fn bytes_label(b: u64) -> String {
    match (b / MIB, b % MIB) {
        (0, _) => format!("{b} B"),
        (w, 0) => format!("{w} MiB"),
        (w, r) => format!("{w} MiB+{r} B"),
    }
}

impl Family for Memory {
    fn name(&self) -> &'static str {
        "memory"
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
        &["bytes"]
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        array_sizes(quick)
    }
    fn parse_size(&self, text: &str) -> std::result::Result<Shape, String> {
        parse_bytes(text, 4)
    }
    fn label(&self, shape: &Shape) -> String {
        bytes_label(shape.0[0])
    }
    fn work(&self, shape: &Shape, config: Option<&Config>) -> Work {
        let b = shape.0[0] as f64;
        Work { flops: 0.0, bytes_read: reads(config) * b, bytes_written: b }
    }
    fn peak(&self, dev: &DeviceInfo, _config: Option<&Config>) -> Option<f64> {
        dev.peak_dram_gbs()
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let n = (shape.0[0] / 4) as usize;
        let b = random_f32(n, seed);
        let c = random_f32(n, seed ^ 0x5151_5151);
        Ok(Box::new(StreamCase {
            b_dev: gpu.stream.clone_htod(&b)?,
            c_dev: gpu.stream.clone_htod(&c)?,
            // SAFETY: every use is preceded by poison() or a full write by the kernel under test.
            a_dev: unsafe { gpu.stream.alloc::<f32>(n) }?,
            b,
            c,
            op: 0,
        }))
    }
}

struct StreamCase {
    b: Vec<f32>,
    c: Vec<f32>,
    a_dev: CudaSlice<f32>,
    b_dev: CudaSlice<f32>,
    c_dev: CudaSlice<f32>,
    /// The OP of the last launch, which the check recomputes.
    op: i64,
}

impl Case for StreamCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.a_dev)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        self.op = kernel.define("OP")?;
        let n = self.b.len() as u64;
        let blocks = match kernel.config.define("BLOCKS_PER_SM") {
            Some(per_sm) => gpu.info.sms * per_sm as u32,
            None => {
                let per_block = kernel.config.threads() as u64 * (kernel.define("UNROLL")? * kernel.define("VEC")?) as u64;
                n.div_ceil(per_block).max(1) as u32
            }
        };
        let (b, _b) = self.b_dev.device_ptr(&gpu.stream);
        let (c, _c) = self.c_dev.device_ptr(&gpu.stream);
        let (a, _a) = self.a_dev.device_ptr_mut(&gpu.stream);
        let args = lab_stream_args { a, b, c, scalar: SCALAR, n };
        // SAFETY: memory kernels take lab_stream_args; a, b and c each hold n floats.
        unsafe { kernel.launch(&gpu.stream, (blocks, 1, 1), &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.op = 0;
        memcpy_d2d(gpu, &mut self.a_dev, &self.b_dev)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = gpu.stream.clone_dtoh(&self.a_dev)?;
        let code = self.op;
        let want = self.b.iter().zip(&self.c).enumerate().map(move |(i, (&b, &c))| (i, op(code, b, c) as f64));
        Ok(verify::check(&out, want, precision))
    }
}
