//! The sgemm family: row-major C = A·B in fp32 (alpha = 1, beta = 0) against cuBLAS SGEMM.
//! Shape: [m, n, k]. Work: 2mnk FLOPs; A and B read once, C written once.

use crate::gpu::cuda::cublas::{cublasComputeType_t, cublasOperation_t::CUBLAS_OP_N, cudaDataType_t};
use crate::gpu::cuda::cublas::{Gemm, GemmConfig};
use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use super::gemm_reference::GemmReference;
use super::inputs::{poison, random_f32};
use super::pitched::{line_pitch, pitched};
use super::stream_k;
use super::{params_mismatch, Case, Family, FamilyInfo, Shape, Shapes, Suite};
use crate::error::{LabError, Result};
use crate::facts::family::FamilyId;
use crate::facts::launch::{Launch, Params};
use crate::facts::sheet;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::lab_gemm_f32_args;
use crate::gpu::lt;
use crate::schema::check::{Check, Precision};
use crate::schema::entry::{Unit, Work};

pub struct Sgemm;

static INFO: FamilyInfo = FamilyInfo {
    id: FamilyId::Sgemm,
    baseline: Some("cuBLAS SGEMM"),
    vendor_best: true,
    precision: Precision::Fp32,
    unit: Unit::Tflops,
    arithmetic: sheet::Precision::Fp32,
    shapes: Shapes::Gemm,
};

fn sq(s: u64) -> Shape {
    Shape(vec![s, s, s])
}

/// The GEMM families' suites: (name, what, shapes).
pub fn gemm_suites() -> Vec<Suite> {
    let s = |m: u64, n: u64, k: u64| Shape(vec![m, n, k]);
    // BERT layers at batch 32 x 512 tokens: m = 16384 tokens, n = output features,
    // k = input features (QKV fused, attention output, MLP up, MLP down).
    let tokens = 32 * 512;
    let bert = |h: u64, f: u64| vec![s(tokens, 3 * h, h), s(tokens, h, h), s(tokens, f, h), s(tokens, h, f)];
    // ResNet-50 convolutions at batch 256 as implicit GEMMs (NHWC): m = 256 x H x W output
    // pixels, n = output channels, k = input channels x kernel area.
    let px = |hw: u64| 256 * hw * hw;
    vec![
        Suite { name: "square", about: "1024 to 8192", shapes: vec![sq(1024), sq(2048), sq(4096), sq(8192)] },
        Suite {
            name: "odd",
            about: "sizes off every tile, and a thin product",
            shapes: vec![sq(1000), sq(1023), sq(4097), s(8192, 64, 8192)],
        },
        Suite {
            name: "bert",
            about: "BERT-base (768 / 3072) and BERT-large (1024 / 4096) layers, 32 x 512 tokens",
            shapes: [bert(768, 3072), bert(1024, 4096)].concat(),
        },
        Suite {
            name: "resnet",
            about: "ResNet-50 3x3 convolutions of stages 2-5 and a 1x1 expansion, batch 256",
            shapes: vec![
                s(px(56), 64, 9 * 64),
                s(px(28), 128, 9 * 128),
                s(px(14), 256, 9 * 256),
                s(px(7), 512, 9 * 512),
                s(px(14), 1024, 256),
            ],
        },
    ]
}

/// 2mnk operations; A and B read once and C written once, at `input` and `output` bytes an element.
pub fn gemm_work(shape: &Shape, input: f64, output: f64) -> Work {
    let [m, n, k] = [shape.0[0] as f64, shape.0[1] as f64, shape.0[2] as f64];
    Work { flops: 2.0 * m * n * k, bytes_read: input * (m * k + k * n), bytes_written: output * m * n }
}

impl Family for Sgemm {
    fn info(&self) -> &'static FamilyInfo {
        &INFO
    }
    /// Squares from 1024 to 8192, and 1000 and 1023, which are not multiples of any tile.
    fn default_sizes(&self, quick: bool) -> Vec<Shape> {
        if quick {
            vec![sq(1000), sq(1023), sq(1024), sq(2048)]
        } else {
            vec![sq(1000), sq(1023), sq(1024), sq(2048), sq(4096), sq(8192)]
        }
    }
    fn suites(&self) -> Vec<Suite> {
        gemm_suites()
    }
    /// 4096³, the size the ladder is set against cuBLAS at, rather than the largest quick size.
    fn tune_sizes(&self) -> Vec<Shape> {
        vec![sq(4096)]
    }
    fn work(&self, shape: &Shape, _launch: Option<&Launch>) -> Work {
        gemm_work(shape, 4.0, 4.0)
    }
    fn prepare(&self, gpu: &mut Gpu, shape: &Shape, seed: u64) -> Result<Box<dyn Case>> {
        let [m, n, k] = [shape.0[0] as usize, shape.0[1] as usize, shape.0[2] as usize];
        let a = random_f32(m * k, seed);
        let b = random_f32(k * n, seed ^ 0x9e37_79b9_7f4a_7c15);
        let reference = GemmReference::new(gpu, &a, &b, [m, n, k], seed)?;
        let c_len = m * n;
        Ok(Box::new(GemmCase {
            m,
            n,
            k,
            a: gpu.stream.clone_htod(&a)?,
            b: gpu.stream.clone_htod(&b)?,
            // SAFETY: every use is preceded by poison() or a full write by the product under test.
            c: unsafe { gpu.stream.alloc::<f32>(c_len) }?,
            a_pitched: None,
            b_pitched: None,
            scratch: stream_k::Scratch::default(),
            reference,
        }))
    }
}

