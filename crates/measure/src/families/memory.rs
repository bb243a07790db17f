//! The memory family: STREAM's copy, scale, add and triad against cudaMemcpy device to device.
//! Shape: [bytes per array]. Work: the arrays the operation reads, read once, and one written.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use super::inputs::{memcpy_d2d, poison, random_f32, Readback, MEMCPY_D2D};
use super::shapes::array_sizes;
use super::{Case, Family, FamilyInfo, Shape, Shapes};
use crate::error::{LabError, Result};
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params, StreamOp};
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::lab_stream_args;
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};

pub struct Memory;

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::Memory,
    baseline: Some(MEMCPY_D2D),
    vendor_best: false,
    precision: Precision::Exact,
    unit: Unit::Gbs,
    arithmetic: sheet::Precision::Fp32,
    shapes: Shapes::Bytes { elem: 4 },
};

/// STREAM's scalar.
const SCALAR: f32 = 3.0;

/// The host's version of each operation, with the same single roundings as the kernels' _rn
/// intrinsics.
fn op(op: StreamOp, b: f32, c: f32) -> f32 {
    match op {
        StreamOp::Copy => b,
        StreamOp::Scale => SCALAR * b,
        StreamOp::Add => b + c,
        StreamOp::Triad => b + SCALAR * c,
    }
}

fn stream_op(launch: Option<&Launch>) -> StreamOp {
    match launch.map(|l| l.params) {
        Some(Params::Stream { op }) => op,
        _ => StreamOp::Copy,
    }
}

impl Family for Memory {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        array_sizes(quick)
    }
    /// A baseline (None) is a copy.
    fn work(&self, shape: &Shape, launch: Option<&Launch>) -> Work {
        let b = shape.0[0] as f64;
        Work { flops: 0.0, bytes_read: stream_op(launch).reads() as f64 * b, bytes_written: b }
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
            op: StreamOp::Copy,
            out: Readback::default(),
        }))
    }
}

struct StreamCase {
    b: Vec<f32>,
    c: Vec<f32>,
    a_dev: CudaSlice<f32>,
    b_dev: CudaSlice<f32>,
    c_dev: CudaSlice<f32>,
    /// The operation of the last launch, which the check recomputes.
    op: StreamOp,
    out: Readback<f32>,
}

impl Case for StreamCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.a_dev)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Stream { op } = kernel.launch.params else {
            return Err(LabError::Usage(format!("{} does not take the memory family's arguments", kernel.spec.name)));
        };
        self.op = op;
        let n = self.b.len() as u64;
        let grid = kernel.grid(gpu, 0, 0, n)?;
        let (b, _b) = self.b_dev.device_ptr(&gpu.stream);
        let (c, _c) = self.c_dev.device_ptr(&gpu.stream);
        let (a, _a) = self.a_dev.device_ptr_mut(&gpu.stream);
        let args = lab_stream_args { a, b, c, scalar: SCALAR, n };
        // SAFETY: memory kernels take lab_stream_args; a, b and c each hold n floats.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.op = StreamOp::Copy;
        memcpy_d2d(gpu, &mut self.a_dev, &self.b_dev)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = self.out.read(gpu, &self.a_dev)?;
        let o = self.op;
        let (b, c) = (&self.b, &self.c);
        Ok(verify::check(out, b.len(), &|i| (i, op(o, b[i], c[i]) as f64), precision))
    }
}
