//! GPU time from CUDA events: warm-up, then many samples, each after an L2 flush, so every
//! sample reads its inputs from DRAM as a cold call would.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr};

use crate::error::Result;
use crate::gpu::device::Gpu;
use crate::gpu::driver;
use crate::schema::run::Policy;

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
        unsafe { driver::memset(ptr, self.value, self.flush.len(), gpu.cu_stream()?) }
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

/// Times `work` issued on the streams of several GPUs: an event before and after on each; the
/// slowest GPU's time, ms. For what spans GPUs (collectives, a data-parallel step, peer copies).
pub fn on_all(gpus: &[Gpu], work: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    let starts = gpus
        .iter()
        .map(|g| {
            let e = Timer::event(g)?;
            e.record(&g.stream)?;
            Ok(e)
        })
        .collect::<Result<Vec<_>>>()?;
    work()?;
    let mut worst: f64 = 0.0;
    for (g, start) in gpus.iter().zip(&starts) {
        let end = Timer::event(g)?;
        end.record(&g.stream)?;
        end.synchronize()?;
        worst = worst.max(start.elapsed_ms(&end)? as f64);
    }
    Ok(worst)
}
