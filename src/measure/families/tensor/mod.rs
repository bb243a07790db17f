//! The Tensor Core GEMM families, one per input type, each against cublasGemmEx doing the same:
//! `tensor` (fp16 inputs, fp32 output and compute), `tf32` (fp32 inputs, tf32 compute, fp32
//! output) and `int8` (s8 inputs, s32 output and compute). Row-major C = A·B.
//! Shape: [m, n, k]. Work: 2mnk operations; A and B read once, C written once.
//!
//! Inputs are drawn at random and made exact in the input type; the f64 reference multiplies
//! those exact values, so only the arithmetic is under test.

pub mod tma;

use std::marker::PhantomData;

use cudarc::cublas::sys::{cublasComputeType_t, cudaDataType_t};
use cudarc::driver::sys::CUtensorMapDataType;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use half::f16;
use rand::{RngExt, SeedableRng};

use super::inputs::{poison, random_f32};
use super::sgemm::{gemm_suites, gemm_work, reference};
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes, Suite};
use crate::error::Result;
use crate::facts::launch::{Launch, Params};
use crate::facts::sheet::{self, Precision as SheetPrecision};
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::driver;
use crate::gpu::ffi::{lab_gemm_tc_args, lab_gemm_tma_args};
use crate::gpu::lt;
use crate::measure::verify;
use crate::schema::check::{Check, Precision};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Unit, Work};

/// What sets one Tensor Core GEMM family apart: its types, cuBLAS's names for them, and how
/// its inputs are drawn.
pub trait Kind: Sync + Send + 'static {
    type In: DeviceRepr + Copy + Unpin + Send + Sync + 'static;
    type Out: DeviceRepr + ValidAsZeroBits + Copy + Unpin + Send + Sync + 'static;
    /// The family's facts (name, baseline, precision, arithmetic).
    fn info() -> &'static FamilyInfo;
    const IN: cudaDataType_t;
    const OUT: cudaDataType_t;
    const COMPUTE: cublasComputeType_t;
    /// The input type as a TMA tensor map names it.
    const TMA: CUtensorMapDataType;
    /// cuBLAS gets B transposed (n x k, copied once before timing), the "TN" layout its fast
    /// kernels need for this type; the lab's kernels read B as it is (k x n).
    const BASELINE_TN: bool = false;
    /// `len` inputs from `seed`, and the exact value of each as f32.
    fn draw(len: usize, seed: u64) -> (Vec<Self::In>, Vec<f32>);
    fn out_f32(x: Self::Out) -> f32;
    /// cuBLAS's alpha = 1 and beta = 0 in the compute type, as bytes.
    fn one_zero() -> ([u8; 4], [u8; 4]);
}

static TENSOR_INFO: FamilyInfo = FamilyInfo {
    name: "tensor",
    baseline: Some("cuBLAS GemmEx fp16"),
    vendor_best: true,
    precision: Precision::Fp16F32Acc,
    unit: Unit::Tflops,
    arithmetic: SheetPrecision::Fp16F32Acc,
    shapes: Shapes::Gemm,
};

pub struct Fp16;
impl Kind for Fp16 {
    type In = f16;
    type Out = f32;
    fn info() -> &'static FamilyInfo {
        &TENSOR_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_16F;
    const OUT: cudaDataType_t = cudaDataType_t::CUDA_R_32F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32F;
    const TMA: CUtensorMapDataType = CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    fn draw(len: usize, seed: u64) -> (Vec<f16>, Vec<f32>) {
        let h: Vec<f16> = random_f32(len, seed).into_iter().map(f16::from_f32).collect();
        let exact = h.iter().map(|x| x.to_f32()).collect();
        (h, exact)
    }
    fn out_f32(x: f32) -> f32 {
        x
    }
    fn one_zero() -> ([u8; 4], [u8; 4]) {
        (1.0f32.to_ne_bytes(), 0.0f32.to_ne_bytes())
    }
}

