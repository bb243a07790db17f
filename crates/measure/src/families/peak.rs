//! The peak family: throughput-bound loops with their operands in registers, one variant per
//! precision (SIMT fp64 / fp32 / fp16x2 FMA, Tensor Core mma per input type), each against the
//! spec sheet's dense rate for the GPU it runs on. There is no vendor routine to compare with.
//! Shape: [tasks]. Work: tasks x ITERS x CHAINS x OPS operations (an FMA is two).
//!
//! The check: every accumulator ends at start + (tasks its warp ran) x step, exactly (see the
//! kernels' headers), so each thread's sum is known on the host in closed form.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};
use half::{bf16, f16};
use rand::{RngExt, SeedableRng};

use super::inputs::poison;
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes};
use crate::error::{LabError, Result};
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::sheet::{self, Precision as SheetPrecision};
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::{self, lab_peak_args};
use crate::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Unit, Work};

pub struct Peak;

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::Peak,
    baseline: None,
    vendor_best: false,
    precision: Precision::Exact,
    unit: Unit::Tflops,
    arithmetic: SheetPrecision::Fp32,
    shapes: Shapes::Count,
};

/// The sheet's precision for a kernel's PREC define (lab.h's LAB_* codes).
pub fn precision_of(code: u32) -> Option<SheetPrecision> {
    Some(match code {
        ffi::LAB_FP64 => SheetPrecision::Fp64,
        ffi::LAB_FP64_TENSOR => SheetPrecision::Fp64Tensor,
        ffi::LAB_FP32 => SheetPrecision::Fp32,
        ffi::LAB_FP16 => SheetPrecision::Fp16,
        ffi::LAB_TF32 => SheetPrecision::Tf32,
        ffi::LAB_FP16_F16ACC => SheetPrecision::Fp16F16Acc,
        ffi::LAB_FP16_F32ACC => SheetPrecision::Fp16F32Acc,
        ffi::LAB_BF16_F32ACC => SheetPrecision::Bf16F32Acc,
        ffi::LAB_FP8_F32ACC => SheetPrecision::Fp8F32Acc,
        ffi::LAB_INT8 => SheetPrecision::Int8,
        _ => return None,
    })
}

/// Products summed into one element of D by one mma instruction (its K), for Tensor Core codes:
/// the kernel's MMA_K where it names one, else the precision's one shape.
fn mma_k(p: SheetPrecision, named: Option<u32>) -> Option<f64> {
    if let Some(k) = named {
        return Some(k as f64);
    }
    match p {
        SheetPrecision::Fp64Tensor => Some(4.0),
        SheetPrecision::Tf32 => Some(8.0),
        SheetPrecision::Fp16F16Acc | SheetPrecision::Fp16F32Acc | SheetPrecision::Bf16F32Acc => Some(16.0),
        SheetPrecision::Int8 | SheetPrecision::Fp8F32Acc => Some(32.0),
        _ => None,
    }
}

/// fp8 e4m3 bits of `x`, for the normal values the family draws (exact or None).
pub fn e4m3_bits(x: f64) -> Option<u8> {
    let sign = if x < 0.0 { 0x80u8 } else { 0 };
    let m = x.abs();
    let e = m.log2().floor() as i32;
    let frac = m / 2f64.powi(e) - 1.0;
    let mant = frac * 8.0;
    let biased = e + 7;
    ((1..=15).contains(&biased) && mant.fract() == 0.0 && mant < 8.0).then_some(sign | ((biased.clamp(0, 15) as u8) << 3) | mant as u8)
}

/// The inputs of one precision, drawn from `seed`: register images for the kernel and what
/// each accumulator gains per task (`step`) from where it starts (`starts`).
pub struct Inputs {
    pub words: Vec<u64>,
    pub starts: Vec<f64>,
    pub step: f64,
}

/// Values every format the family uses holds exactly: multiples of 1/8 in [1/4, 1].
const EIGHTHS: [f64; 7] = [0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0];