struct GemmCase {
    m: usize,
    n: usize,
    k: usize,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
    c: CudaSlice<f32>,
    /// A and B at a pitch of whole float4s, for kernels with PAD_ROWS, when their own rows are not.
    a_pitched: Option<CudaSlice<f32>>,
    b_pitched: Option<CudaSlice<f32>>,
    scratch: stream_k::Scratch,
    reference: GemmReference,
}

/// The row pitch a PAD_ROWS kernel gets `cols` floats at: the rows themselves where they are
/// whole float4s, else whole 128-byte lines.
fn float4_pitch(cols: usize) -> usize {
    line_pitch(cols, 4, 16)
}

impl Case for GemmCase {
    fn poison(&mut self, gpu: &Gpu) -> Result<()> {
        poison(gpu, &mut self.c)
    }

    fn launch(&mut self, gpu: &Gpu, kernel: &Kernel) -> Result<()> {
        let Params::Gemm { pad_rows, split_k, stream_k, tile: (bm, bn), .. } = kernel.launch.params else {
            return Err(params_mismatch(kernel));
        };
        let (x, y, _) = kernel.grid(gpu, self.n as u64, self.m as u64, 0)?;
        let (m, n, k) = (self.m, self.n, self.k);
        // PAD_ROWS: rows that are not whole float4s are first copied to a pitch that is, zeros
        // past each row (part of the timed work), so the kernel's float4 loop runs at any shape.
        let (lda, ldb) = if pad_rows { (float4_pitch(k), float4_pitch(n)) } else { (k, n) };
        // SPLIT_K: the K slices of a tile add into C, so C starts at zero (timed too).
        if split_k > 1 {
            gpu.stream.memset_zeros(&mut self.c)?;
        }
        let a = pitched(gpu, kernel, &self.a, &mut self.a_pitched, m, k, lda)?;
        let b = pitched(gpu, kernel, &self.b, &mut self.b_pitched, k, n, ldb)?;
        let (grid, sk_blocks, partials, arrivals) = if stream_k {
            let tile_bytes = (bm * bn) as usize * std::mem::size_of::<f32>();
            let plan = self.scratch.plan(gpu, kernel, x * y, tile_bytes)?;
            (plan.grid, plan.sk_blocks, plan.partials, plan.arrivals)
        } else {
            ((x, y, split_k), 0, 0, 0)
        };
        let (c, _c) = self.c.device_ptr_mut(&gpu.stream);
        let [m, n, k, lda, ldb] = [m, n, k, lda, ldb].map(|d| d as i32);
        let args = lab_gemm_f32_args { a, b, c, m, n, k, lda, ldb, ldc: n, alpha: 1.0, beta: 0.0, partials, arrivals, sk_blocks };
        // SAFETY: sgemm kernels take lab_gemm_f32_args; A is m rows of pitch lda (k used), B k
        // rows of pitch ldb (n used), C m*n floats; a stream-K kernel's scratch holds two tiles
        // of floats and a zeroed counter for each of its sk_blocks blocks.
        unsafe { kernel.launch(gpu, grid, &args) }
    }

    /// Row-major C = A·B is column-major C^T = B^T·A^T: cuBLAS gets B first, with m and n swapped.
    fn launch_baseline(&mut self, gpu: &Gpu) -> Result<()> {
        let (m, n, k) = (self.m as i32, self.n as i32, self.k as i32);
        let cfg = GemmConfig { transa: CUBLAS_OP_N, transb: CUBLAS_OP_N, m: n, n: m, k, alpha: 1.0f32, lda: n, ldb: k, beta: 0.0, ldc: n };
        let blas = gpu.blas()?;
        // SAFETY: the buffers hold k*n, m*k and m*n floats, matching cfg's shapes and strides.
        unsafe { blas.gemm(cfg, &self.b, &self.a, &mut self.c) }.map_err(LabError::from)
    }

    /// The same product as cuBLASLt takes it (cublasSgemm's types: fp32 in, out and compute).
    fn vendor_gemm(&self, gpu: &Gpu) -> Option<lt::Gemm> {
        let (m, n, k) = (self.m as u64, self.n as u64, self.k as u64);
        let (a, _a) = self.a.device_ptr(&gpu.stream);
        let (b, _b) = self.b.device_ptr(&gpu.stream);
        let (c, _c) = self.c.device_ptr(&gpu.stream);
        let f32 = cudaDataType_t::CUDA_R_32F;
        Some(lt::Gemm {
            trans: (false, false),
            m: n,
            n: m,
            k,
            a: (b, f32, n as i64),
            b: (a, f32, k as i64),
            c: (c, f32, n as i64),
            compute: cublasComputeType_t::CUBLAS_COMPUTE_32F,
            alpha_beta: (1.0f32.to_ne_bytes(), 0.0f32.to_ne_bytes()),
            gelu_bias: None,
        })
    }

    fn check(&mut self, gpu: &Gpu, precision: Precision) -> Result<Check> {
        self.reference.check(gpu, &self.c, precision)
    }
}
