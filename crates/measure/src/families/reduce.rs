//! The reduce family: the sum of n floats in [0, 1) (positive, so the f64 reference is well
//! conditioned and fp32 rounding, not cancellation, decides the error).
//! Shape: [bytes]. Work: the n x 4 bytes read by the first pass; later passes over the partials
//! (at most n / 32 floats) are not counted.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use super::inputs::{memcpy_d2d, poison, random_unit_f32, Readback, MEMCPY_D2D};
use super::shapes::array_sizes;
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes};
use crate::error::Result;
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::lab_reduce_args;
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};

pub struct Reduce;

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::Reduce,
    baseline: Some(MEMCPY_D2D),
    vendor_best: false,
    precision: Precision::Fp32,
    unit: Unit::Gbs,
    arithmetic: sheet::Precision::Fp32,
    shapes: Shapes::Bytes { elem: 4 },
};

impl Family for Reduce {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        array_sizes(quick)
    }
    /// The baseline copies the array (read and written); a reduction reads it.
    fn work(&self, shape: &Shape, launch: Option<&Launch>) -> Work {
        let b = shape.0[0] as f64;
        Work { flops: b / 4.0, bytes_read: b, bytes_written: if launch.is_none() { b } else { 0.0 } }
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let n = (shape.0[0] / 4) as usize;
        let host = random_unit_f32(n, seed);
        let total: f64 = host.iter().map(|&x| x as f64).sum();
        let partials = n.div_ceil(32) + 8;
        Ok(Box::new(ReduceCase {
            src: gpu.stream.clone_htod(&host)?,
            // SAFETY: a copy target for the baseline; checked only after it is written.
            copy: unsafe { gpu.stream.alloc::<f32>(n) }?,
            // SAFETY: both are poisoned before every launch.
            bufs: [unsafe { gpu.stream.alloc::<f32>(partials) }?, unsafe { gpu.stream.alloc::<f32>(partials) }?],
            counter: gpu.stream.alloc_zeros::<u32>(1)?,
            n,
            total,
            result: None,
            host,
            out: Readback::default(),
        }))
    }
}

struct ReduceCase {
    n: usize,
    total: f64,
    src: CudaSlice<f32>,
    copy: CudaSlice<f32>,
    /// Partial sums, alternated between passes.
    bufs: [CudaSlice<f32>; 2],
    /// The single-pass rung's ticket; zero between launches.
    counter: CudaSlice<u32>,
    /// Where the last launch left its total (buffer, index); None after the baseline.
    result: Option<(usize, usize)>,
    /// The input, which the baseline's copy must equal.
    host: Vec<f32>,
    out: Readback<f32>,
}

impl Case for ReduceCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.bufs[0])?;
        poison(gpu, &mut self.bufs[1])?;
        poison(gpu, &mut self.copy)
    }

    /// Multi-pass rungs run again on their partials until one value is left; the single-pass
    /// rung (SINGLE_PASS) leaves the total in dst[0].
    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Reduce { single_pass: single } = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let threads = kernel.config.threads() as u64;
        // A grid-stride grid gets no more blocks than groups of four elements per thread.
        let per_sm = matches!(kernel.launch.grid, crate::facts::launch::Grid::PerSm { .. });
        let grid = |n: u64| -> Result<u64> {
            let g = kernel.grid(gpu, 0, 0, n)?.0 as u64;
            Ok(if per_sm { g.min(n.div_ceil(threads * 4)).max(1) } else { g })
        };
        let (counter, _c) = self.counter.device_ptr_mut(&gpu.stream);
        let mut n = self.n as u64;
        let mut from: Option<usize> = None;
        let mut to = 0;
        loop {
            let blocks = grid(n)?;
            let src = match from {
                None => self.src.device_ptr(&gpu.stream).0,
                Some(b) => self.bufs[b].device_ptr(&gpu.stream).0,
            };
            let dst = self.bufs[to].device_ptr_mut(&gpu.stream).0;
            let args = lab_reduce_args { src, dst, counter, n };
            // SAFETY: reduce kernels take lab_reduce_args; src holds n floats, dst room for a
            // partial per block (plus one), counter one zeroed u32.
            unsafe { kernel.launch(gpu, (blocks as u32, 1, 1), &args) }?;
            if single || blocks == 1 {
                self.result = Some((to, 0));
                return Ok(());
            }
            (from, to, n) = (Some(to), 1 - to, blocks);
        }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.result = None;
        memcpy_d2d(gpu, &mut self.copy, &self.src)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        match self.result {
            Some((b, i)) => {
                let got = gpu.stream.clone_dtoh(&self.bufs[b].slice(i..i + 1))?;
                let total = self.total;
                Ok(verify::check(&got, 1, &|_| (0, total), precision))
            }
            None => {
                let (src, out) = (&self.host, self.out.read(gpu, &self.copy)?);
                Ok(verify::check(out, src.len(), &|i| (i, src[i] as f64), Precision::Exact))
            }
        }
    }
}
