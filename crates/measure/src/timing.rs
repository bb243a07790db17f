//! GPU time from CUDA events: warm-up, then samples in rounds, each after an L2 flush (so every
//! sample reads its inputs from DRAM as a cold call would, and finds no dirty lines to write
//! back), until the median's 95% interval is as narrow as the policy asks or its caps are reached. A subject with a baseline is timed in
//! pairs with it, in alternating order, so both see the same thermal and power state and the
//! ratio comes from the pairs; each timed launch follows an untimed one of its own. In the burst
//! regime each sample follows a rest and a warm-up launch, and samples that did not run at full
//! clock are dropped and counted. In the hot regime a sample is a CUDA graph of back-to-back
//! launches without flushes, its time divided by their number.

use std::time::Duration;

use crate::gpu::cuda::{CudaEvent, CudaGraph};

use super::telemetry;
use crate::error::{LabError, Result};
use crate::gpu::device::Gpu;
use crate::gpu::driver;
use crate::gpu::flush::Flush;
use crate::schema::entry::L2Flush;
use crate::schema::run::{Policy, Regime};

pub mod pairing;
use pairing::{Pairing, Sampling};
pub use pairing::{Pairs, Samples};

/// Samples queued before their events are read, in the sustained regime.
const ROUND: usize = 8;
/// The burst regime's rest before each sample: long enough for the board's power budget to
/// recover after a sample at the cap.
const REST: Duration = Duration::from_millis(50);
/// The burst regime keeps samples at or above this share of the maximum SM clock.
const CLOCK_FLOOR: f64 = 0.9;

/// How L2 is emptied before each sample in `regime`.
pub fn flush(regime: Regime) -> L2Flush {
    match regime {
        Regime::Hot => L2Flush::None,
        Regime::Sustained | Regime::Burst => L2Flush::Loads,
    }
}

/// A launch to time.
pub type Launch<'a> = dyn FnMut() -> Result<()> + 'a;

/// Times launches on a GPU. Owns the flush of L2 between samples.
pub struct Timer {
    flush: Flush,
    /// NVML's index of the GPU and its maximum SM clock, MHz, for the burst regime's check.
    nvml_index: u32,
    max_mhz: f64,
}

impl Timer {
    pub fn new(gpu: &Gpu) -> Result<Timer> {
        Ok(Timer { flush: Flush::new(gpu)?, nvml_index: gpu.info.ordinal as u32, max_mhz: gpu.info.sm_clock_khz as f64 / 1e3 })
    }

    fn event(gpu: &Gpu) -> Result<CudaEvent> {
        driver::timing_event(&gpu.ctx)
    }

    /// One flushed launch between two recorded events (read later).
    fn queue(&mut self, gpu: &Gpu, launch: &mut Launch) -> Result<(CudaEvent, CudaEvent)> {
        let (start, end) = (Self::event(gpu)?, Self::event(gpu)?);
        self.flush.run(gpu)?;
        start.record(&gpu.stream)?;
        launch()?;
        end.record(&gpu.stream)?;
        Ok((start, end))
    }

    fn read(events: &(CudaEvent, CudaEvent)) -> Result<f64> {
        Ok(events.0.elapsed_ms(&events.1)? as f64)
    }

    /// The hot regime's graph for a launch that takes `one_ms`: enough back-to-back launches for
    /// `pairing::HOT_SAMPLE_MS`, captured from the stream, uploaded and run once; with their number.
    fn capture(gpu: &Gpu, launch: &mut Launch, one_ms: f64) -> Result<(CudaGraph, usize)> {
        let count = pairing::hot_launches(one_ms);
        gpu.ctx.bind_to_thread()?;
        driver::begin_capture(&gpu.stream)?;
        let issued = (0..count).try_for_each(|_| launch());
        let graph = driver::end_capture(&gpu.stream);
        issued?;
        let graph = graph?.ok_or_else(|| LabError::Unavailable("the graph capture recorded nothing".into()))?;
        graph.upload()?;
        graph.launch()?;
        Ok((graph, count))
    }

    /// One hot sample: the graph between two events, no flush; the time of one launch, ms.
    fn hot(gpu: &Gpu, (graph, count): &(CudaGraph, usize)) -> Result<f64> {
        let (start, end) = (Self::event(gpu)?, Self::event(gpu)?);
        start.record(&gpu.stream)?;
        graph.launch()?;
        end.record(&gpu.stream)?;
        Ok(Self::read(&(start, end))? / *count as f64)
    }

    /// Warm-up: at least two launches and `warmup_s` of GPU time; one launch's time, ms.
    fn warm(&mut self, gpu: &Gpu, policy: &Policy, launch: &mut Launch) -> Result<f64> {
        warm_up(policy, || {
            let t = Self::read(&self.queue(gpu, launch)?)?;
            Ok((t, t))
        })
    }

    /// Warm-up of a pair: the baseline and the subject alternating for `warmup_s`, so the pairs
    /// start where the board's power and heat have settled for both (a kernel timed after a
    /// cooler one starts below the cap and drifts down to it); one launch of each, ms.
    fn warm_pair(&mut self, gpu: &Gpu, policy: &Policy, launch: &mut dyn FnMut(bool) -> Result<()>) -> Result<(f64, f64)> {
        warm_up(policy, || {
            let b = Self::read(&self.queue(gpu, &mut || launch(false))?)?;
            let s = Self::read(&self.queue(gpu, &mut || launch(true))?)?;
            Ok((b + s, (b, s)))
        })
    }

