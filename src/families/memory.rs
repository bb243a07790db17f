//! The memory family: copy kernels against cudaMemcpy device to device.
//! Shape: [bytes]. Work: the array read once and written once.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::{parse_count, poison, random_f32, Case, Family, Shape, Unit, Work};
use crate::device::{DeviceInfo, Gpu, Kernel};
use crate::error::Result;
use crate::ffi::lab_copy_args;
use crate::verify::{self, Check, Precision};

pub struct Memory;

const MIB: u64 = 1 << 20;

impl Family for Memory {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn baseline(&self) -> &'static str {
        "cudaMemcpy D2D"
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
    /// Arrays well above any L2 (60 MB on an H200), plus one whose length is not a multiple of
    /// the 16-byte vector, so the tail path runs.
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        if quick {
            vec![Shape(vec![256 * MIB]), Shape(vec![256 * MIB + 12])]
        } else {
            vec![Shape(vec![256 * MIB]), Shape(vec![1024 * MIB]), Shape(vec![1024 * MIB + 12])]
        }
    }
    fn parse_size(&self, text: &str) -> std::result::Result<Shape, String> {
        let bytes = parse_count(text, "size in bytes")?;
        if bytes % 4 != 0 {
            return Err(format!("{bytes} bytes is not a whole number of 4-byte elements"));
        }
        Ok(Shape(vec![bytes]))
    }
    fn label(&self, shape: &Shape) -> String {
        let b = shape.0[0];
        let (whole, rest) = (b / MIB, b % MIB);
        match (whole, rest) {
            (0, _) => format!("{b} B"),
            (w, 0) => format!("{w} MiB"),
            (w, r) => format!("{w} MiB+{r} B"),
        }
    }
    fn work(&self, shape: &Shape) -> Work {
        let b = shape.0[0] as f64;
        Work { flops: 0.0, bytes_read: b, bytes_written: b }
    }
    fn peak(&self, dev: &DeviceInfo) -> Option<f64> {
        dev.peak_dram_gbs()
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let n = (shape.0[0] / 4) as usize;
        let host = random_f32(n, seed);
        let src = gpu.stream.clone_htod(&host)?;
        // SAFETY: every use is preceded by poison() or a full write by the copy under test.
        let dst = unsafe { gpu.stream.alloc::<f32>(n) }?;
        Ok(Box::new(CopyCase { host, src, dst }))
    }
}

struct CopyCase {
    host: Vec<f32>,
    src: CudaSlice<f32>,
    dst: CudaSlice<f32>,
}

impl Case for CopyCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let blocks = gpu.info.sms * kernel.define("BLOCKS_PER_SM")? as u32;
        let (src, _s) = self.src.device_ptr(&gpu.stream);
        let (dst, _d) = self.dst.device_ptr_mut(&gpu.stream);
        let args = lab_copy_args { src, dst, n: self.host.len() as u64 };
        // SAFETY: memory kernels take lab_copy_args; src and dst each hold n f32.
        unsafe { kernel.launch(&gpu.stream, (blocks, 1, 1), &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        let bytes = self.host.len() * 4;
        let (src, _s) = self.src.device_ptr(&gpu.stream);
        let (dst, _d) = self.dst.device_ptr_mut(&gpu.stream);
        // SAFETY: both buffers hold `bytes` bytes and do not overlap.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, gpu.stream.cu_stream()) }?;
        Ok(())
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = gpu.stream.clone_dtoh(&self.dst)?;
        let want = self.host.iter().enumerate().map(|(i, &x)| (i, x as f64));
        Ok(verify::check(&out, want, precision))
    }
}
