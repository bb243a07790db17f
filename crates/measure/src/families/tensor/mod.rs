//! The Tensor Core GEMM families, one per input type, each against cuBLAS doing the same:
//! `fp16` (fp16 inputs, fp32 output and compute), `bf16` (likewise), `tf32` (fp32 inputs, tf32
//! compute, fp32 output), `int8` (s8 inputs, s32 output and compute), `fp8` (e4m3 inputs, fp32
//! output and compute) and `fp8_e5m2` (A e5m2, B e4m3, as fp8): row-major C = A·B. And
//! `linear_fp16` and `linear_bf16`, a linear layer's GEMM with its epilogue fused: C = GELU(alpha·A·B
//! + beta·C_in + bias), C_in, bias and C in the inputs' 16-bit type (`kinds::Epilogue`).
//! Shape: [m, n, k]. Work: 2mnk operations; A and B read once, C written once.
//!
//! Inputs are drawn at random and made exact in the input type; the f64 reference multiplies
//! those exact values, so only the arithmetic is under test.

pub mod kinds;
pub mod tma;

use std::marker::PhantomData;

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use self::kinds::{Bf16, Fp16, Fp8, Fp8E5m2, Int8, Kind, LinearBf16, LinearFp16, Tf32};
use super::gemm_reference::GemmReference;
use super::inputs::poison;
use super::pitched::pitched;
use super::sgemm::{gemm_suites, gemm_work};
use super::stream_k;
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Suite};
use crate::error::{LabError, Result};
use crate::facts::launch::{Grid, Launch, Params};
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::driver;
use crate::gpu::ffi::{lab_gemm_f32_args, lab_gemm_tc_args, lab_gemm_tma_args, lab_tma, LAB_TMA_C_COLS, LAB_TMA_C_ROWS};
use crate::gpu::lt;
use crate::schema::check::{Check, Precision};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::Work;

/// A Tensor Core GEMM family of kind `K`.
pub struct MmaGemm<K>(PhantomData<K>);

pub static FP16: MmaGemm<Fp16> = MmaGemm(PhantomData);
pub static BF16: MmaGemm<Bf16> = MmaGemm(PhantomData);
pub static TF32: MmaGemm<Tf32> = MmaGemm(PhantomData);
pub static INT8: MmaGemm<Int8> = MmaGemm(PhantomData);
pub static FP8: MmaGemm<Fp8> = MmaGemm(PhantomData);
pub static FP8_E5M2: MmaGemm<Fp8E5m2> = MmaGemm(PhantomData);
pub static LINEAR_FP16: MmaGemm<LinearFp16> = MmaGemm(PhantomData);
pub static LINEAR_BF16: MmaGemm<LinearBf16> = MmaGemm(PhantomData);