    /// The burst regime's lead-in to a sample: the rest, then one untimed launch to bring the
    /// clocks back up (an idle GPU drops them).
    fn settle(&mut self, gpu: &Gpu, launch: &mut Launch) -> Result<()> {
        gpu.sync()?;
        std::thread::sleep(REST);
        launch()?;
        Ok(())
    }

    /// Whether the sample just read ran at full clock, unthrottled: always in the sustained
    /// regime; in the burst regime by NVML right after it (without NVML, kept).
    fn full_clock(&self, policy: &Policy) -> bool {
        policy.regime == Regime::Sustained
            || telemetry::clock_now(self.nvml_index)
                .is_none_or(|(mhz, capped)| !capped && (self.max_mhz <= 0.0 || mhz as f64 >= CLOCK_FLOOR * self.max_mhz))
    }

    /// Samples of one subject until its median's interval is within the policy's target (or the
    /// policy's caps), in the policy's regime.
    pub fn samples(&mut self, gpu: &Gpu, policy: &Policy, launch: &mut Launch) -> Result<Samples> {
        let one = self.warm(gpu, policy, launch)?;
        let hot = if policy.regime == Regime::Hot { Some(Self::capture(gpu, launch, one)?) } else { None };
        let mut sampling = Sampling::new(hot.as_ref().map_or(1, |h| h.1));
        loop {
            let round: Vec<f64> = match policy.regime {
                Regime::Hot => {
                    let h = hot.as_ref().expect("captured above");
                    (0..ROUND).map(|_| Self::hot(gpu, h)).collect::<Result<_>>()?
                }
                Regime::Sustained => {
                    let queued = (0..ROUND).map(|_| self.queue(gpu, launch)).collect::<Result<Vec<_>>>()?;
                    queued.iter().map(Self::read).collect::<Result<_>>()?
                }
                Regime::Burst => {
                    self.settle(gpu, launch)?;
                    let t = Self::read(&self.queue(gpu, launch)?)?;
                    if !self.full_clock(policy) {
                        if sampling.drop_one(policy, t) {
                            return Ok(sampling.out);
                        }
                        continue;
                    }
                    vec![t]
                }
            };
            if sampling.keep(policy, &round) {
                return Ok(sampling.out);
            }
        }
    }

    /// A subject timed in pairs with its baseline (`launch(false)` launches the baseline,
    /// `launch(true)` the subject), the order alternating (AB, BA, ...), each launch after a flush
    /// (in the burst regime after a rest and a warm-up launch of its own), until the median of
    /// the pairs' ratios is within the policy's target. `work_ratio` is the subject's declared
    /// work over the baseline's, so each ratio is one of rates. The subject runs last, so its
    /// output is what the timed launches left.
    pub fn pairs(&mut self, gpu: &Gpu, policy: &Policy, launch: &mut dyn FnMut(bool) -> Result<()>, work_ratio: f64) -> Result<Pairs> {
        let (base_ms, subject_ms) = self.warm_pair(gpu, policy, launch)?;
        let hot = match policy.regime {
            Regime::Hot => {
                Some([Self::capture(gpu, &mut || launch(false), base_ms)?, Self::capture(gpu, &mut || launch(true), subject_ms)?])
            }
            _ => None,
        };
        let mut pairing = Pairing::new(hot.as_ref().map_or(1, |h| h[1].1), work_ratio);
        let mut one = |timer: &mut Timer, subject: bool| -> Result<Option<f64>> {
            if let Some(h) = &hot {
                return Self::hot(gpu, &h[subject as usize]).map(Some);
            }
            let mut go = || launch(subject);
            // Each timed launch follows an untimed one of its own kernel (after a rest, in the
            // burst regime), as its samples alone would: on the H200 cuBLAS SGEMM ran up to 4%
            // slower straight after another kernel than after itself, which moved the ratio
            // from one process to the next while the variant's own time held to 0.1%.
            match policy.regime {
                Regime::Burst => timer.settle(gpu, &mut go)?,
                Regime::Sustained | Regime::Hot => go()?,
            }
            let t = Self::read(&timer.queue(gpu, &mut go)?)?;
            Ok(timer.full_clock(policy).then_some(t))
        };
        loop {
            let subject_first = pairing.subject_first();
            let first = one(self, subject_first)?;
            let second = one(self, !subject_first)?;
            if pairing.record(policy, first, second) {
                break;
            }
        }
        // Pairs alternate their order: the subject launches once more, so the output the re-check
        // reads is its own.
        launch(true)?;
        Ok(pairing.out)
    }
}

/// Runs `round` (its GPU time in ms, and what it measured) at least twice and until the rounds
/// add up to the policy's warm-up; the last round's measure.
fn warm_up<T>(policy: &Policy, mut round: impl FnMut() -> Result<(f64, T)>) -> Result<T> {
    let (mut spent, mut count) = (0.0, 0);
    loop {
        let (ms, last) = round()?;
        (spent, count) = (spent + ms, count + 1);
        if pairing::warmed_up(policy, count, spent) {
            return Ok(last);
        }
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
