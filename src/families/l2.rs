//! The l2 family: repeated passes over working sets from 1 MiB to past 4x the L2 size; the knee of
//! bandwidth against size gives the lab's estimate of the L2 size.
//! Shape: [working-set bytes]. Work: the set read `passes(bytes)` times.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::memory::bytes_label;
use super::{memcpy_d2d, parse_bytes, poison, random_unit_f32, Case, Family, Shape, Unit, Work, MEMCPY_D2D};
use crate::device::{DeviceInfo, Gpu, Kernel};
use crate::error::Result;
use crate::ffi::lab_l2_args;
use crate::registry::Config;
use crate::store::{Entry, Status};
use crate::verify::{self, Check, Precision};

pub struct L2;

const MIB: u64 = 1 << 20;

/// Passes over a set of `bytes`: about 4 GiB read per launch, so small sets still run long.
pub fn passes(bytes: u64) -> u64 {
    ((4u64 << 30) / bytes.max(1)).clamp(2, 4096)
}

/// Where bandwidth falls below the midpoint between the plateau of small sets (the best rate at
/// up to 8 MiB) and the rate of the largest set, interpolated linearly between the two sizes
/// around it. `points` are (bytes, GB/s) in ascending size.
pub fn knee(points: &[(f64, f64)]) -> Option<f64> {
    let plateau = points.iter().filter(|p| p.0 <= (8 * MIB) as f64).map(|p| p.1).fold(f64::NAN, f64::max);
    let floor = points.last()?.1;
    if plateau.is_nan() || plateau <= floor {
        return None;
    }
    let mid = (plateau + floor) / 2.0;
    let i = points.iter().position(|p| p.0 > (8 * MIB) as f64 && p.1 < mid)?;
    let ((w0, r0), (w1, r1)) = (points[i.checked_sub(1)?], points[i]);
    Some(w0 + (w1 - w0) * (r0 - mid) / (r0 - r1))
}

impl Family for L2 {
    fn name(&self) -> &'static str {
        "l2"
    }
    fn baseline(&self) -> &'static str {
        MEMCPY_D2D
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
        let mib: &[u64] = if quick {
            &[1, 8, 32, 64, 256]
        } else {
            &[1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 72, 80, 96, 128, 192, 256]
        };
        mib.iter().map(|m| Shape(vec![m * MIB])).collect()
    }
    fn parse_size(&self, text: &str) -> std::result::Result<Shape, String> {
        parse_bytes(text, 16)
    }
    fn label(&self, shape: &Shape) -> String {
        bytes_label(shape.0[0])
    }
    /// The baseline copies the set once (read and written); the kernel reads it `passes` times.
    fn work(&self, shape: &Shape, config: Option<&Config>) -> Work {
        let b = shape.0[0] as f64;
        match config {
            None => Work { flops: 0.0, bytes_read: b, bytes_written: b },
            Some(_) => Work { flops: 0.0, bytes_read: b * passes(shape.0[0]) as f64, bytes_written: 0.0 },
        }
    }
    fn peak(&self, dev: &DeviceInfo) -> Option<f64> {
        dev.peak_dram_gbs()
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let n = (shape.0[0] / 4) as usize;
        let host = random_unit_f32(n, seed);
        let total: f64 = host.iter().map(|&x| x as f64).sum();
        // The largest grid any configuration launches: 32 blocks of 1024 threads per SM.
        let out_len = gpu.info.sms as usize * 32 * 1024;
        Ok(Box::new(L2Case {
            src: gpu.stream.clone_htod(&host)?,
            // SAFETY: a copy target; the check reads only what a launch wrote after poison().
            copy: unsafe { gpu.stream.alloc::<f32>(n) }?,
            // SAFETY: poisoned before every launch.
            out: unsafe { gpu.stream.alloc::<f32>(out_len) }?,
            host,
            total,
            passes: passes(shape.0[0]),
            written: 0,
            baseline: false,
        }))
    }
    fn notes(&self, entries: &[&Entry], dev: &DeviceInfo) -> Vec<String> {
        let mut points: Vec<(f64, f64)> =
            entries.iter().filter(|e| !e.baseline && e.status == Status::Ok).filter_map(|e| Some((e.dims[0] as f64, e.rate?))).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let reported = dev.l2_bytes as f64 / MIB as f64;
        match knee(&points) {
            Some(w) => {
                let inferred = w / MIB as f64;
                vec![format!(
                    "L2 inferred from the knee: {inferred:.1} MiB; the device reports {reported:.1} MiB ({:+.0}%)",
                    100.0 * (inferred - reported) / reported
                )]
            }
            None => vec![format!("no knee found in {} working-set sizes (the device reports {reported:.1} MiB of L2)", points.len())],
        }
    }
}

struct L2Case {
    host: Vec<f32>,
    total: f64,
    src: CudaSlice<f32>,
    copy: CudaSlice<f32>,
    out: CudaSlice<f32>,
    passes: u64,
    /// Partial sums the last launch wrote (its grid times its block).
    written: usize,
    baseline: bool,
}

impl Case for L2Case {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.out)?;
        poison(gpu, &mut self.copy)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let blocks = gpu.info.sms * kernel.define("BLOCKS_PER_SM")? as u32;
        self.written = blocks as usize * kernel.config.threads() as usize;
        self.baseline = false;
        let (src, _s) = self.src.device_ptr(&gpu.stream);
        let (out, _o) = self.out.device_ptr_mut(&gpu.stream);
        let args = lab_l2_args { src, out, n: self.host.len() as u64, passes: self.passes as i32 };
        // SAFETY: l2 kernels take lab_l2_args; src holds n floats and out room for every thread.
        unsafe { kernel.launch(&gpu.stream, (blocks, 1, 1), &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        self.baseline = true;
        memcpy_d2d(gpu, &mut self.copy, &self.src)
    }

    /// The kernel: the partial sums add up to passes x the set's sum. The baseline: an exact copy.
    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        if self.baseline {
            let out = gpu.stream.clone_dtoh(&self.copy)?;
            return Ok(verify::check(&out, self.host.iter().enumerate().map(|(i, &x)| (i, x as f64)), Precision::Exact));
        }
        let out = gpu.stream.clone_dtoh(&self.out)?;
        let written = &out[..self.written.min(out.len())];
        let sum: f64 = written.iter().map(|&x| x as f64).sum();
        let mut c = verify::check(&[sum as f32], std::iter::once((0, self.total * self.passes as f64)), precision);
        c.nonfinite = written.iter().filter(|x| !x.is_finite()).count();
        Ok(c)
    }
}