static TF32_INFO: FamilyInfo = FamilyInfo {
    name: "tf32",
    baseline: Some("cuBLAS GemmEx tf32"),
    vendor_best: true,
    precision: Precision::Tf32,
    unit: Unit::Tflops,
    arithmetic: SheetPrecision::Tf32,
    shapes: Shapes::Gemm,
};

pub struct Tf32;
impl Kind for Tf32 {
    type In = f32;
    type Out = f32;
    fn info() -> &'static FamilyInfo {
        &TF32_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_32F;
    const OUT: cudaDataType_t = cudaDataType_t::CUDA_R_32F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32;
    const TMA: CUtensorMapDataType = CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    /// Full fp32 values: rounding them to tf32 is part of what the Tensor Cores do.
    fn draw(len: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
        let v = random_f32(len, seed);
        (v.clone(), v)
    }
    fn out_f32(x: f32) -> f32 {
        x
    }
    fn one_zero() -> ([u8; 4], [u8; 4]) {
        (1.0f32.to_ne_bytes(), 0.0f32.to_ne_bytes())
    }
}

static INT8_INFO: FamilyInfo = FamilyInfo {
    name: "int8",
    baseline: Some("cuBLAS GemmEx int8"),
    vendor_best: true,
    precision: Precision::Exact,
    unit: Unit::Tflops,
    arithmetic: SheetPrecision::Int8,
    shapes: Shapes::Gemm,
};

pub struct Int8;
impl Kind for Int8 {
    type In = i8;
    type Out = i32;
    fn info() -> &'static FamilyInfo {
        &INT8_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_8I;
    const OUT: cudaDataType_t = cudaDataType_t::CUDA_R_32I;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32I;
    const TMA: CUtensorMapDataType = CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8;
    /// cublasGemmEx int8 with B k x n ("NN") ran 128 TOPS at 8192 on the H200, 6% of the sheet.
    const BASELINE_TN: bool = true;
    /// In [-8, 8): sums of up to 2^15 products stay below 2^21, exact as f32 too.
    fn draw(len: usize, seed: u64) -> (Vec<i8>, Vec<f32>) {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let v: Vec<i8> = (0..len).map(|_| rng.random_range(-8i8..8)).collect();
        let exact = v.iter().map(|&x| x as f32).collect();
        (v, exact)
    }
    fn out_f32(x: i32) -> f32 {
        x as f32
    }
    fn one_zero() -> ([u8; 4], [u8; 4]) {
        (1i32.to_ne_bytes(), 0i32.to_ne_bytes())
    }
}

/// A Tensor Core GEMM family of kind `K`.
pub struct MmaGemm<K>(PhantomData<K>);

