//! The convolution family: `conv_fp16`, a 2-D convolution in fp16 with fp32 arithmetic, channels
//! last (NHWC input, KRSC filters, NPQK output), against cuDNN's fastest algorithm for the shape
//! (loaded at run time; skipped with the reason where it is absent). Shape: `conv_shape`. Work:
//! 2 n p q k r r c operations; the pass's two inputs read once and its output written once.
//!
//! A shape may name a gradient's pass instead (`-dgrad`, `-wgrad`), which training runs twice for
//! every forward: cuDNN's alone, since the lab's rungs run the forward pass. The input's gradient
//! dx is a forward convolution too, of dy spread out by the stride (zeros between its pixels) with
//! the filters turned half a turn and their two channel counts swapped, padded by r - 1 - pad;
//! its reference is that convolution's. The filters' gradient dw is, tap by tap, dy's transpose
//! times the tap's matrix of input pixels, a GEMM each on the GPU, or on the CPU when small.
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
use crate::gpu::dnn::unmade;
use crate::gpu::dnn_conv::{ConvDims, ConvOp, Pass};
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
/// The same for the filters' gradient, each of whose elements sums n p q products.
const WGRAD_SAMPLES: usize = 512;

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
        let net = || RESNET50.iter().map(|c| ConvShape::of_network(c, RESNET_BATCH));
        vec![
            Suite {
                name: "resnet50",
                about: "ResNet-50's 53 convolutions as their 23 shapes, batch 256 (what advise prices its step from)",
                shapes: net().map(|s| s.shape()).collect(),
            },
            Suite {
                name: "resnet50-backward",
                about: "the same shapes' two gradients, cuDNN's (the stem's input needs none), which advise prices training from",
                shapes: net()
                    .flat_map(|s| [(s.c > 3).then(|| s.with(Pass::Data)), Some(s.with(Pass::Filter))])
                    .flatten()
                    .map(|s| s.shape())
                    .collect(),
            },
        ]
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
    fn kernels_take(&self, shape: &Shape) -> std::result::Result<(), String> {
        match ConvShape::of(shape).pass {
            Pass::Forward => Ok(()),
            _ => Err("needs the forward pass: a gradient's pass is cuDNN's alone".into()),
        }
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let s = ConvShape::of(shape);
        let draw = |elements: u64, salt: u64| Fp16::draw(elements as usize, seed ^ salt);
        // The pass's two inputs, in cuDNN's order, and its output's elements.
        let ((a_in, a), (b_in, b), out) = match s.pass {
            Pass::Forward => (draw(s.input_elements(), 0), draw(s.filter_elements(), 0x9e37_79b9_7f4a_7c15), s.output_elements()),
            Pass::Data => (draw(s.output_elements(), 0x5851_f42d), draw(s.filter_elements(), 0x9e37_79b9_7f4a_7c15), s.input_elements()),
            Pass::Filter => (draw(s.input_elements(), 0), draw(s.output_elements(), 0x5851_f42d), s.filter_elements()),
        };
        let reference = match s.pass {
            Pass::Forward => reference(gpu, &s, &a, &b, seed, &s.label())?,
            Pass::Data => {
                let (t, dy, w) = dgrad_as_forward(&s, &a, &b);
                reference(gpu, &t, &dy, &w, seed, &s.label())?
            }
            Pass::Filter => wgrad_reference(gpu, &s, &a, &b, seed)?,
        };
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
        let (src, filter) = (gpu.stream.clone_htod(&a_in)?, gpu.stream.clone_htod(&b_in)?);
        // SAFETY: poisoned before every launch (cuDNN's search writes it first).
        let mut dst = unsafe { gpu.stream.alloc::<f16>(out as usize) }?;
        let dnn = ConvOp::new(gpu, dims, s.pass, &src, &filter, &mut dst);
        Ok(Box::new(ConvCase { s, src, filter, dst, dnn, reference }))
    }
}

/// A forward pass's x, w and y; a gradient's two inputs and output in the same fields (dy, w and
/// dx; x, dy and dw).
struct ConvCase {
    s: ConvShape,
    src: CudaSlice<f16>,
    filter: CudaSlice<f16>,
    dst: CudaSlice<f16>,
    /// cuDNN's convolution, or why it cannot run here.
    dnn: Result<ConvOp>,
    reference: GemmReference,
}

impl Case for ConvCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.dst)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Conv = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        // `kernels_take` keeps the rungs off a gradient's buffers, so this is an error, not a skip.
        if self.s.pass != Pass::Forward {
            return Err(LabError::Usage(format!("{} runs the forward pass, not {}", kernel.spec.name, self.s.label())));
        }
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
        let dnn = self.dnn.as_mut().map_err(|e| unmade(e))?;
        dnn.launch(&self.src, &self.filter, &mut self.dst)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        self.reference.check(gpu, &self.dst, precision)
    }
}

/// The f64 convolution of the exact inputs `x` (NHWC) and `f` (KRSC): whole on the CPU when
/// small, else on the GPU tap by tap and anchored to a CPU sample (the module's comment).
/// `what` names the shape in an error (a gradient's, whose reference is a turned convolution).
fn reference(gpu: &Gpu, s: &ConvShape, x: &[f32], f: &[f32], seed: u64, what: &str) -> Result<GemmReference> {
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
    GemmReference::anchored(gpu, product, &idx, &want, what, None)
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
    let [_, k, depth] = s.gemm().map(|d| d as usize);
    let c = s.c as usize;
    // Element (ch, o) is filter o's weight at (ti, tj, ch).
    let b = (0..c * k).map(|e| f[(e % k) * depth + t * c + e / k]).collect();
    (tap_rows(s, x, t), b)
}