/// `chains` independent accumulators a thread keeps; on the Tensor Core path, `acc` accumulator
/// elements of each that its output stands for, and the mma's K where the kernel names it.
pub fn inputs(p: SheetPrecision, chains: usize, acc: usize, mma_k_define: Option<u32>, seed: u64) -> Option<Inputs> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut pick = |set: &[f64]| set[rng.random_range(0..set.len())];
    let c = pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let pair16 = |x: u16| (x as u64) << 16 | x as u64;
    let quad8 = |x: u8| u32::from_ne_bytes([x; 4]) as u64;
    Some(match p {
        SheetPrecision::Fp32 | SheetPrecision::Fp64 => {
            let b = pick(&EIGHTHS);
            let bits = |x: f64| if p == SheetPrecision::Fp32 { (x as f32).to_bits() as u64 } else { x.to_bits() };
            let mut words = vec![bits(1.0), bits(b), bits(-b)];
            words.extend((0..chains).map(|j| bits(c + j as f64)));
            Inputs { words, starts: (0..chains).map(|j| c + j as f64).collect(), step: b }
        }
        SheetPrecision::Fp16 => {
            // Two lanes per register: the low starts at c + j, the high half a unit above.
            let b = pick(&[0.25, 0.5]);
            let h = |lo: f64, hi: f64| (f16::from_f64(hi).to_bits() as u64) << 16 | f16::from_f64(lo).to_bits() as u64;
            let mut words = vec![h(1.0, 1.0), h(b, b), h(-b, -b)];
            words.extend((0..chains).map(|j| h(c + j as f64, c + j as f64 + 0.5)));
            let starts = (0..chains).flat_map(|j| [c + j as f64, c + j as f64 + 0.5]).collect();
            Inputs { words, starts, step: b }
        }
        _ => {
            let k = mma_k(p, mma_k_define)?;
            // fp16 accumulate stays exact only for small sums: 16ab in {1, 2, 4}.
            let set: &[f64] = match p {
                SheetPrecision::Fp16F16Acc => &[0.25, 0.5],
                SheetPrecision::Int8 => &[1.0, 2.0, 3.0],
                SheetPrecision::Fp8F32Acc => &[0.5, 0.625, 0.75, 0.875, 1.0],
                _ => &EIGHTHS,
            };
            let (a, b) = (pick(set), pick(set));
            let image = |x: f64| -> Option<u64> {
                Some(match p {
                    SheetPrecision::Fp16F16Acc | SheetPrecision::Fp16F32Acc => pair16(f16::from_f64(x).to_bits()),
                    SheetPrecision::Bf16F32Acc => pair16(bf16::from_f64(x).to_bits()),
                    SheetPrecision::Tf32 => (x as f32).to_bits() as u64,
                    SheetPrecision::Int8 => quad8(x as i8 as u8),
                    SheetPrecision::Fp8F32Acc => quad8(e4m3_bits(x)?),
                    SheetPrecision::Fp64Tensor => x.to_bits(),
                    _ => return None,
                })
            };
            let start = match p {
                SheetPrecision::Fp16F16Acc => pair16(f16::from_f64(c).to_bits()),
                SheetPrecision::Int8 => c as i32 as u32 as u64,
                SheetPrecision::Fp64Tensor => c.to_bits(),
                _ => (c as f32).to_bits() as u64,
            };
            Inputs { words: vec![image(a)?, image(b)?, image(-b)?, start], starts: vec![c; acc * chains], step: k * a * b }
        }
    })
}

/// Tasks unit `w` (a warp, or a warpgroup) of `warps` runs when task t goes to unit t mod warps.
pub fn tasks_of(w: u64, warps: u64, tasks: u64) -> u64 {
    if w >= tasks {
        0
    } else {
        (tasks - w).div_ceil(warps)
    }
}

