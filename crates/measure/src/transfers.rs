//! Host <-> device transfers: pageable against pinned host memory, both directions, 4 KB to 1 GB,
//! and a pinned transfer overlapped with a kernel on a second stream (the copy engine working
//! while the SMs do). GPU selection guides' `pin_memory=True` advice, measured.

use super::families::{self, inputs::random_f32, Shape};
use super::timing::{Samples, Timer};
use crate::error::{LabError, Result};
use crate::gpu::device::Gpu;
use crate::gpu::driver;
use crate::gpu::registry;
use crate::schema::run::{Policy, Regime};
use crate::schema::stats::Summary;
use crate::schema::transfers::{Direction, HostMemory, Launches, Overlap, Pcie, Transfer, Transfers};

/// The default sizes: 4 KB to 1 GB.
pub fn default_sizes() -> Vec<u64> {
    vec![4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30]
}

/// NVML's view of the GPU's PCIe link; None where NVML is missing (it is loaded at run time).
pub fn pcie(ordinal: usize) -> Option<Pcie> {
    let nvml = nvml_wrapper::Nvml::init().ok()?;
    let d = nvml.device_by_index(ordinal as u32).ok()?;
    Some(Pcie {
        gen_current: d.current_pcie_link_gen().ok()?,
        gen_max: d.max_pcie_link_gen().ok()?,
        width_current: d.current_pcie_link_width().ok()?,
        width_max: d.max_pcie_link_width().ok()?,
    })
}

fn policy() -> Policy {
    Policy { min_samples: 10, max_samples: 100, target: 0.01, cap_s: 4.0, warmup_s: 0.02, regime: Regime::Sustained }
}

fn mismatch(what: &str) -> LabError {
    LabError::Usage(format!("transfer check failed: {what} did not arrive intact"))
}

/// Times every size in both directions from pageable and from pinned host memory, each checked
/// byte for byte afterwards, then the overlap of a pinned transfer with a kernel.
pub fn measure(gpu: &mut Gpu, sizes: &[u64], git_commit: &str) -> Result<Transfers> {
    let mut timer = Timer::new(gpu)?;
    let policy = policy();
    let mut out = Vec::new();
    for &bytes in sizes {
        let n = bytes as usize;
        let data: Vec<u8> = random_f32(n.div_ceil(4), bytes).iter().flat_map(|x| x.to_le_bytes()).take(n).collect();
        let mut dev = gpu.stream.clone_htod(&data)?;
        // SAFETY: filled before it is read (plain pinned memory: flags 0, not write-combined,
        // so the host reads it back at full speed).
        let mut pinned = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(n, 0) }?;
        pinned.as_mut_slice()?.copy_from_slice(&data);
        let mut pageable = vec![0u8; n];
        let stream = gpu.stream.clone();
        let mut record = |direction: Direction, host: HostMemory, samples: Samples| {
            if let Some(time) = Summary::of(&samples.ms) {
                let gbs = bytes as f64 / (time.median_ms / 1e3) / 1e9;
                out.push(Transfer { direction, host, bytes, time, gbs });
            }
        };
        let s = timer.samples(gpu, &policy, &mut || Ok(stream.memcpy_htod(&data, &mut dev)?))?;
        record(Direction::H2D, HostMemory::Pageable, s);
        if stream.clone_dtoh(&dev)? != data {
            return Err(mismatch("pageable H2D"));
        }
        let s = timer.samples(gpu, &policy, &mut || Ok(stream.memcpy_htod(&pinned, &mut dev)?))?;
        record(Direction::H2D, HostMemory::Pinned, s);
        if stream.clone_dtoh(&dev)? != data {
            return Err(mismatch("pinned H2D"));
        }
        let s = timer.samples(gpu, &policy, &mut || Ok(stream.memcpy_dtoh(&dev, &mut pageable)?))?;
        record(Direction::D2H, HostMemory::Pageable, s);
        stream.synchronize()?;
        if pageable != data {
            return Err(mismatch("pageable D2H"));
        }
        pinned.as_mut_slice()?.fill(0);
        let s = timer.samples(gpu, &policy, &mut || Ok(stream.memcpy_dtoh(&dev, &mut pinned)?))?;
        record(Direction::D2H, HostMemory::Pinned, s);
        stream.synchronize()?;
        if pinned.as_slice()? != data.as_slice() {
            return Err(mismatch("pinned D2H"));
        }
    }
    let overlap = overlap(gpu)?;
    let launches = launches(gpu)?;
    Ok(Transfers {
        date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        git_commit: git_commit.to_string(),
        pcie: pcie(gpu.info.ordinal),
        transfers: out,
        overlap: Some(overlap),
        launches: Some(launches),
    })
}

