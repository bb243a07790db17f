//! The Tensor Core GEMM families, one per input type, each against cublasGemmEx doing the same:
//! `tensor` (fp16 inputs, fp32 output and compute), `tf32` (fp32 inputs, tf32 compute, fp32
//! output) and `int8` (s8 inputs, s32 output and compute). Row-major C = A·B.
//! Shape: [m, n, k]. Work: 2mnk operations; A and B read once, C written once.
//!
//! Inputs are drawn at random and made exact in the input type; the f64 reference multiplies
//! those exact values, so only the arithmetic is under test.

use std::marker::PhantomData;

use cudarc::cublas::result::gemm_ex;
use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t,
    cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T},
    cudaDataType_t,
};
use cudarc::driver::sys::{
    CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave, CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use half::f16;
use rand::{RngExt, SeedableRng};

use super::sgemm::reference;
use super::{poison, random_f32, Case, Family, Shape, Unit, Work};
use crate::device::{DeviceInfo, Gpu, Kernel};
use crate::error::{LabError, Result};
use crate::ffi::{lab_gemm_tc_args, lab_gemm_tma_args, lab_pad_args, lab_tma};
use crate::registry::{Config, VariantSpec};
use crate::sheet::Precision as SheetPrecision;
use crate::verify::{self, Check, Precision};

/// What sets one Tensor Core GEMM family apart: its types, cuBLAS's names for them, and how
/// its inputs are drawn.
pub trait Kind: Sync + Send + 'static {
    type In: DeviceRepr + Copy + Unpin + Send + Sync + 'static;
    type Out: DeviceRepr + ValidAsZeroBits + Copy + Unpin + Send + Sync + 'static;
    const FAMILY: &'static str;
    const BASELINE: &'static str;
    const PRECISION: Precision;
    const SHEET: SheetPrecision;
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

pub struct Fp16;
impl Kind for Fp16 {
    type In = f16;
    type Out = f32;
    const FAMILY: &'static str = "tensor";
    const BASELINE: &'static str = "cuBLAS GemmEx fp16";
    const PRECISION: Precision = Precision::Fp16F32Acc;
    const SHEET: SheetPrecision = SheetPrecision::Fp16F32Acc;
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

pub struct Tf32;
impl Kind for Tf32 {
    type In = f32;
    type Out = f32;
    const FAMILY: &'static str = "tf32";
    const BASELINE: &'static str = "cuBLAS GemmEx tf32";
    const PRECISION: Precision = Precision::Tf32;
    const SHEET: SheetPrecision = SheetPrecision::Tf32;
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

pub struct Int8;
impl Kind for Int8 {
    type In = i8;
    type Out = i32;
    const FAMILY: &'static str = "int8";
    const BASELINE: &'static str = "cuBLAS GemmEx int8";
    const PRECISION: Precision = Precision::Exact;
    const SHEET: SheetPrecision = SheetPrecision::Int8;
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
    fn name(&self) -> &'static str {
        K::FAMILY
    }
    fn baseline(&self) -> Option<&'static str> {
        Some(K::BASELINE)
    }
    fn precision(&self) -> Precision {
        K::PRECISION
    }
    fn unit(&self) -> Unit {
        Unit::Tflops
    }
    fn arithmetic(&self) -> SheetPrecision {
        K::SHEET
    }
    fn dims(&self) -> &'static [&'static str] {
        &["m", "n", "k"]
    }
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        let sq = |s: u64| Shape(vec![s, s, s]);
        if quick {
            vec![sq(1000), sq(1024), sq(2048)]
        } else {
            vec![sq(1024), sq(4096), sq(8192)]
        }
    }
    fn parse_size(&self, text: &str) -> std::result::Result<Shape, String> {
        super::sgemm::Sgemm.parse_size(text)
    }
    fn suites(&self) -> Vec<(&'static str, &'static str, Vec<Shape>)> {
        let sq = |x: u64| Shape(vec![x, x, x]);
        vec![
            ("square", "1024, 4096 and 8192", vec![sq(1024), sq(4096), sq(8192)]),
            (
                "align",
                "M = N = K around 4096: the seed articles' multiples-of-8 advice, measured",
                [4095, 4096, 4097, 4100, 4104, 4111, 4112, 4128].into_iter().map(sq).collect(),
            ),
        ]
    }
    fn tune_sizes(&self) -> Vec<Shape> {
        vec![Shape(vec![8192, 8192, 8192])]
    }
    fn can_implement(&self, v: &VariantSpec, config: &Config, shape: &Shape) -> std::result::Result<(), String> {
        super::gemm_can_implement(self.dims(), v, config, shape)
    }
    fn work(&self, shape: &Shape, _config: Option<&Config>) -> Work {
        let [m, n, k] = [shape.0[0] as f64, shape.0[1] as f64, shape.0[2] as f64];
        let (i, o) = (std::mem::size_of::<K::In>() as f64, std::mem::size_of::<K::Out>() as f64);
        Work { flops: 2.0 * m * n * k, bytes_read: i * (m * k + k * n), bytes_written: o * m * n }
    }
    /// The spec sheet's dense rate for the family's precision, where the sheet has the device.
    fn peak(&self, dev: &DeviceInfo, _config: Option<&Config>) -> Option<f64> {
        crate::sheet::for_device(&dev.name, dev.sms)?.rate(K::SHEET)
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

/// A 2-D TMA tensor map of a row-major matrix: `dims` (inner first), the row pitch in bytes,
/// boxes of `boxes` elements, 128-byte swizzle, zeros outside the matrix.
fn tensor_map(ty: CUtensorMapDataType, base: u64, dims: [u64; 2], pitch: u64, boxes: [u32; 2]) -> Result<lab_tma> {
    let mut map = lab_tma { opaque: [0; 16] };
    let strides = [pitch];
    let elem = [1u32, 1];
    // SAFETY: lab_tma has CUtensorMap's size and alignment (128 bytes, 64-aligned); the arrays
    // hold rank (2) or rank - 1 entries as the call requires.
    let r = unsafe {
        cudarc::driver::sys::cuTensorMapEncodeTiled(
            &mut map as *mut lab_tma as *mut _,
            ty,
            2,
            base as *mut _,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        return Err(LabError::Usage(format!("cuTensorMapEncodeTiled: {r:?} (dims {dims:?}, pitch {pitch} B, box {boxes:?})")));
    }
    Ok(map)
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

/// The row pitch, in elements, TMA reads `cols` elements of `size` bytes at: the rows themselves
/// where they are a whole number of 32-byte sectors, else padded to 128 bytes. TMA accepts
/// 16-byte pitches, but on the H200 rung 5 ran 404 TFLOP/s at 4104 (8208-byte rows) against 508
/// at 4112 (8224) with the same tiles (log 2026-11-30-s3-3): rows off the sector grid cost each
/// box row an extra sector.
pub fn fast_pitch(cols: usize, size: usize) -> usize {
    if cols * size % 32 == 0 {
        cols
    } else {
        cols.next_multiple_of(128 / size)
    }
}

/// The device address of `src` (rows x cols 2-byte elements, packed) at row pitch `ld`: `src`
/// itself when ld == cols, else a pitched copy into `dst` (allocated on first use) by the
/// kernel module's `lab_pad_rows_u16` on the lab's stream.
fn pitched<T: DeviceRepr>(
    gpu: &Gpu,
    kernel: &Kernel,
    src: &CudaSlice<T>,
    dst: &mut Option<CudaSlice<T>>,
    rows: usize,
    cols: usize,
    ld: usize,
) -> Result<u64> {
    let (from, _from) = src.device_ptr(&gpu.stream);
    if ld == cols {
        return Ok(from);
    }
    if std::mem::size_of::<T>() != 2 {
        return Err(LabError::Usage(format!("{}: only 2-byte inputs get a padded pitch", kernel.spec.name)));
    }
    if dst.is_none() {
        // SAFETY: every element is written by the pad kernel below before the GEMM reads it.
        *dst = Some(unsafe { gpu.stream.alloc::<T>(rows * ld) }?);
    }
    let (to, _to) = dst.as_mut().expect("allocated above").device_ptr_mut(&gpu.stream);
    let args = lab_pad_args { src: from, dst: to, rows: rows as u64, cols: cols as u64, ld: ld as u64 };
    let chunks = (rows * ld / 8) as u64;
    let grid = chunks.div_ceil(256).min(gpu.info.sms as u64 * 16) as u32;
    // SAFETY: lab_pad_rows_u16 takes lab_pad_args; src holds rows x cols and dst rows x ld
    // elements of 2 bytes.
    unsafe { kernel.launch_helper("lab_pad_rows_u16", &gpu.stream, grid, 256, &args) }?;
    Ok(to)
}

impl<K: Kind> Case for MmaCase<K> {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.c)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let (bm, bn) = (kernel.define("BM")?, kernel.define("BN")?);
        let grid = ((self.n as u64).div_ceil(bn as u64) as u32, (self.m as u64).div_ceil(bm as u64) as u32, 1);
        let (m, n, k) = (self.m, self.n, self.k);
        if kernel.config.define("TMA") != Some(1) {
            let (a, _a) = self.a.device_ptr(&gpu.stream);
            let (b, _b) = self.b.device_ptr(&gpu.stream);
            let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
            let (m, n, k) = (m as i32, n as i32, k as i32);
            let g = lab_gemm_tc_args { a, b, c, m, n, k, lda: k, ldb: n, ldc: n };
            // SAFETY: the family's kernels take lab_gemm_tc_args; A is m*k and B k*n elements of
            // the family's input type, C m*n of its output type.
            return unsafe { kernel.launch(&gpu.stream, grid, &g) };
        }
        // TMA reads rows whose pitch is a multiple of 16 bytes: an unaligned A or B is first
        // copied to such a pitch (part of the timed work); TMA zero-fills past the true edges.
        let size = std::mem::size_of::<K::In>();
        let (lda, ldb) = (fast_pitch(k, size), fast_pitch(n, size));
        let a = pitched(gpu, kernel, &self.a, &mut self.a_pitched, m, k, lda)?;
        let b = pitched(gpu, kernel, &self.b, &mut self.b_pitched, k, n, ldb)?;
        let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
        let (bk, bm) = (kernel.define("BK")? as u32, bm as u32);
        let g = lab_gemm_tc_args { a, b, c, m: m as i32, n: n as i32, k: k as i32, lda: lda as i32, ldb: ldb as i32, ldc: n as i32 };
        let args = lab_gemm_tma_args {
            g,
            a_map: tensor_map(K::TMA, a, [k as u64, m as u64], (lda * size) as u64, [bk, bm])?,
            b_map: tensor_map(K::TMA, b, [n as u64, k as u64], (ldb * size) as u64, [64, bk])?,
        };
        // SAFETY: TMA kernels take lab_gemm_tma_args (a __grid_constant__ parameter); the maps
        // describe A (m x k, pitch lda) and B (k x n, pitch ldb) as allocated or copied above, and
        // both stay alive in self; C is m*n of the output type.
        unsafe { kernel.launch(&gpu.stream, grid, &args) }
    }

    /// Row-major C = A·B is column-major C^T = B^T·A^T: cuBLAS gets B first, m and n swapped.
    /// With B transposed (n x k row-major, a column-major k x n), that is op T on it ("TN").
    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let (alpha, beta) = K::one_zero();
        let blas = gpu.blas()?;
        let (a, _a) = self.a.device_ptr(&gpu.stream);
        let ((b, _b), op_b, ldb) = match &self.b_t {
            Some(b_t) => (b_t.device_ptr(&gpu.stream), CUBLAS_OP_T, k),
            None => (self.b.device_ptr(&gpu.stream), CUBLAS_OP_N, n),
        };
        let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
        // SAFETY: B is k x n (ld n), or its transpose n x k (ld k); A is m x k (ld k), C is m x n
        // (ld n): column-major views of the row-major buffers, of the types named; alpha and
        // beta are in the compute type.
        unsafe {
            gemm_ex(
                *blas.handle(),
                op_b,
                CUBLAS_OP_N,
                n,
                m,
                k,
                alpha.as_ptr() as *const _,
                b as *const _,
                K::IN,
                ldb,
                a as *const _,
                K::IN,
                k,
                beta.as_ptr() as *const _,
                c as *mut _,
                K::OUT,
                n,
                K::COMPUTE,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(LabError::from)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out: Vec<f32> = gpu.stream.clone_dtoh(&self.c)?.into_iter().map(K::out_f32).collect();
        let want = self.idx.iter().copied().zip(self.want.iter().copied());
        Ok(verify::check(&out, want, precision))
    }
}