impl<K: Kind> Family for MmaGemm<K> {
    fn info(&self) -> &'static FamilyInfo {
        K::info()
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        let sq = |s: u64| Shape(vec![s, s, s]);
        if quick {
            vec![sq(1000), sq(1024), sq(2048)]
        } else {
            vec![sq(1024), sq(4096), sq(8192)]
        }
    }
    fn suites(&self) -> Vec<Suite> {
        let sq = |x: u64| Shape(vec![x, x, x]);
        vec![
            Suite { name: "square", about: "1024, 4096 and 8192", shapes: vec![sq(1024), sq(4096), sq(8192)] },
            Suite {
                name: "align",
                about: "M = N = K around 4096: GPU selection guides' multiples-of-8 advice, measured",
                shapes: [4095, 4096, 4097, 4100, 4104, 4111, 4112, 4128].into_iter().map(sq).collect(),
            },
        ]
        .into_iter()
        // The workloads' GEMMs in this family's precision (the selection guides run them in mixed precision).
        .chain(gemm_suites().into_iter().filter(|s| s.name == "bert" || s.name == "resnet"))
        .collect()
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        vec![Shape(vec![8192, 8192, 8192])]
    }
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        let input = std::mem::size_of::<K::In>() as f64;
        let mut work = gemm_work(shape, input, std::mem::size_of::<K::Out>() as f64);
        if let Some(e) = K::EPILOGUE {
            // The epilogue reads bias, and C_in where beta is not 0.
            let (m, n) = (shape.0[0] as f64, shape.0[1] as f64);
            work.bytes_read += input * (n + if e.beta != 0.0 { m * n } else { 0.0 });
        }
        work
    }
    /// The spec sheet's dense rate for the family's precision, where the sheet has the device.
    fn peak(&self, dev: &DeviceInfo, _launch: Option<&Launch>) -> Option<f64> {
        sheet::for_device(&dev.name, dev.sms)?.rate(K::info().arithmetic)
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let [m, n, k] = [shape.0[0] as usize, shape.0[1] as usize, shape.0[2] as usize];
        let (a_in, a) = K::draw_a(m * k, seed);
        let (b_in, b) = K::draw(k * n, seed ^ 0x9e37_79b9_7f4a_7c15);
        let (reference, fused) = match K::EPILOGUE {
            Some(e) => {
                let (c_in, c_exact) = K::draw(m * n, seed ^ 0x5bd1_e995);
                let (bias, bias_exact) = K::draw(n, seed ^ 0x2545_f491);
                let f = |i: usize, ab: f64| e.apply(ab, c_exact[i] as f64, bias_exact[i % n] as f64);
                let reference = GemmReference::mapped(gpu, &a, &b, [m, n, k], seed, &f)?;
                (reference, Some(Fused { c_in: gpu.stream.clone_htod(&c_in)?, bias: gpu.stream.clone_htod(&bias)?, e }))
            }
            None => (GemmReference::new(gpu, &a, &b, [m, n, k], seed)?, None),
        };
        let b_t = if K::B_KMAJOR {
            let t: Vec<K::In> = (0..n * k).map(|i| b_in[(i % k) * n + i / k]).collect();
            Some(gpu.stream.clone_htod(&t)?)
        } else {
            None
        };
        Ok(Box::new(MmaCase::<K> {
            m,
            n,
            k,
            a: gpu.stream.clone_htod(&a_in)?,
            b: gpu.stream.clone_htod(&b_in)?,
            // SAFETY: every use is preceded by poison() or a full write by the product under test.
            c: unsafe { gpu.stream.alloc::<K::Out>(m * n) }?,
            a_pitched: None,
            b_pitched: None,
            b_t,
            lt_default: None,
            scratch: stream_k::Scratch::default(),
            reference,
            fused,
        }))
    }
}

struct MmaCase<K: Kind> {
    m: usize,
    n: usize,
    k: usize,
    a: CudaSlice<K::In>,
    b: CudaSlice<K::In>,
    c: CudaSlice<K::Out>,
    /// A and B at a 16-byte-aligned pitch, for TMA, when their own rows are not.
    a_pitched: Option<CudaSlice<K::In>>,
    b_pitched: Option<CudaSlice<K::In>>,
    /// B transposed (n x k), where the family gives B K-major (Kind::B_KMAJOR).
    b_t: Option<CudaSlice<K::In>>,
    /// cuBLASLt's descriptors and candidates, where its first is the default call (Kind::LT_DEFAULT).
    lt_default: Option<lt::Prepared>,
    /// A stream-K kernel's scratch (lab_gemm_tma_args, or lab_gemm_f32_args without TMA).
    scratch: stream_k::Scratch,
    reference: GemmReference,
    /// A fused epilogue's operands (Kind::EPILOGUE).
    fused: Option<Fused<K>>,
}

/// C_in (m x n) and bias (n) of a fused epilogue, in the input type.
struct Fused<K: Kind> {
    c_in: CudaSlice<K::In>,
    bias: CudaSlice<K::In>,
    e: kinds::Epilogue,
}

