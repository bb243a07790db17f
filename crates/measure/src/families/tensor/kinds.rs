//! What sets each Tensor Core GEMM family apart: its types, cuBLAS's names for them, the layout
//! of B, and how its inputs are drawn.

use crate::gpu::cuda::cublas::{cublasComputeType_t, cudaDataType_t};
use crate::gpu::cuda::{DeviceRepr, ValidAsZeroBits};
use float8::{F8E4M3, F8E5M2};
use half::{bf16, f16};
use rand::{RngExt, SeedableRng};

use super::super::inputs::random_f32;
use super::super::{FamilyInfo, Shapes};
use crate::facts::family::FamilyId;
use crate::facts::sheet::Precision as SheetPrecision;
use crate::gpu::compare::Element;
use crate::gpu::driver::TmaElement;
use crate::schema::check::Precision;
use crate::schema::entry::Unit;

pub trait Kind: Sync + Send + 'static {
    type In: DeviceRepr + Copy + Unpin + Send + Sync + 'static;
    /// The output type; every output value is exact in f64.
    type Out: Element + ValidAsZeroBits + Copy + Unpin + Send + Sync + Into<f64> + 'static;
    /// The family's facts (name, baseline, precision, arithmetic).
    fn info() -> &'static FamilyInfo;
    /// B's type as cuBLAS names it (and A's, unless IN_A says otherwise).
    const IN: cudaDataType_t;
    /// A's type as cuBLAS names it, where the pair is mixed (fp8 e5m2 x e4m3).
    const IN_A: cudaDataType_t = Self::IN;
    const OUT: cudaDataType_t = cudaDataType_t::CUDA_R_32F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32F;
    /// The input type as a TMA tensor map names it.
    const TMA: TmaElement;
    /// The output type as a TMA tensor map names it (a 4-byte type: fp32 unless said otherwise).
    const OUT_TMA: TmaElement = TmaElement::F32;
    /// B is given K-major (n x k, copied once before timing) to cuBLAS and to the TMA rungs:
    /// wgmma transposes only 16-bit operands, and cuBLAS's fast kernels for these types take
    /// the same "TN" layout. The mma.sync rungs read B as it is (k x n).
    const B_KMAJOR: bool = false;
    /// The default call is cuBLASLt's first heuristic candidate: cublasGemmEx has no such type.
    const LT_DEFAULT: bool = false;
    /// `len` inputs from `seed`, and the exact value of each as f32.
    fn draw(len: usize, seed: u64) -> (Vec<Self::In>, Vec<f32>);
    /// A's inputs, where the pair is mixed; else as B's.
    fn draw_a(len: usize, seed: u64) -> (Vec<Self::In>, Vec<f32>) {
        Self::draw(len, seed)
    }
    /// cuBLAS's alpha = 1 and beta = 0 in the compute type, as bytes.
    fn one_zero() -> ([u8; 4], [u8; 4]) {
        (1.0f32.to_ne_bytes(), 0.0f32.to_ne_bytes())
    }
    /// A linear layer's epilogue fused into the GEMM; None: C = A·B.
    const EPILOGUE: Option<Epilogue> = None;
}

/// C = GELU(alpha·A·B + beta·C_in + bias), cuBLASLt's GELU_BIAS: C_in (m x n) and bias (one
/// element a column) of the input type, C of the output type.
#[derive(Debug, Clone, Copy)]
pub struct Epilogue {
    pub alpha: f32,
    pub beta: f32,
}

impl Epilogue {
    /// GELU's tanh form, which cuBLASLt and the kernels' lab_gelu compute, in f64.
    pub fn gelu(x: f64) -> f64 {
        0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
    }

    /// An element's reference from its product `ab` and the exact values of its C_in and bias.
    pub fn apply(&self, ab: f64, c_in: f64, bias: f64) -> f64 {
        Self::gelu(self.alpha as f64 * ab + self.beta as f64 * c_in + bias)
    }
}

/// A family's facts; each differs in its name, baseline, precision and arithmetic.
const fn info(id: FamilyId, baseline: &'static str, precision: Precision, arithmetic: SheetPrecision) -> FamilyInfo {
    FamilyInfo { id, baseline: Some(baseline), vendor_best: true, precision, unit: Unit::Tflops, arithmetic, shapes: Shapes::Gemm }
}

