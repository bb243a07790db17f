//! A stream-K kernel's scratch (lab.h's `partials` and `arrivals`): room for partial tiles, and
//! arrival counters that start at zero and that every launch leaves at zero. Grown, never shrunk.

use cudarc::driver::{CudaSlice, DevicePtrMut};

use crate::error::Result;
use crate::gpu::device::Gpu;

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
}