impl<K: Kind> Case for MmaCase<K> {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.c)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Gemm { tma_bk, tile: (bm, bn), stream_k, .. } = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let grid = kernel.grid(gpu, self.n as u64, self.m as u64, 0)?;
        let (m, n, k) = (self.m, self.n, self.k);
        let Some(bk) = tma_bk else {
            // The epilogue's operands travel in the tensor-map path's args alone.
            if self.fused.is_some() {
                return Err(LabError::Usage(format!("{}: a fused epilogue needs the tensor-map path (TMA = 1)", kernel.spec.name)));
            }
            let (a, _a) = self.a.device_ptr(&gpu.stream);
            let (b, _b) = self.b.device_ptr(&gpu.stream);
            let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
            let (m, n, k) = (m as i32, n as i32, k as i32);
            if stream_k {
                // The sgemm protocol's stream-K: its args and scratch; one-tile-a-block, or
                // (PERSISTENT) one block a stream-K slot, walking the whole tiles first.
                let tiles = (n as u32).div_ceil(bn) * (m as u32).div_ceil(bm);
                let plan = self.scratch.plan(gpu, kernel, tiles, (bm * bn) as usize * std::mem::size_of::<K::Out>())?;
                let launch = if matches!(kernel.launch.grid, Grid::PerSm { .. }) { (plan.sk_blocks as u32, 1, 1) } else { plan.grid };
                let (partials, arrivals, sk_blocks) = (plan.partials, plan.arrivals, plan.sk_blocks);
                let g =
                    lab_gemm_f32_args { a, b, c, m, n, k, lda: k, ldb: n, ldc: n, alpha: 1.0, beta: 0.0, partials, arrivals, sk_blocks };
                // SAFETY: a stream-K kernel without TMA takes lab_gemm_f32_args; A is m*k and B
                // k*n elements of the family's input type, C m*n of its output type; the scratch
                // holds two tiles of C's type and a zeroed counter for each stream-K block.
                return unsafe { kernel.launch(gpu, launch, &g) };
            }
            let g = lab_gemm_tc_args { a, b, c, m, n, k, lda: k, ldb: n, ldc: n };
            // SAFETY: the family's kernels take lab_gemm_tc_args; A is m*k and B k*n elements of
            // the family's input type, C m*n of its output type.
            return unsafe { kernel.launch(gpu, grid, &g) };
        };
        // TMA reads rows whose pitch is a multiple of 16 bytes: an unaligned A or B is first
        // copied to such a pitch (part of the timed work); TMA zero-fills past the true edges.
        let size = std::mem::size_of::<K::In>();
        let paired = kernel.launch.cluster != [1, 1, 1];
        let lda = tma::fast_pitch(k, size, paired);
        let a = pitched(gpu, kernel, &self.a, &mut self.a_pitched, m, k, lda)?;
        // K-major B: boxes of BK x BN, like A's, or each block of a cluster its share of the
        // rows; MN-major: 128-byte column chunks, BK rows.
        let (b, ldb, dims, boxes) = match &self.b_t {
            Some(b_t) => {
                let ldb = tma::fast_pitch(k, size, paired);
                (pitched(gpu, kernel, b_t, &mut self.b_pitched, n, k, ldb)?, ldb, [k, n], [bk, bn / kernel.launch.cluster[1]])
            }
            None => {
                let ldb = tma::fast_pitch(n, size, paired);
                (pitched(gpu, kernel, &self.b, &mut self.b_pitched, k, n, ldb)?, ldb, [n, k], [(128 / size) as u32, bk])
            }
        };
        let (partials, arrivals) = if stream_k {
            // Two tiles of C's type a block and two counters a block (the kernel's header).
            let blocks = grid.0 as usize;
            self.scratch.get(gpu, 2 * blocks * (bm * bn) as usize * std::mem::size_of::<K::Out>(), 2 * blocks)?
        } else {
            (0, 0)
        };
        let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
        let g = lab_gemm_tc_args { a, b, c, m: m as i32, n: n as i32, k: k as i32, lda: lda as i32, ldb: ldb as i32, ldc: n as i32 };
        // C through TMA stores where its rows are 16-byte aligned: a persistent kernel's epilogue
        // (one tile a block stages C through its drained ring and never reads the map).
        let out = std::mem::size_of::<K::Out>();
        // A fused epilogue writes C from the registers.
        let c_tma = (n * out) % 16 == 0 && matches!(kernel.launch.grid, Grid::PerSm { .. }) && self.fused.is_none();
        let c_map = if c_tma {
            driver::tensor_map_2d(K::OUT_TMA, c, [n as u64, m as u64], (n * out) as u64, [LAB_TMA_C_COLS, LAB_TMA_C_ROWS])?
        } else {
            lab_tma::default()
        };
        // MN-major B of one block, where n fills whole 128-byte chunks and every tile starts on
        // one (BN a multiple of the chunk): the chunks as a third dimension (128 bytes apart), so
        // a k-tile's BN / chunk of them are one copy. The rule lives here alone: the kernel loads
        // by whichever map b_chunks says it was given (hopper_kernel.cuh).
        let chunk = (128 / size) as u64;
        let b_chunks = self.b_t.is_none() && kernel.launch.cluster == [1, 1, 1] && (n * size) % 128 == 0 && bn as u64 % chunk == 0;
        // The kernel steps through the map's third dimension in 64-column chunks (16-bit B).
        debug_assert!(!b_chunks || chunk == 64, "MN-major B is 16-bit");
        let b_map = if b_chunks {
            driver::tensor_map(
                K::TMA,
                b,
                &[chunk, k as u64, n as u64 / chunk],
                &[(ldb * size) as u64, 128],
                &[chunk as u32, bk, bn / chunk as u32],
            )?
        } else {
            driver::tensor_map_2d(K::TMA, b, dims.map(|d| d as u64), (ldb * size) as u64, boxes)?
        };
        let args = lab_gemm_tma_args {
            g,
            a_map: driver::tensor_map_2d(K::TMA, a, [k as u64, m as u64], (lda * size) as u64, [bk, bm])?,
            b_map,
            c_map,
            partials,
            arrivals,
            c_tma: c_tma.into(),
            b_chunks: b_chunks.into(),
            c_in: self.fused.as_ref().map_or(0, |f| f.c_in.device_ptr(&gpu.stream).0),
            bias: self.fused.as_ref().map_or(0, |f| f.bias.device_ptr(&gpu.stream).0),
            alpha: self.fused.as_ref().map_or(1.0, |f| f.e.alpha),
            beta: self.fused.as_ref().map_or(0.0, |f| f.e.beta),
        };
        // SAFETY: TMA kernels take lab_gemm_tma_args (a __grid_constant__ parameter); the maps
        // describe A (m x k, pitch lda) and B (k x n, or n x k where K-major; pitch ldb) as
        // allocated or copied above, and both stay alive in self; C is m*n of the output type.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        let g = self.vendor_gemm(gpu).expect("every Tensor Core case describes its GEMM");
        if !K::LT_DEFAULT {
            // SAFETY: vendor_gemm describes this case's buffers, which live as long as the case.
            return unsafe { driver::gemm_ex(*gpu.blas()?.handle(), &g) };
        }
        if self.lt_default.is_none() {
            self.lt_default = Some(lt::Prepared::new(gpu, g)?);
        }
        let lt = self.lt_default.as_ref().expect("prepared above");
        let first = lt.candidates.first().ok_or_else(|| LabError::Unavailable("cuBLASLt offered no usable algorithm".into()))?;
        lt.launch(gpu, first)
    }

    /// Row-major C = A·B is column-major C^T = B^T·A^T: cuBLAS gets B first, m and n swapped.
    /// With B transposed (n x k row-major, a column-major k x n), that is op T on it ("TN").
    fn vendor_gemm(&self, gpu: &Gpu) -> Option<lt::Gemm> {
        let (m, n, k) = (self.m as u64, self.n as u64, self.k as u64);
        let (a, _a) = self.a.device_ptr(&gpu.stream);
        let ((b, _b), trans_b, ldb) = match &self.b_t {
            Some(b_t) => (b_t.device_ptr(&gpu.stream), true, k),
            None => (self.b.device_ptr(&gpu.stream), false, n),
        };
        let (c, _c) = self.c.device_ptr(&gpu.stream);
        Some(lt::Gemm {
            trans: (trans_b, false),
            m: n,
            n: m,
            k,
            a: (b, K::IN, ldb as i64),
            b: (a, K::IN_A, k as i64),
            c: (c, K::OUT, n as i64),
            compute: K::COMPUTE,
            alpha_beta: self.fused.as_ref().map_or_else(K::one_zero, |f| (f.e.alpha.to_ne_bytes(), f.e.beta.to_ne_bytes())),
            gelu_bias: self
                .fused
                .as_ref()
                .map(|f| lt::GeluBias { c_in: f.c_in.device_ptr(&gpu.stream).0, bias: f.bias.device_ptr(&gpu.stream).0 }),
        })
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        self.reference.check(gpu, &self.c, precision)
    }
}
