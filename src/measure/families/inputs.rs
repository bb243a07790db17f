//! What every family's cases share: seeds derived from the run's, random inputs (never zeros,
//! never a pattern), NaN poison, and the streaming families' baseline, cudaMemcpy.

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};
use rand::{RngExt, SeedableRng};

use super::Shape;
use crate::error::Result;
use crate::gpu::device::Gpu;
use crate::gpu::driver;

/// A seed for one family and shape, derived from the run's seed so each check draws its own
/// inputs and a run can be replayed with `--seed`.
pub fn seed_for(run_seed: u64, family: &str, shape: &Shape) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ run_seed;
    for b in format!("{family}/{shape}").bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `len` values drawn uniformly from [-1, 1) with `seed`.
pub fn random_f32(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// `len` values drawn uniformly from [0, 1): for sums, which stay well conditioned.
pub fn random_unit_f32(len: usize, seed: u64) -> Vec<f32> {
    let mut v = random_f32(len, seed);
    for x in &mut v {
        *x = (*x + 1.0) * 0.5;
    }
    v
}

/// Fills a GPU buffer with 0xFF bytes: as f32 that is NaN, which every check rejects.
pub fn poison<T>(gpu: &Gpu, buf: &mut CudaSlice<T>) -> Result<()> {
    let bytes = buf.len() * std::mem::size_of::<T>();
    let (ptr, _sync) = buf.device_ptr_mut(&gpu.stream);
    // SAFETY: writes exactly the buffer's own bytes on the GPU's stream.
    unsafe { driver::memset(ptr, 0xFF, bytes, gpu.cu_stream()?) }
}

/// The name of the streaming families' baseline, which `memcpy_d2d` launches.
pub const MEMCPY_D2D: &str = "cudaMemcpy D2D";

/// The baseline of the streaming families: cudaMemcpy device to device of `src` into `dst`.
pub fn memcpy_d2d<T>(gpu: &Gpu, dst: &mut CudaSlice<T>, src: &CudaSlice<T>) -> Result<()> {
    let bytes = src.len().min(dst.len()) * std::mem::size_of::<T>();
    let (s, _s) = src.device_ptr(&gpu.stream);
    let (d, _d) = dst.device_ptr_mut(&gpu.stream);
    // SAFETY: both buffers hold at least `bytes` bytes and are distinct allocations.
    unsafe { driver::copy(d, s, bytes, gpu.cu_stream()?) }
}