/// The memory family's vector copy, which the overlap runs beside a transfer.
pub const OVERLAP_KERNEL: &str = "memory_03_stream_vec4_copy";

/// A 256 MiB pinned host-to-device copy on a second stream while the memory family's vector copy
/// runs on the first, launched enough times to last about as long as the transfer.
fn overlap(gpu: &mut Gpu) -> Result<Overlap> {
    const BYTES: usize = 256 << 20;
    const ROUNDS: usize = 5;
    let spec = registry::by_name(OVERLAP_KERNEL)?;
    let fam = families::of(spec)?;
    let kernel = gpu.kernel(spec)?;
    let mut case = fam.prepare(gpu, &Shape(vec![256 << 20]), 17)?;
    let data = random_f32(BYTES / 4, 23);
    // SAFETY: filled before it is read.
    let mut pinned = unsafe { gpu.ctx.alloc_pinned_with_flags::<f32>(BYTES / 4, 0) }?;
    pinned.as_mut_slice()?.copy_from_slice(&data);
    // SAFETY: the transfer's target, checked after the last round.
    let mut dev = unsafe { gpu.stream.alloc::<f32>(BYTES / 4) }?;
    let side = gpu.ctx.new_stream()?;
    let gpu = &*gpu;
    let mut time = |launches: u32, copy: bool| -> Result<f64> {
        let start = driver::record(&gpu.stream)?;
        side.wait(&start)?;
        if copy {
            side.memcpy_htod(&pinned, &mut dev)?;
        }
        for _ in 0..launches {
            case.launch(gpu, &kernel)?;
        }
        let (main_end, side_end) = (driver::record(&gpu.stream)?, driver::record(&side)?);
        Ok((start.elapsed_ms(&main_end)? as f64).max(start.elapsed_ms(&side_end)? as f64))
    };
    let median = |f: &mut dyn FnMut() -> Result<f64>| -> Result<f64> {
        let v: Vec<f64> = (0..ROUNDS).map(|_| f()).collect::<Result<_>>()?;
        Ok(Summary::of(&v).map_or(f64::NAN, |s| s.median_ms))
    };
    time(1, true)?;
    let transfer_ms = median(&mut || time(0, true))?;
    let one = median(&mut || time(1, false))?;
    let launches = (transfer_ms / one).ceil().max(1.0) as u32;
    let kernel_ms = median(&mut || time(launches, false))?;
    let both_ms = median(&mut || time(launches, true))?;
    side.synchronize()?;
    if gpu.stream.clone_dtoh(&dev)? != data {
        return Err(mismatch("the overlapped H2D"));
    }
    let hidden = ((kernel_ms + transfer_ms - both_ms) / kernel_ms.min(transfer_ms)).clamp(0.0, 1.0);
    Ok(Overlap {
        transfer_bytes: BYTES as u64,
        kernel: spec.name.clone(),
        kernel_launches: launches,
        kernel_ms,
        transfer_ms,
        both_ms,
        hidden,
    })
}

/// The memory family's blocked copy, whose grid is one block a 16 KiB: launched on 16 KiB, the
/// small kernel of `launches`; on 256 MiB, the long kernel the launches queue behind.
pub const LAUNCH_KERNEL: &str = "memory_04_stream_blocked_copy";

