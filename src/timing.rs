//! GPU time from CUDA events: warm-up, then many samples, each after an L2 flush, so every
//! sample reads its inputs from DRAM as a cold call would.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr};

use crate::device::Gpu;
use crate::error::Result;

/// How many samples to take.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct Policy {
    pub min_samples: usize,
    pub max_samples: usize,
    /// GPU time to aim for across the samples of one variant and shape, seconds.
    pub budget_s: f64,
    /// Never spend more than this on one variant and shape (slow rungs at large sizes), seconds;
    /// at least `FLOOR_SAMPLES` are taken whatever it costs.
    pub cap_s: f64,
    /// Warm-up GPU time before sampling (at least two launches), seconds.
    pub warmup_s: f64,
}

/// The fewest samples a median is taken over.
pub const FLOOR_SAMPLES: usize = 3;

impl Policy {
    pub fn full() -> Policy {
        Policy { min_samples: 20, max_samples: 200, budget_s: 0.5, cap_s: 8.0, warmup_s: 0.05 }
    }

    pub fn quick() -> Policy {
        Policy { min_samples: 10, max_samples: 50, budget_s: 0.15, cap_s: 3.0, warmup_s: 0.02 }
    }

    /// Samples to take given one launch's time.
    pub fn samples_for(&self, est_ms: f64) -> usize {
        let est_s = (est_ms / 1e3).max(1e-6);
        let wanted = ((self.budget_s / est_s) as usize).clamp(self.min_samples, self.max_samples);
        let affordable = (self.cap_s / est_s) as usize;
        wanted.min(affordable).max(FLOOR_SAMPLES)
    }
}

/// Times launches on a GPU. Owns the buffer used to flush L2 between samples.
pub struct Timer {
    flush: CudaSlice<u8>,
    value: u8,
}

impl Timer {
    /// The flush buffer is twice the L2 size: writing it evicts whatever the last launch left.
    pub fn new(gpu: &Gpu) -> Result<Timer> {
        let bytes = (2 * gpu.info.l2_bytes as usize).max(8 << 20);
        Ok(Timer { flush: gpu.stream.alloc_zeros::<u8>(bytes)?, value: 0 })
    }

    fn flush(&mut self, gpu: &Gpu) -> Result<()> {
        self.value = self.value.wrapping_add(1);
        let (ptr, _sync) = self.flush.device_ptr(&gpu.stream);
        // SAFETY: writes exactly the flush buffer's own bytes on the GPU's stream.
        unsafe { cudarc::driver::result::memset_d8_async(ptr, self.value, self.flush.len(), gpu.cu_stream()?) }?;
        Ok(())
    }

    fn event(gpu: &Gpu) -> Result<CudaEvent> {
        Ok(gpu.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?)
    }

    /// One flushed launch between two recorded events.
    fn sample(&mut self, gpu: &Gpu, launch: &mut dyn FnMut() -> Result<()>) -> Result<(CudaEvent, CudaEvent)> {
        let (start, end) = (Self::event(gpu)?, Self::event(gpu)?);
        self.flush(gpu)?;
        start.record(&gpu.stream)?;
        launch()?;
        end.record(&gpu.stream)?;
        Ok((start, end))
    }

    /// Warms up, then returns one time per sample, in milliseconds.
    pub fn samples(&mut self, gpu: &Gpu, policy: &Policy, launch: &mut dyn FnMut() -> Result<()>) -> Result<Vec<f64>> {
        let (mut warm_ms, mut est, mut count) = (0.0, 0.0, 0);
        while count < 2 || (warm_ms < policy.warmup_s * 1e3 && count < 1000) {
            let (start, end) = self.sample(gpu, launch)?;
            est = start.elapsed_ms(&end)? as f64;
            warm_ms += est;
            count += 1;
        }
        let n = policy.samples_for(est);
        const BATCH: usize = 32;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let batch = BATCH.min(n - out.len());
            let mut pairs = Vec::with_capacity(batch);
            for _ in 0..batch {
                pairs.push(self.sample(gpu, launch)?);
            }
            for (start, end) in pairs {
                out.push(start.elapsed_ms(&end)? as f64);
            }
        }
        Ok(out)
    }
}