/// Uniform in [-1, 1), rounded to a type through f32, with the exact values it kept.
fn rounded<T: Copy>(len: usize, seed: u64, to: impl Fn(f32) -> T, back: impl Fn(T) -> f32) -> (Vec<T>, Vec<f32>) {
    let v: Vec<T> = random_f32(len, seed).into_iter().map(to).collect();
    let exact = v.iter().map(|&x| back(x)).collect();
    (v, exact)
}

static FP16_INFO: FamilyInfo = info(FamilyId::Fp16, "cuBLAS GemmEx fp16", Precision::Fp16F32Acc, SheetPrecision::Fp16F32Acc);

pub struct Fp16;
impl Kind for Fp16 {
    type In = f16;
    type Out = f32;
    fn info() -> &'static FamilyInfo {
        &FP16_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_16F;
    const TMA: TmaElement = TmaElement::F16;
    fn draw(len: usize, seed: u64) -> (Vec<f16>, Vec<f32>) {
        rounded(len, seed, f16::from_f32, f16::to_f32)
    }
}

static BF16_INFO: FamilyInfo = info(FamilyId::Bf16, "cuBLAS GemmEx bf16", Precision::Fp16F32Acc, SheetPrecision::Bf16F32Acc);

pub struct Bf16;
impl Kind for Bf16 {
    type In = bf16;
    type Out = f32;
    fn info() -> &'static FamilyInfo {
        &BF16_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_16BF;
    const TMA: TmaElement = TmaElement::Bf16;
    fn draw(len: usize, seed: u64) -> (Vec<bf16>, Vec<f32>) {
        rounded(len, seed, bf16::from_f32, bf16::to_f32)
    }
}

static TF32_INFO: FamilyInfo = info(FamilyId::Tf32, "cuBLAS GemmEx tf32", Precision::Tf32, SheetPrecision::Tf32);

pub struct Tf32;
impl Kind for Tf32 {
    type In = f32;
    type Out = f32;
    fn info() -> &'static FamilyInfo {
        &TF32_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_32F;
    const COMPUTE: cublasComputeType_t = cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32;
    const TMA: TmaElement = TmaElement::F32;
    const B_KMAJOR: bool = true;
    /// Full fp32 values: rounding them to tf32 is part of what the Tensor Cores do.
    fn draw(len: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
        let v = random_f32(len, seed);
        (v.clone(), v)
    }
}

static INT8_INFO: FamilyInfo = info(FamilyId::Int8, "cuBLAS GemmEx int8", Precision::Exact, SheetPrecision::Int8);

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
    const TMA: TmaElement = TmaElement::Byte;
    const OUT_TMA: TmaElement = TmaElement::I32;
    /// cublasGemmEx int8 with B k x n ("NN") runs 128 TOPS at 8192 on an H200, 6% of the sheet.
    const B_KMAJOR: bool = true;
    /// In [-8, 8): sums of up to 2^15 products stay below 2^21, exact as f32 too.
    fn draw(len: usize, seed: u64) -> (Vec<i8>, Vec<f32>) {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let v: Vec<i8> = (0..len).map(|_| rng.random_range(-8i8..8)).collect();
        let exact = v.iter().map(|&x| x as f32).collect();
        (v, exact)
    }
    fn one_zero() -> ([u8; 4], [u8; 4]) {
        (1i32.to_ne_bytes(), 0i32.to_ne_bytes())
    }
}

static FP8_INFO: FamilyInfo = info(FamilyId::Fp8, "cuBLASLt fp8 e4m3 (heuristic's first)", Precision::Fp8F32Acc, SheetPrecision::Fp8F32Acc);