impl Family for Peak {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    /// 2^18 tasks: 2-8 ms a launch on an H200 for every precision.
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        vec![Shape(vec![if quick { 1 << 15 } else { 1 << 18 }])]
    }
    fn work(&self, shape: &Shape, launch: Option<&Launch>) -> Work {
        let per_task = match launch.map(|l| l.params) {
            Some(Params::Peak { iters, chains, ops, .. }) => iters as f64 * chains as f64 * ops as f64,
            _ => 0.0,
        };
        Work { flops: shape.0[0] as f64 * per_task, bytes_read: 0.0, bytes_written: 0.0 }
    }
    /// The spec sheet's dense rate for this precision, where the sheet has the device.
    fn peak(&self, dev: &DeviceInfo, launch: Option<&Launch>) -> Option<f64> {
        let Some(Params::Peak { prec, .. }) = launch.map(|l| l.params) else { return None };
        sheet::for_device(&dev.name, dev.sms)?.rate(precision_of(prec)?)
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        // The largest persistent grid: 32 blocks of 1024 threads per SM.
        let threads = gpu.info.sms as usize * 32 * 1024;
        Ok(Box::new(PeakCase {
            tasks: shape.0[0],
            seed,
            // SAFETY: poisoned before every launch.
            out: unsafe { gpu.stream.alloc::<f32>(threads) }?,
            // SAFETY: written by every launch before the kernel reads it.
            inputs: unsafe { gpu.stream.alloc::<u64>(32) }?,
            launched: None,
        }))
    }
}

/// What the last launch ran: its precision's inputs, and its grid's threads.
struct Launched {
    inputs: Inputs,
    threads: u64,
    /// Threads that run a task together: a warp, or a warpgroup for wgmma.
    task_threads: u64,
}

struct PeakCase {
    tasks: u64,
    seed: u64,
    out: CudaSlice<f32>,
    inputs: CudaSlice<u64>,
    launched: Option<Launched>,
}

impl Case for PeakCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.out)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Peak { prec, chains, acc, task_threads, mma_k, .. } = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let p = precision_of(prec).ok_or_else(|| LabError::Usage(format!("PREC = {prec} is not a LAB_* precision of lab.h")))?;
        let inp = inputs(p, chains as usize, acc as usize, mma_k, self.seed)
            .ok_or_else(|| LabError::Usage(format!("the peak family has no inputs for {}", p.label())))?;
        gpu.stream.memcpy_htod(&inp.words, &mut self.inputs)?;
        let grid = kernel.grid(gpu, 0, 0, 0)?;
        self.launched =
            Some(Launched { inputs: inp, threads: grid.0 as u64 * kernel.config.threads() as u64, task_threads: task_threads as u64 });
        let (out, _o) = self.out.device_ptr_mut(&gpu.stream);
        let (inputs, _i) = self.inputs.device_ptr(&gpu.stream);
        let args = lab_peak_args { out, inputs, tasks: self.tasks };
        // SAFETY: peak kernels take lab_peak_args; out holds a float for every thread of the grid
        // (at most 32 blocks of 1024 threads per SM) and inputs the 32 words they may read.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, _gpu: &Gpu) -> Result<()> {
        Err(LabError::Usage("the peak family has no baseline".into()))
    }

    /// Thread i of task unit w: the sum over its accumulators of start + tasks_of(w) x step.
    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let l = self.launched.as_ref().ok_or_else(|| LabError::Usage("checked before a launch".into()))?;
        let out = gpu.stream.clone_dtoh(&self.out)?;
        let (group, units) = (l.task_threads, l.threads / l.task_threads);
        let start: f64 = l.inputs.starts.iter().sum();
        let n = l.inputs.starts.len() as f64;
        let (tasks, step) = (self.tasks, l.inputs.step);
        let want = |i: usize| (i, start + n * step * tasks_of(i as u64 / group, units, tasks) as f64);
        Ok(verify::check(&out[..l.threads as usize], l.threads as usize, &want, precision))
    }
}