/// Tap `t`'s n p q x c matrix of the input pixels it reads, zero rows in the padding.
fn tap_rows(s: &ConvShape, x: &[f32], t: usize) -> Vec<f32> {
    let pixels = s.gemm()[0] as usize;
    let (c, ti, tj) = (s.c as usize, t as u64 / s.r, t as u64 % s.r);
    crate::verify::chunked(pixels, 4096, &|range| {
        let mut rows = vec![0.0f32; range.len() * c];
        for (row, m) in rows.chunks_mut(c).zip(range) {
            if let Some(at) = input_at(s, m, ti, tj) {
                row.copy_from_slice(&x[at..at + c]);
            }
        }
        rows
    })
    .concat()
}

/// The input's gradient of `s` as a forward convolution: the shape, dy spread out by the stride
/// (zeros between its pixels, and below and right of them where the stride left input rows no
/// output saw) and the filters turned half a turn with c and k swapped, padded by r - 1 - pad.
pub fn dgrad_as_forward(s: &ConvShape, dy: &[f32], w: &[f32]) -> (ConvShape, Vec<f32>, Vec<f32>) {
    let (p, q, st) = (s.p(), s.q(), s.stride);
    let (h, wd) = ((p - 1) * st + 1 + (s.h + 2 * s.pad - s.r) % st, (q - 1) * st + 1 + (s.w + 2 * s.pad - s.r) % st);
    let t = ConvShape { n: s.n, h, w: wd, c: s.k, k: s.c, r: s.r, stride: 1, pad: s.r - 1 - s.pad, pass: Pass::Forward };
    let k = s.k as usize;
    let mut spread = vec![0.0f32; t.input_elements() as usize];
    for img in 0..s.n {
        for (i, j) in (0..p).flat_map(|i| (0..q).map(move |j| (i, j))) {
            let from = (((img * p + i) * q + j) as usize) * k;
            let to = (((img * h + i * st) * wd + j * st) as usize) * k;
            spread[to..to + k].copy_from_slice(&dy[from..from + k]);
        }
    }
    let (r, c) = (s.r as usize, s.c as usize);
    // Filter ch of the turned set, tap (i, j), channel o: filter o's weight at (r-1-i, r-1-j, ch).
    let turned = (0..c * r * r * k)
        .map(|e| {
            let (ch, tap, o) = (e / (r * r * k), e / k % (r * r), e % k);
            w[(o * r * r + r * r - 1 - tap) * c + ch]
        })
        .collect();
    (t, spread, turned)
}

/// The filters' gradient dw (k x r r c, as the filters lie) of `s` for input `x` and output
/// gradient `dy`: whole on the CPU when small, else tap by tap on the GPU, anchored to a CPU
/// sample.
fn wgrad_reference(gpu: &Gpu, s: &ConvShape, x: &[f32], dy: &[f32], seed: u64) -> Result<GemmReference> {
    let [pixels, k, depth] = s.gemm().map(|d| d as usize);
    let c = s.c as usize;
    if s.gemm().iter().product::<u64>() <= FULL_REFERENCE_MAX {
        let dw = crate::verify::chunked(k, 1, &|range| {
            range.flat_map(|o| (0..depth).map(move |e| wgrad_at(s, x, dy, o, e))).collect::<Vec<f64>>()
        });
        return Ok(GemmReference::Host(dw.concat()));
    }
    // dy's transpose (k x n p q) times each tap's n p q x c pixels: that tap's c columns of dw.
    let dy_t: Vec<f32> =
        crate::verify::chunked(k, 1, &|range| range.flat_map(|o| (0..pixels).map(move |m| dy[m * k + o])).collect::<Vec<f32>>()).concat();
    let mut host = vec![0.0f64; k * depth];
    // SAFETY: each tap's product writes every element of it (accumulate = false).
    let mut block = unsafe { gpu.stream.alloc::<f64>(k * c) }?;
    for t in 0..(s.r * s.r) as usize {
        device_product(gpu, &dy_t, &tap_rows(s, x, t), [k, c, pixels], &mut block, false)?;
        let got = gpu.stream.clone_dtoh(&block)?;
        for (o, row) in got.chunks(c).enumerate() {
            host[o * depth + t * c..o * depth + (t + 1) * c].copy_from_slice(row);
        }
    }
    let product = gpu.stream.clone_htod(&host)?;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed.rotate_left(17));
    let mut idx: Vec<usize> = (0..WGRAD_SAMPLES).map(|_| rng.random_range(0..k * depth)).collect();
    idx.extend([0, k * depth - 1]);
    let want = crate::verify::chunked(idx.len(), 16, &|range| {
        range.map(|i| wgrad_at(s, x, dy, idx[i] / depth, idx[i] % depth)).collect::<Vec<f64>>()
    });
    GemmReference::anchored(gpu, product, &idx, &want.concat(), &s.label(), None)
}

/// Filter o's gradient at depth e (tap e / c, channel e % c): its output channel of dy times the
/// input pixels that tap read, summed over every output pixel.
pub fn wgrad_at(s: &ConvShape, x: &[f32], dy: &[f32], o: usize, e: usize) -> f64 {
    let (c, k) = (s.c as usize, s.k as usize);
    let (tap, ch) = ((e / c) as u64, e % c);
    (0..s.gemm()[0] as usize).filter_map(|m| input_at(s, m, tap / s.r, tap % s.r).map(|i| dy[m * k + o] as f64 * x[i + ch] as f64)).sum()
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
