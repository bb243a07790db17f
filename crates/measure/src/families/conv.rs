//! The convolution family: `conv_fp16`, a 2-D convolution in fp16 with fp32 arithmetic, channels
//! last (NHWC input, KRSC filters, NPQK output), against cuDNN's fastest algorithm for the shape
//! (loaded at run time; skipped with the reason where it is absent). Shape: `conv_shape`. Work:
//! 2 n p q k r r c operations; the input and filters read once, the output written once.
//!
//! The f64 reference: up to 2³⁰ multiply-adds the whole output on the CPU. Above, on the GPU as
//! r² GEMMs, one a filter tap, added up by cuBLAS's DGEMM: tap (i, j) multiplies the n p q x c
//! matrix of the input pixels it reads (zeros in the padding) by that tap's c x k weights. The
//! sum of the taps is the convolution, exact inputs in f64, and every output element is compared
//! with it on the GPU (`GemmReference`); the CPU computes a sample, which the GPU's sum must
//! match. What it costs: the largest tap matrix of ResNet-50 at batch 256 (56² pixels x 256
//! channels) is 1.6 GB in f64 on the GPU, and the CPU gathers every tap's matrix once.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};
use half::f16;
use rand::{RngExt, SeedableRng};

use super::conv_shape::ConvShape;
use super::gemm_reference::{device_product, GemmReference, FULL_REFERENCE_MAX};
use super::inputs::poison;
use super::tensor::kinds::{Fp16, Kind};
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes, Suite};
use crate::error::{LabError, Result};
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::networks::RESNET50;
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::dnn_conv::{ConvDims, ConvFwd};
use crate::gpu::ffi::lab_conv_args;
use crate::schema::check::{Check, Precision};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Unit, Work};

pub struct Conv;
pub static CONV_FP16: Conv = Conv;

/// The baseline's name in tables and results.
pub const CUDNN_CONV: &str = "cuDNN convolution (fastest found)";

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::ConvFp16,
    baseline: Some(CUDNN_CONV),
    vendor_best: false,
    precision: Precision::Fp16Storage,
    unit: Unit::Tflops,
    arithmetic: sheet::Precision::Fp16F32Acc,
    shapes: Shapes::Conv,
};

/// The batch the `resnet50` suite runs ResNet-50's convolutions at (the training step's).
pub const RESNET_BATCH: u64 = 256;
/// Random output elements of the CPU's sample of a device reference, besides two whole pixels.
const SAMPLES: usize = 4096;

impl Family for Conv {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    /// Quick: a 3x3 and the stem at batch 32. Else stage 1's 3x3, a 1x1 of each end of the
    /// network and the stem, at batch 256.
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        let at = |i: usize, n: u64| ConvShape::of_network(&RESNET50[i], n).shape();
        if quick {
            vec![at(3, 32), at(0, 32)]
        } else {
            vec![at(3, RESNET_BATCH), at(2, RESNET_BATCH), at(22, RESNET_BATCH), at(0, RESNET_BATCH)]
        }
    }
    fn suites(&self) -> Vec<Suite> {
        vec![Suite {
            name: "resnet50",
            about: "ResNet-50's 53 convolutions as their 23 shapes, batch 256 (what advise prices its step from)",
            shapes: RESNET50.iter().map(|c| ConvShape::of_network(c, RESNET_BATCH).shape()).collect(),
        }]
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        vec![ConvShape::of_network(&RESNET50[3], RESNET_BATCH).shape()]
    }
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        ConvShape::of(shape).work(2.0)
    }
    /// The spec sheet's dense fp16 rate (fp32 accumulation), where the sheet has the device.
    fn peak(&self, dev: &DeviceInfo, _launch: Option<&Launch>) -> Option<f64> {
        sheet::for_device(&dev.name, dev.sms)?.rate(INFO.arithmetic)
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let s = ConvShape::of(shape);
        let (x_in, x) = Fp16::draw(s.input_elements() as usize, seed);
        let (f_in, f) = Fp16::draw(s.filter_elements() as usize, seed ^ 0x9e37_79b9_7f4a_7c15);
        let reference = reference(gpu, &s, &x, &f, seed)?;
        let dims = ConvDims {
            n: s.n as usize,
            h: s.h as usize,
            w: s.w as usize,
            c: s.c as usize,
            k: s.k as usize,
            r: s.r as usize,
            stride: s.stride as usize,
            pad: s.pad as usize,
        };
        let (src, filter) = (gpu.stream.clone_htod(&x_in)?, gpu.stream.clone_htod(&f_in)?);
        // SAFETY: poisoned before every launch (cuDNN's search writes it first).
        let mut dst = unsafe { gpu.stream.alloc::<f16>(s.output_elements() as usize) }?;
        let dnn = ConvFwd::new(gpu, dims, &src, &filter, &mut dst).map_err(|e| e.to_string());
        Ok(Box::new(ConvCase { s, src, filter, dst, dnn, reference }))
    }
}

struct ConvCase {
    s: ConvShape,
    src: CudaSlice<f16>,
    filter: CudaSlice<f16>,
    dst: CudaSlice<f16>,
    /// cuDNN's convolution, or why it cannot run here.
    dnn: std::result::Result<ConvFwd, String>,
    reference: GemmReference,
}

