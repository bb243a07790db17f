//! What every family's cases share: seeds derived from the run's, random inputs (never zeros,
//! never a pattern), NaN poison, reading outputs back, and the streaming families' baseline,
//! cudaMemcpy.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};
use rand::{RngExt, SeedableRng};

use super::Shape;
use crate::error::Result;
use crate::gpu::device::Gpu;
use crate::gpu::driver;

/// A run's seed where none is given: the clock's nanoseconds, printed so the run can be replayed.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

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
    unsafe { driver::memset(ptr, 0xFF, bytes, &gpu.stream) }
}

/// The name of the streaming families' baseline, which `memcpy_d2d` launches.
pub const MEMCPY_D2D: &str = "cudaMemcpy D2D";

/// The baseline of the streaming families: cudaMemcpy device to device of `src` into `dst`.
pub fn memcpy_d2d<T>(gpu: &Gpu, dst: &mut CudaSlice<T>, src: &CudaSlice<T>) -> Result<()> {
    let bytes = src.len().min(dst.len()) * std::mem::size_of::<T>();
    let (s, _s) = src.device_ptr(&gpu.stream);
    let (d, _d) = dst.device_ptr_mut(&gpu.stream);
    // SAFETY: both buffers hold at least `bytes` bytes and are distinct allocations.
    unsafe { driver::copy(d, s, bytes, &gpu.stream) }
}

/// A page-locked host buffer an output is read back into, kept for the case's life. Reading a
/// large array into fresh pageable memory each time would be the bench's largest cost: 0.67 s per
/// check of a 512 MiB array on an H200 (half of `bench --quick` in the memory family's checks);
/// with this, 0.29 s.
pub struct Readback<T>(Option<PinnedHostSlice<T>>);

impl<T> Default for Readback<T> {
    fn default() -> Self {
        Readback(None)
    }
}

impl<T: DeviceRepr + ValidAsZeroBits> Readback<T> {
    /// `src` as it is on the GPU once the stream's work so far is done.
    pub fn read(&mut self, gpu: &Gpu, src: &CudaSlice<T>) -> Result<&[T]> {
        if self.0.as_ref().is_none_or(|p| p.len() != src.len()) {
            // Plain pinned memory: the default write-combined kind is slow for the CPU to read.
            // SAFETY: the buffer is only read after the copy below fills it.
            self.0 = Some(unsafe { gpu.ctx.alloc_pinned_with_flags::<T>(src.len(), 0) }?);
        }
        let host = self.0.as_mut().expect("allocated above");
        gpu.stream.memcpy_dtoh(src, host)?;
        // The copy is asynchronous, and with event tracking off (Gpu::open) the buffer's own
        // event is never recorded, so as_slice returns at once and a large check (512 MiB) could
        // read a copy still on its way. The stream is waited on instead.
        gpu.sync()?;
        Ok(host.as_slice()?)
    }
}

/// `f` of every row index below `rows`, in order, on as many threads as the machine has: the
/// row-wise families' f64 references over up to 2^31 elements.
pub fn per_row<T: Send>(rows: usize, f: &(dyn Fn(usize) -> T + Sync)) -> Vec<T> {
    crate::verify::chunked(rows, 1, &|r| r.map(f).collect::<Vec<T>>()).into_iter().flatten().collect()
}
