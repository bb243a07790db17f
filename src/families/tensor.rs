//! The tensor family: row-major C (fp32) = A·B with fp16 A and B on Tensor Cores, against
//! cublasGemmEx doing the same (fp16 inputs, fp32 output, fp32 compute).
//! Shape: [m, n, k]. Work: 2mnk FLOPs; A and B (2 bytes an element) read once, C written once.
//!
//! Inputs are drawn in [-1, 1) and rounded to fp16; the f64 reference multiplies the rounded
//! values, so only the accumulation is under test.

use cudarc::cublas::result::gemm_ex;
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t::CUBLAS_OP_N, cudaDataType_t};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use half::f16;

use super::sgemm::reference;
use super::{poison, random_f32, Case, Family, Shape, Unit, Work};
use crate::device::{DeviceInfo, Gpu, Kernel};
use crate::error::{LabError, Result};
use crate::ffi::lab_gemm_f16_args;
use crate::registry::{Config, VariantSpec};
use crate::verify::{self, Check, Precision};

pub struct Tensor;

impl Family for Tensor {
    fn name(&self) -> &'static str {
        "tensor"
    }
    fn baseline(&self) -> Option<&'static str> {
        Some("cuBLAS GemmEx fp16")
    }
    fn precision(&self) -> Precision {
        Precision::Fp16F32Acc
    }
    fn unit(&self) -> Unit {
        Unit::Tflops
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
    /// Besides `multiple_of`: block rows go to grid.y (at most 65535).
    fn can_implement(&self, v: &VariantSpec, config: &Config, shape: &Shape) -> std::result::Result<(), String> {
        super::gemm_can_implement(self.dims(), v, config, shape)
    }
    fn work(&self, shape: &Shape, _config: Option<&Config>) -> Work {
        let [m, n, k] = [shape.0[0] as f64, shape.0[1] as f64, shape.0[2] as f64];
        Work { flops: 2.0 * m * n * k, bytes_read: 2.0 * (m * k + k * n), bytes_written: 4.0 * m * n }
    }
    /// The spec sheet's dense fp16 rate with fp32 accumulate, where the sheet has the device.
    fn peak(&self, dev: &DeviceInfo, _config: Option<&Config>) -> Option<f64> {
        crate::sheet::for_device(&dev.name, dev.sms)?.rate(crate::sheet::Precision::Fp16F32Acc)
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let [m, n, k] = [shape.0[0] as usize, shape.0[1] as usize, shape.0[2] as usize];
        let round = |v: Vec<f32>| -> (Vec<f16>, Vec<f32>) {
            let h: Vec<f16> = v.iter().map(|&x| f16::from_f32(x)).collect();
            let back = h.iter().map(|x| x.to_f32()).collect();
            (h, back)
        };
        let (a16, a) = round(random_f32(m * k, seed));
        let (b16, b) = round(random_f32(k * n, seed ^ 0x9e37_79b9_7f4a_7c15));
        let (idx, want) = reference(&a, &b, m, n, k, seed);
        Ok(Box::new(TensorCase {
            m,
            n,
            k,
            a: gpu.stream.clone_htod(&a16)?,
            b: gpu.stream.clone_htod(&b16)?,
            // SAFETY: every use is preceded by poison() or a full write by the product under test.
            c: unsafe { gpu.stream.alloc::<f32>(m * n) }?,
            idx,
            want,
        }))
    }
}

struct TensorCase {
    m: usize,
    n: usize,
    k: usize,
    a: CudaSlice<f16>,
    b: CudaSlice<f16>,
    c: CudaSlice<f32>,
    idx: Vec<usize>,
    want: Vec<f64>,
}

impl Case for TensorCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.c)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let (bm, bn) = (kernel.define("BM")?, kernel.define("BN")?);
        let grid = ((self.n as u64).div_ceil(bn as u64) as u32, (self.m as u64).div_ceil(bm as u64) as u32, 1);
        let (a, _a) = self.a.device_ptr(&gpu.stream);
        let (b, _b) = self.b.device_ptr(&gpu.stream);
        let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let args = lab_gemm_f16_args { a, b, c, m, n, k, lda: k, ldb: n, ldc: n };
        // SAFETY: tensor kernels take lab_gemm_f16_args; A is m*k and B k*n halves, C m*n floats.
        unsafe { kernel.launch(&gpu.stream, grid, &args) }
    }

    /// Row-major C = A·B is column-major C^T = B^T·A^T: cuBLAS gets B first, m and n swapped.
    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let (alpha, beta) = (1.0f32, 0.0f32);
        let blas = gpu.blas()?;
        let (a, _a) = self.a.device_ptr(&gpu.stream);
        let (b, _b) = self.b.device_ptr(&gpu.stream);
        let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
        // SAFETY: B is k x n (ld n), A is m x k (ld k), C is m x n (ld n), all column-major views
        // of the row-major buffers; alpha and beta are fp32 as CUBLAS_COMPUTE_32F requires.
        unsafe {
            gemm_ex(
                *blas.handle(),
                CUBLAS_OP_N,
                CUBLAS_OP_N,
                n,
                m,
                k,
                (&alpha) as *const f32 as *const _,
                b as *const _,
                cudaDataType_t::CUDA_R_16F,
                n,
                a as *const _,
                cudaDataType_t::CUDA_R_16F,
                k,
                (&beta) as *const f32 as *const _,
                c as *mut _,
                cudaDataType_t::CUDA_R_32F,
                n,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(LabError::from)
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        let out = gpu.stream.clone_dtoh(&self.c)?;
        let want = self.idx.iter().copied().zip(self.want.iter().copied());
        Ok(verify::check(&out, want, precision))
    }
}