pub struct Fp8;
impl Kind for Fp8 {
    /// e4m3's bits.
    type In = u8;
    type Out = f32;
    fn info() -> &'static FamilyInfo {
        &FP8_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_8F_E4M3;
    const TMA: TmaElement = TmaElement::Byte;
    /// cuBLASLt's fp8 kernels take only "TN".
    const B_KMAJOR: bool = true;
    const LT_DEFAULT: bool = true;
    fn draw(len: usize, seed: u64) -> (Vec<u8>, Vec<f32>) {
        rounded(len, seed, |x| F8E4M3::from_f32(x).to_bits(), |b| F8E4M3::from_bits(b).to_f32())
    }
}

static FP8_E5M2_INFO: FamilyInfo =
    info(FamilyId::Fp8E5m2, "cuBLASLt fp8 e5m2 x e4m3 (heuristic's first)", Precision::Fp8F32Acc, SheetPrecision::Fp8F32Acc);

/// A in e5m2 (the wider range, gradients' format in fp8 training), B in e4m3: the mixed pair
/// cuBLASLt takes (e5m2 x e5m2 it does not). The same rate on the sheet as e4m3 x e4m3.
pub struct Fp8E5m2;
impl Kind for Fp8E5m2 {
    /// e4m3's bits (B), e5m2's (A).
    type In = u8;
    type Out = f32;
    fn info() -> &'static FamilyInfo {
        &FP8_E5M2_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_8F_E4M3;
    const IN_A: cudaDataType_t = cudaDataType_t::CUDA_R_8F_E5M2;
    const TMA: TmaElement = TmaElement::Byte;
    const B_KMAJOR: bool = true;
    const LT_DEFAULT: bool = true;
    fn draw(len: usize, seed: u64) -> (Vec<u8>, Vec<f32>) {
        Fp8::draw(len, seed)
    }
    fn draw_a(len: usize, seed: u64) -> (Vec<u8>, Vec<f32>) {
        rounded(len, seed, |x| F8E5M2::from_f32(x).to_bits(), |b| F8E5M2::from_bits(b).to_f32())
    }
}

static LINEAR_FP16_INFO: FamilyInfo =
    info(FamilyId::LinearFp16, "cuBLASLt fp16 GELU_BIAS (heuristic's first)", Precision::Fp16Storage, SheetPrecision::Fp16F32Acc);

/// A transformer MLP's first linear layer in fp16: C (fp16) = GELU(alpha·A·B + beta·C_in + bias)
/// with fp32 accumulation. alpha and beta are not 1 and 0, so both are under test; the output's
/// rounding to fp16 sets the tolerance (fp16 storage's).
pub struct LinearFp16;
impl Kind for LinearFp16 {
    type In = f16;
    type Out = f16;
    fn info() -> &'static FamilyInfo {
        &LINEAR_FP16_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_16F;
    const OUT: cudaDataType_t = cudaDataType_t::CUDA_R_16F;
    const TMA: TmaElement = TmaElement::F16;
    const LT_DEFAULT: bool = true;
    fn draw(len: usize, seed: u64) -> (Vec<f16>, Vec<f32>) {
        Fp16::draw(len, seed)
    }
    const EPILOGUE: Option<Epilogue> = Some(Epilogue { alpha: 0.75, beta: 0.5 });
}

static LINEAR_BF16_INFO: FamilyInfo =
    info(FamilyId::LinearBf16, "cuBLASLt bf16 GELU_BIAS (heuristic's first)", Precision::Bf16Storage, SheetPrecision::Bf16F32Acc);

/// linear_fp16 in bf16: C (bf16) = GELU(alpha·A·B + beta·C_in + bias), the tolerance bf16 storage's.
pub struct LinearBf16;
impl Kind for LinearBf16 {
    type In = bf16;
    type Out = bf16;
    fn info() -> &'static FamilyInfo {
        &LINEAR_BF16_INFO
    }
    const IN: cudaDataType_t = cudaDataType_t::CUDA_R_16BF;
    const OUT: cudaDataType_t = cudaDataType_t::CUDA_R_16BF;
    const TMA: TmaElement = TmaElement::Bf16;
    const LT_DEFAULT: bool = true;
    fn draw(len: usize, seed: u64) -> (Vec<bf16>, Vec<f32>) {
        Bf16::draw(len, seed)
    }
    const EPILOGUE: Option<Epilogue> = LinearFp16::EPILOGUE;
}
