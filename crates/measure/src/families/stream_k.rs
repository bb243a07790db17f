//! A stream-K kernel's scratch (lab.h's `partials` and `arrivals`): room for partial tiles, and
//! arrival counters that start at zero and that every launch leaves at zero. Grown, never shrunk.
//! And the sgemm protocol's stream-K launch, which the tensor families' kernels without TMA share.

use crate::gpu::cuda::{CudaSlice, DevicePtrMut};

use crate::error::Result;
use crate::gpu::device::{Gpu, Kernel};

/// The one-tile-a-block stream-K launch of the sgemm protocol (sgemm_stream_k.cuh): one block a
/// tile for the tiles of whole waves of `sk_blocks` (a block in each resident slot), then
/// `sk_blocks` blocks that split the rest's k-steps. With fewer tiles than slots but at least two
/// slots a tile, each tile is split into the same number of pieces (split-K's decomposition,
/// without its zeroed C and atomics), so no block spans two tiles.
pub struct Plan {
    pub grid: (u32, u32, u32),
    pub sk_blocks: i32,
    pub partials: u64,
    pub arrivals: u64,
}

#[derive(Default)]
pub struct Scratch {
    partials: Option<CudaSlice<u8>>,
    arrivals: Option<CudaSlice<u32>>,
}

impl Scratch {
    /// Device addresses of at least `bytes` of partials and `counters` counters.
    pub fn get(&mut self, gpu: &Gpu, bytes: usize, counters: usize) -> Result<(u64, u64)> {
        if self.partials.as_ref().is_none_or(|p| p.len() < bytes) {
            // SAFETY: a piece writes its slot before any other block reads it.
            self.partials = Some(unsafe { gpu.stream.alloc::<u8>(bytes) }?);
        }
        if self.arrivals.as_ref().is_none_or(|a| a.len() < counters) {
            self.arrivals = Some(gpu.stream.alloc_zeros::<u32>(counters)?);
        }
        let (p, _p) = self.partials.as_mut().expect("allocated above").device_ptr_mut(&gpu.stream);
        let (a, _a) = self.arrivals.as_mut().expect("allocated above").device_ptr_mut(&gpu.stream);
        Ok((p, a))
    }

    /// The plan for `tiles` tiles of `tile_bytes` bytes of C, with room for two partial tiles and
    /// a counter for each stream-K block.
    pub fn plan(&mut self, gpu: &Gpu, kernel: &Kernel, tiles: u32, tile_bytes: usize) -> Result<Plan> {
        let slots = gpu.info.sms * kernel.blocks_per_sm()?.max(1);
        let sk_blocks = if slots / tiles >= 2 { tiles * (slots / tiles) } else { slots };
        let grid = tiles - tiles % sk_blocks + if tiles % sk_blocks > 0 { sk_blocks } else { 0 };
        let (partials, arrivals) = self.get(gpu, 2 * sk_blocks as usize * tile_bytes, sk_blocks as usize)?;
        Ok(Plan { grid: (grid, 1, 1), sk_blocks: sk_blocks as i32, partials, arrivals })
    }
}
