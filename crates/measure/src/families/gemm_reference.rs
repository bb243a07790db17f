//! The GEMM families' f64 reference, against which every element of a product is checked.
//!
//! Small products (up to 2³⁰ multiply-adds, about a second of CPU) are computed whole on the
//! CPU. Larger ones, where a CPU reference of every element would take minutes, are computed
//! on the GPU: the same inputs, exact in their type and so exact in f64, multiplied by cuBLAS's
//! DGEMM, and compared with the output element by element by `gpu::compare`. The CPU still
//! computes a sample (random elements, the last row and the last column) and the GPU's product
//! must agree with it there, so a wrong device reference is caught too.
//!
//! What it costs: at 8192³ the f64 inputs and product take 1.5 GiB of GPU memory while the
//! reference is made and the product's 512 MiB after, the DGEMM about 20 ms on an H200, and each
//! check about a millisecond; the CPU's sample and the conversion of the inputs take longer
//! than the GPU's share.

use crate::gpu::cuda::cublas::cublasOperation_t::CUBLAS_OP_N;
use crate::gpu::cuda::cublas::{Gemm, GemmConfig};
use crate::gpu::cuda::CudaSlice;
use rand::{RngExt, SeedableRng};

use crate::error::{LabError, Result};
use crate::gpu::compare::{Compare, Element};
use crate::gpu::device::Gpu;
use crate::verify;
use crate::schema::check::{Check, Precision};

/// Up to this many multiply-adds the reference is the whole product, on the CPU.
pub const FULL_REFERENCE_MAX: u64 = 1 << 30;
/// Random elements of the CPU's sample above that, besides the whole last row and last column.
const SAMPLES: usize = 4096;
/// How far the GPU's f64 product may stand from the CPU's at a sampled element, in units of the
/// sample's RMS: both are f64 sums of the same exact products in different orders, which differ
/// by about k · 2⁻⁵³ of the largest partial sum, 1e-12 at k = 8192.
const ANCHOR: f64 = 1e-9;
/// Elements converted to f64 and copied to the GPU at a time: 512 MiB of host memory.
const CHUNK: usize = 1 << 26;

/// An f64 reference of one product.
pub enum GemmReference {
    /// The whole product, computed on the CPU.
    Host(Vec<f64>),
    /// The whole product on the GPU, with the sum of its squares, and the comparison kernel.
    Device { product: CudaSlice<f64>, ref2: f64, compare: Compare },
}

impl GemmReference {
    /// The reference of row-major A·B (m x k times k x n), `a` and `b` the inputs' exact values.
    pub fn new(gpu: &Gpu, a: &[f32], b: &[f32], dims: [usize; 3], seed: u64) -> Result<GemmReference> {
        GemmReference::build(gpu, a, b, dims, seed, None)
    }

    /// The reference of an epilogue applied to A·B: element i becomes `f(i, product_i)` (a fused
    /// GEMM's alpha, C, bias and activation), in f64. On the GPU's path the product is mapped on
    /// the host copy the anchor check reads, then copied back once.
    pub fn mapped(gpu: &Gpu, a: &[f32], b: &[f32], dims: [usize; 3], seed: u64, f: &dyn Fn(usize, f64) -> f64) -> Result<GemmReference> {
        GemmReference::build(gpu, a, b, dims, seed, Some(f))
    }

    fn build(gpu: &Gpu, a: &[f32], b: &[f32], [m, n, k]: [usize; 3], seed: u64, f: Option<&dyn Fn(usize, f64) -> f64>) -> Result<GemmReference> {
        if (m as u64) * (n as u64) * (k as u64) <= FULL_REFERENCE_MAX {
            let mut want = full_product(a, b, m, n, k);
            if let Some(f) = f {
                want.iter_mut().enumerate().for_each(|(i, w)| *w = f(i, *w));
            }
            return Ok(GemmReference::Host(want));
        }
        // SAFETY: the first product writes every element (accumulate = false).
        let mut product = unsafe { gpu.stream.alloc::<f64>(m * n) }?;
        device_product(gpu, a, b, [m, n, k], &mut product, false)?;
        let (idx, want) = sample(a, b, m, n, k, seed);
        GemmReference::anchored(gpu, product, &idx, &want, &format!("{m}x{n}x{k}"), f)
    }

    /// A reference the GPU computed, held to the CPU's f64 values `want` at elements `idx`: both
    /// are f64 sums of the same exact products in other orders, so they agree to ANCHOR of the
    /// sample's RMS, and a wrong device reference fails here, naming `what` it was of. `f`, where
    /// given, then maps every element (`mapped`).
    pub fn anchored(
        gpu: &Gpu,
        mut product: CudaSlice<f64>,
        idx: &[usize],
        want: &[f64],
        what: &str,
        f: Option<&dyn Fn(usize, f64) -> f64>,
    ) -> Result<GemmReference> {
        let mut host = gpu.stream.clone_dtoh(&product)?;
        let rms = (want.iter().map(|w| w * w).sum::<f64>() / want.len() as f64).sqrt();
        if let Some((i, w)) = idx.iter().zip(want).find(|(&i, &w)| (host[i] - w).abs() > ANCHOR * rms || host[i].is_nan()) {
            return Err(LabError::Usage(format!("the GPU's f64 reference disagrees with the CPU's at element {i} of {what}: {:e} against {w:e}", host[*i])));
        }
        if let Some(f) = f {
            host.iter_mut().enumerate().for_each(|(i, w)| *w = f(i, *w));
            gpu.stream.memcpy_htod(&host, &mut product)?;
        }
        let ref2 = host.iter().map(|x| x * x).sum();
        Ok(GemmReference::Device { product, ref2, compare: Compare::new(gpu)? })
    }