pub static TENSOR: MmaGemm<Fp16> = MmaGemm(PhantomData);
pub static TF32: MmaGemm<Tf32> = MmaGemm(PhantomData);
pub static INT8: MmaGemm<Int8> = MmaGemm(PhantomData);

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
                about: "M = N = K around 4096: the seed articles' multiples-of-8 advice, measured",
                shapes: [4095, 4096, 4097, 4100, 4104, 4111, 4112, 4128].into_iter().map(sq).collect(),
            },
        ]
        .into_iter()
        // The workloads' GEMMs in this family's precision (the seed articles run them mixed).
        .chain(gemm_suites().into_iter().filter(|s| s.name == "bert" || s.name == "resnet"))
        .collect()
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        vec![Shape(vec![8192, 8192, 8192])]
    }
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        gemm_work(shape, std::mem::size_of::<K::In>() as f64, std::mem::size_of::<K::Out>() as f64)
    }
    /// The spec sheet's dense rate for the family's precision, where the sheet has the device.
    fn peak(&self, dev: &DeviceInfo, _launch: Option<&Launch>) -> Option<f64> {
        sheet::for_device(&dev.name, dev.sms)?.rate(K::info().arithmetic)
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let [m, n, k] = [shape.0[0] as usize, shape.0[1] as usize, shape.0[2] as usize];
        let (a_in, a) = K::draw(m * k, seed);
        let (b_in, b) = K::draw(k * n, seed ^ 0x9e37_79b9_7f4a_7c15);
        let (idx, want) = reference(&a, &b, m, n, k, seed);
        let b_t = if K::BASELINE_TN {
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
            idx,
            want,
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
    /// B transposed (n x k), for a baseline that takes it so (Kind::BASELINE_TN).
    b_t: Option<CudaSlice<K::In>>,
    idx: Vec<usize>,
    want: Vec<f64>,
}

impl<K: Kind> Case for MmaCase<K> {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.c)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Gemm { tma_bk } = kernel.launch.params else { return Err(params_mismatch(kernel)) };
        let grid = kernel.grid(gpu, self.n as u64, self.m as u64, 0)?;
        let (m, n, k) = (self.m, self.n, self.k);
        let Some(bk) = tma_bk else {
            let (a, _a) = self.a.device_ptr(&gpu.stream);
            let (b, _b) = self.b.device_ptr(&gpu.stream);
            let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
            let (m, n, k) = (m as i32, n as i32, k as i32);
            let g = lab_gemm_tc_args { a, b, c, m, n, k, lda: k, ldb: n, ldc: n };
            // SAFETY: the family's kernels take lab_gemm_tc_args; A is m*k and B k*n elements of
            // the family's input type, C m*n of its output type.
            return unsafe { kernel.launch(gpu, grid, &g) };
        };
        // TMA reads rows whose pitch is a multiple of 16 bytes: an unaligned A or B is first
        // copied to such a pitch (part of the timed work); TMA zero-fills past the true edges.
        let size = std::mem::size_of::<K::In>();
        let (lda, ldb) = (tma::fast_pitch(k, size), tma::fast_pitch(n, size));
        let a = tma::pitched(gpu, kernel, &self.a, &mut self.a_pitched, m, k, lda)?;
        let b = tma::pitched(gpu, kernel, &self.b, &mut self.b_pitched, k, n, ldb)?;
        let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
        let crate::facts::launch::Grid::Tiles { y: bm, .. } = kernel.launch.grid else { return Err(params_mismatch(kernel)) };
        let g = lab_gemm_tc_args { a, b, c, m: m as i32, n: n as i32, k: k as i32, lda: lda as i32, ldb: ldb as i32, ldc: n as i32 };
        let args = lab_gemm_tma_args {
            g,
            a_map: driver::tensor_map_2d(K::TMA, a, [k as u64, m as u64], (lda * size) as u64, [bk, bm])?,
            b_map: driver::tensor_map_2d(K::TMA, b, [n as u64, k as u64], (ldb * size) as u64, [64, bk])?,
        };
        // SAFETY: TMA kernels take lab_gemm_tma_args (a __grid_constant__ parameter); the maps
        // describe A (m x k, pitch lda) and B (k x n, pitch ldb) as allocated or copied above, and
        // both stay alive in self; C is m*n of the output type.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        let g = self.vendor_gemm(gpu).expect("every Tensor Core case describes its GEMM");
        // SAFETY: vendor_gemm describes this case's buffers, which live as long as the case.
        unsafe { driver::gemm_ex(*gpu.blas()?.handle(), &g) }
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
            b: (a, K::IN, k as i64),
            c: (c, K::OUT, n as i64),
            compute: K::COMPUTE,
            one_zero: K::one_zero(),
        })
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out: Vec<f32> = gpu.stream.clone_dtoh(&self.c)?.into_iter().map(K::out_f32).collect();
        let (idx, want) = (&self.idx, &self.want);
        Ok(verify::check(&out, idx.len(), &|j| (idx[j], want[j]), precision))
    }
}