impl Case for ConvCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Conv = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let s = self.s;
        let [pixels, channels, _] = s.gemm();
        let grid = kernel.grid(gpu, pixels, channels, 0)?;
        let (src, _s) = self.src.device_ptr(&gpu.stream);
        let (filter, _f) = self.filter.device_ptr(&gpu.stream);
        let (dst, _d) = self.dst.device_ptr_mut(&gpu.stream);
        let int = |v: u64| v as i32;
        let args = lab_conv_args {
            src,
            filter,
            dst,
            n: int(s.n),
            h: int(s.h),
            w: int(s.w),
            c: int(s.c),
            k: int(s.k),
            r: int(s.r),
            s: int(s.r),
            stride: int(s.stride),
            pad: int(s.pad),
            p: int(s.p()),
            q: int(s.q()),
        };
        // SAFETY: conv kernels take lab_conv_args; src, filter and dst hold the fp16 tensors its
        // dimensions describe (every count under 2^31, as ConvShape::parse requires).
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, _gpu: &Gpu) -> Result<()> {
        match &mut self.dnn {
            Ok(dnn) => dnn.launch(&self.src, &self.filter, &mut self.dst),
            Err(why) => Err(LabError::Unavailable(why.clone())),
        }
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        self.reference.check(gpu, &self.dst, precision)
    }
}

/// The f64 convolution of the exact inputs `x` (NHWC) and `f` (KRSC): whole on the CPU when
/// small, else on the GPU tap by tap and anchored to a CPU sample (the module's comment).
fn reference(gpu: &Gpu, s: &ConvShape, x: &[f32], f: &[f32], seed: u64) -> Result<GemmReference> {
    let [pixels, k, _] = s.gemm().map(|d| d as usize);
    if s.gemm().iter().product::<u64>() <= FULL_REFERENCE_MAX {
        return Ok(GemmReference::Host(direct(s, x, f)));
    }
    // SAFETY: the first tap's product writes every element (accumulate = false).
    let mut product = unsafe { gpu.stream.alloc::<f64>(pixels * k) }?;
    for t in 0..(s.r * s.r) as usize {
        let (a, b) = tap(s, x, f, t);
        device_product(gpu, &a, &b, [pixels, k, s.c as usize], &mut product, t > 0)?;
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed.rotate_left(17));
    let mut idx: Vec<usize> = (0..SAMPLES).map(|_| rng.random_range(0..pixels * k)).collect();
    // The first and last pixels, in the padding's corners, whole.
    idx.extend((0..k).chain((pixels - 1) * k..pixels * k));
    let want: Vec<f64> = idx.iter().map(|&e| at(s, x, f, e / k, e % k)).collect();
    GemmReference::anchored(gpu, product, &idx, &want, &s.label(), None)
}

/// The whole convolution on the CPU, in f64, pixels split across its threads.
pub fn direct(s: &ConvShape, x: &[f32], f: &[f32]) -> Vec<f64> {
    let k = s.k as usize;
    let out = crate::verify::chunked(s.gemm()[0] as usize, 64, &|range| {
        range.flat_map(|m| (0..k).map(move |o| at(s, x, f, m, o))).collect::<Vec<f64>>()
    });
    out.concat()
}

/// Filter tap `t` (row t / r, column t % r of the filter) as a GEMM: the n p q x c matrix of the
/// input pixels it reads (zero rows where it reads padding) and its c x k weights. The
/// convolution is the sum of these products over the r² taps.
pub fn tap(s: &ConvShape, x: &[f32], f: &[f32], t: usize) -> (Vec<f32>, Vec<f32>) {
    let [pixels, k, depth] = s.gemm().map(|d| d as usize);
    let (c, ti, tj) = (s.c as usize, t as u64 / s.r, t as u64 % s.r);
    let a = crate::verify::chunked(pixels, 4096, &|range| {
        let mut rows = vec![0.0f32; range.len() * c];
        for (row, m) in rows.chunks_mut(c).zip(range) {
            if let Some(at) = input_at(s, m, ti, tj) {
                row.copy_from_slice(&x[at..at + c]);
            }
        }
        rows
    })
    .concat();
    // Element (ch, o) is filter o's weight at (ti, tj, ch).
    let b = (0..c * k).map(|e| f[(e % k) * depth + t * c + e / k]).collect();
    (a, b)
}

/// Where the input pixel that output pixel `m`'s tap (ti, tj) reads starts in NHWC; None in the
/// padding.
fn input_at(s: &ConvShape, m: usize, ti: u64, tj: u64) -> Option<usize> {
    let (pq, m) = (s.p() * s.q(), m as u64);
    let (img, op, oq) = (m / pq, m % pq / s.q(), m % s.q());
    let (ih, iw) = ((op * s.stride + ti).checked_sub(s.pad)?, (oq * s.stride + tj).checked_sub(s.pad)?);
    (ih < s.h && iw < s.w).then(|| (((img * s.h + ih) * s.w + iw) * s.c) as usize)
}

/// Output pixel `m`'s channel `o`, in f64.
fn at(s: &ConvShape, x: &[f32], f: &[f32], m: usize, o: usize) -> f64 {
    let (c, depth) = (s.c as usize, (s.r * s.r * s.c) as usize);
    let mut sum = 0.0;
    for tap in 0..(s.r * s.r) as usize {
        if let Some(i) = input_at(s, m, tap as u64 / s.r, tap as u64 % s.r) {
            let w = &f[o * depth + tap * c..o * depth + (tap + 1) * c];
            sum += x[i..i + c].iter().zip(w).map(|(&a, &b)| a as f64 * b as f64).sum::<f64>();
        }
    }
    sum
}
