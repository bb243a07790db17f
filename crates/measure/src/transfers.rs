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
use crate::schema::transfers::{Direction, HostMemory, Overlap, Pcie, Transfer, Transfers};

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
    Ok(Transfers {
        date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        git_commit: git_commit.to_string(),
        pcie: pcie(gpu.info.ordinal),
        transfers: out,
        overlap: Some(overlap),
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