    /// Every element of `out` (the product under test, on the GPU) against the reference.
    pub fn check<T: Element + Into<f64> + Copy>(&mut self, gpu: &Gpu, out: &CudaSlice<T>, precision: Precision) -> Result<Check> {
        match self {
            GemmReference::Host(want) => {
                let got: Vec<f32> = gpu.stream.clone_dtoh(out)?.into_iter().map(|x| Into::<f64>::into(x) as f32).collect();
                Ok(verify::check(&got, want.len(), &|i| (i, want[i]), precision))
            }
            GemmReference::Device { product, ref2, compare } => {
                let elements = out.len();
                let bound = verify::element_bound(precision, *ref2, elements);
                let sums = compare.run(gpu, out, product, bound, precision.rounding())?;
                let first = match sums.first_beyond {
                    Some(i) => {
                        let got = gpu.stream.clone_dtoh(&out.slice(i..i + 1))?[0].into();
                        let want = gpu.stream.clone_dtoh(&product.slice(i..i + 1))?[0];
                        Some((i, got, want))
                    }
                    None => None,
                };
                Ok(verify::from_sums(&sums, elements, precision, first))
            }
        }
    }
}

/// `host` converted to f64 and copied to the GPU a chunk at a time.
fn to_device_f64(gpu: &Gpu, host: &[f32]) -> Result<CudaSlice<f64>> {
    // SAFETY: every element is written by the copies below before any read.
    let mut dev = unsafe { gpu.stream.alloc::<f64>(host.len()) }?;
    for (i, chunk) in host.chunks(CHUNK).enumerate() {
        let wide: Vec<f64> = chunk.iter().map(|&x| x as f64).collect();
        let at = i * CHUNK;
        gpu.stream.memcpy_htod(&wide, &mut dev.slice_mut(at..at + chunk.len()))?;
    }
    Ok(dev)
}

/// Row-major A·B in f64 on the GPU, into `c` (m x n), or added to it with `accumulate`. Row-major
/// C = A·B is column-major C^T = B^T·A^T: cuBLAS gets B first, with m and n swapped.
pub fn device_product(gpu: &Gpu, a: &[f32], b: &[f32], [m, n, k]: [usize; 3], c: &mut CudaSlice<f64>, accumulate: bool) -> Result<()> {
    let (a, b) = (to_device_f64(gpu, a)?, to_device_f64(gpu, b)?);
    let (m, n, k) = (m as i32, n as i32, k as i32);
    let beta = if accumulate { 1.0 } else { 0.0 };
    let cfg = GemmConfig { transa: CUBLAS_OP_N, transb: CUBLAS_OP_N, m: n, n: m, k, alpha: 1.0f64, lda: n, ldb: k, beta, ldc: n };
    // SAFETY: the buffers hold k*n, m*k and m*n doubles, matching cfg's shapes and strides; c is
    // read only with accumulate, when an earlier product wrote it.
    unsafe { gpu.blas()?.gemm(cfg, &b, &a, c) }?;
    gpu.sync()?;
    Ok(())
}

/// The CPU's f64 sample: random elements, and every element of the last row and the last
/// column (the edge tiles, where bounds bugs live).
pub fn sample(a: &[f32], b: &[f32], m: usize, n: usize, k: usize, seed: u64) -> (Vec<usize>, Vec<f64>) {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed.rotate_left(17));
    let mut idx: Vec<usize> = (0..SAMPLES).map(|_| rng.random_range(0..m * n)).collect();
    idx.extend((0..n).map(|j| (m - 1) * n + j));
    idx.extend((0..m).map(|i| i * n + n - 1));
    let want = idx
        .iter()
        .map(|&e| {
            let (i, j) = (e / n, e % n);
            (0..k).map(|p| a[i * k + p] as f64 * b[p * n + j] as f64).sum()
        })
        .collect();
    (idx, want)
}

/// A·B in f64, rows split across the CPU's threads.
pub fn full_product(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut c = vec![0.0f64; m * n];
    let threads = std::thread::available_parallelism().map(|t| t.get()).unwrap_or(1);
    let rows_per = m.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        for (chunk_i, chunk) in c.chunks_mut(rows_per * n.max(1)).enumerate() {
            s.spawn(move || {
                for (r, row) in chunk.chunks_mut(n).enumerate() {
                    let i = chunk_i * rows_per + r;
                    for p in 0..k {
                        let aip = a[i * k + p] as f64;
                        for (cj, &bj) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                            *cj += aip * bj as f64;
                        }
                    }
                }
            });
        }
    });
    c
}