/// 100 launches of a one-block copy, timed three ways (5 rounds each after one to warm up, the
/// median): the host's time in the launch calls (the lab's launch path and the driver's); the
/// GPU's, queued behind copies of 256 MiB that last at least four times as long as the host takes
/// to launch them all, so the GPU never waits for the host (as in an eager framework's step,
/// whose host runs ahead); and the same launches as one CUDA graph, queued behind the copies
/// too. The copy is checked after the queued launches and after the graph's. A round whose
/// copies had ended before its launches were all issued is run again behind twice the copies.
fn launches(gpu: &mut Gpu) -> Result<Launches> {
    const SMALL: u64 = 16 << 10;
    const LAUNCHES: u32 = 100;
    const ROUNDS: usize = 5;
    const MOST_HOLDS: usize = 1000;
    let spec = registry::by_name(LAUNCH_KERNEL)?;
    let fam = families::of(spec)?;
    let kernel = gpu.kernel(spec)?;
    let mut small = fam.prepare(gpu, &Shape(vec![SMALL]), 29)?;
    let mut long = fam.prepare(gpu, &Shape(vec![256 << 20]), 31)?;
    let gpu = &*gpu;
    let precision = fam.info().precision;
    let check = |small: &mut Box<dyn families::Case>, how: &str| -> Result<()> {
        gpu.sync()?;
        let c = small.check(gpu, precision)?;
        c.passed().then_some(()).ok_or_else(|| mismatch(&format!("the copy launched {how}")))
    };
    let median = |mut v: Vec<f64>| -> Result<f64> {
        let timed = v.split_off(1);
        Summary::of(&timed).map(|s| s.median_ms).ok_or_else(|| LabError::Unavailable("no launch round was timed".into()))
    };
    // The long copy's time, and the host's time in LAUNCHES launch calls.
    let (mut long_ms, mut host_ms) = (Vec::new(), Vec::new());
    for _ in 0..=ROUNDS {
        let start = driver::record(&gpu.stream)?;
        long.launch(gpu, &kernel)?;
        let end = driver::record(&gpu.stream)?;
        let t = std::time::Instant::now();
        for _ in 0..LAUNCHES {
            small.launch(gpu, &kernel)?;
        }
        host_ms.push(t.elapsed().as_secs_f64() * 1e3);
        long_ms.push(start.elapsed_ms(&end)? as f64);
    }
    let (long_ms, host_ms) = (median(long_ms)?, median(host_ms)?);
    let mut holds = (4.0 * host_ms / long_ms).ceil().clamp(1.0, MOST_HOLDS as f64) as usize;
    // One round: the copies, then `issue` between two events; the GPU's time, ms.
    let mut round = |small: &mut Box<dyn families::Case>, issue: &mut dyn FnMut(&mut Box<dyn families::Case>) -> Result<()>| -> Result<f64> {
        loop {
            for _ in 0..holds {
                long.launch(gpu, &kernel)?;
            }
            let start = driver::record(&gpu.stream)?;
            issue(small)?;
            let end = driver::record(&gpu.stream)?;
            let caught_up = start.try_is_complete()?;
            let ms = start.elapsed_ms(&end)? as f64;
            if !caught_up {
                return Ok(ms);
            }
            if holds >= MOST_HOLDS {
                return Err(LabError::Unavailable(format!("the GPU ran {MOST_HOLDS} copies before the host had launched {LAUNCHES} kernels")));
            }
            holds = (2 * holds).min(MOST_HOLDS);
        }
    };
    small.poison(gpu)?;
    let mut each = |s: &mut Box<dyn families::Case>| (0..LAUNCHES).try_for_each(|_| s.launch(gpu, &kernel));
    let queued = (0..=ROUNDS).map(|_| round(&mut small, &mut each)).collect::<Result<Vec<f64>>>()?;
    check(&mut small, "queued")?;
    small.poison(gpu)?;
    gpu.ctx.bind_to_thread()?;
    driver::begin_capture(&gpu.stream)?;
    let issued = each(&mut small);
    let graph = driver::end_capture(&gpu.stream);
    issued?;
    let graph = graph?.ok_or_else(|| LabError::Unavailable("the graph capture recorded nothing".into()))?;
    graph.upload()?;
    let mut whole = |_: &mut Box<dyn families::Case>| Ok(graph.launch()?);
    let graphed = (0..=ROUNDS).map(|_| round(&mut small, &mut whole)).collect::<Result<Vec<f64>>>()?;
    check(&mut small, "as a graph")?;
    let us = |ms: f64| ms * 1e3 / LAUNCHES as f64;
    Ok(Launches {
        kernel: spec.name.clone(),
        bytes: SMALL,
        launches: LAUNCHES,
        host_us: us(host_ms),
        queued_us: us(median(queued)?),
        graph_us: us(median(graphed)?),
    })
}
