//! The reduce family: the sum of n floats in [0, 1) (positive, so the f64 reference is well
//! conditioned and fp32 rounding, not cancellation, decides the error).
//! Shape: [bytes]. Work: the n x 4 bytes read by the first pass; later passes over the partials
//! (at most n / 32 floats) are not counted.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::memory::bytes_label;
use super::{array_sizes, memcpy_d2d, parse_bytes, poison, random_unit_f32, Case, Family, Shape, Unit, Work, MEMCPY_D2D};
use crate::device::{DeviceInfo, Gpu, Kernel};
use crate::error::Result;
use crate::ffi::lab_reduce_args;
use crate::registry::Config;
use crate::verify::{self, Check, Precision};

pub struct Reduce;

impl Family for Reduce {
    fn name(&self) -> &'static str {
        "reduce"
    }
    fn baseline(&self) -> Option<&'static str> {
        Some(MEMCPY_D2D)
    }
    fn precision(&self) -> Precision {
        Precision::Fp32
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
    /// The baseline copies the array (read and written); a reduction reads it.
    fn work(&self, shape: &Shape, config: Option<&Config>) -> Work {
        let b = shape.0[0] as f64;
        Work { flops: b / 4.0, bytes_read: b, bytes_written: if config.is_none() { b } else { 0.0 } }
    }
    fn peak(&self, dev: &DeviceInfo, _config: Option<&Config>) -> Option<f64> {
        dev.peak_dram_gbs()
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
        let threads = kernel.config.threads() as u64;
        let grid = |n: u64| -> u64 {
            match kernel.config.define("BLOCKS_PER_SM") {
                Some(per_sm) => (gpu.info.sms as u64 * per_sm as u64).min(n.div_ceil(threads * 4)).max(1),
                None => n.div_ceil(threads).max(1),
            }
        };
        let single = kernel.config.define("SINGLE_PASS") == Some(1);
        let (counter, _c) = self.counter.device_ptr_mut(&gpu.stream);
        let mut n = self.n as u64;
        let mut from: Option<usize> = None;
        let mut to = 0;
        loop {
            let blocks = grid(n);
            let src = match from {
                None => self.src.device_ptr(&gpu.stream).0,
                Some(b) => self.bufs[b].device_ptr(&gpu.stream).0,
            };
            let dst = self.bufs[to].device_ptr_mut(&gpu.stream).0;
            let args = lab_reduce_args { src, dst, counter, n };
            // SAFETY: reduce kernels take lab_reduce_args; src holds n floats, dst room for a
            // partial per block (plus one), counter one zeroed u32.
            unsafe { kernel.launch(&gpu.stream, (blocks as u32, 1, 1), &args) }?;
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
                Ok(verify::check(&got, std::iter::once((0, self.total)), precision))
            }
            None => {
                let src = gpu.stream.clone_dtoh(&self.src)?;
                let out = gpu.stream.clone_dtoh(&self.copy)?;
                Ok(verify::check(&out, src.iter().enumerate().map(|(i, &x)| (i, x as f64)), Precision::Exact))
            }
        }
    }
}
