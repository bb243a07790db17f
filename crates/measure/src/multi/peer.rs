//! Peer copies one way and both ways at once, their latency, and a kernel on one GPU reading the
//! other's memory against the copy engine. Every copy is checked byte for byte.

use std::time::Instant;

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut};

use super::{reps_for, summary, SAMPLES};
use crate::error::{LabError, Result};
use crate::facts::launch::Params;
use crate::gpu::device::Gpu;
use crate::gpu::driver;
use crate::gpu::ffi::lab_stream_args;
use crate::gpu::registry;
use crate::families::inputs::{poison, random_f32};
use crate::timing::on_all;
use crate::transfers::OVERLAP_KERNEL;
use crate::schema::multi::{KernelRead, MultiResults, PeerCopy};

/// `bytes` from `src` to `dst` on `dst`'s stream, `reps` times between two events; ms per copy.
fn time_copy(gpus: &[Gpu], bufs: &[CudaSlice<u8>], src: usize, dst: usize, bytes: usize, reps: usize) -> Result<f64> {
    let g = &gpus[dst];
    let (s, _s) = bufs[src].device_ptr(&gpus[src].stream);
    let (d, _d) = bufs[dst].device_ptr(&g.stream);
    let ms = on_all(std::slice::from_ref(g), &mut || {
        for _ in 0..reps {
            // SAFETY: both buffers hold at least `bytes` bytes on their own devices.
            unsafe { driver::copy_peer(&g.ctx, d, &gpus[src].ctx, s, bytes, &g.stream) }?;
        }
        Ok(())
    })?;
    Ok(ms / reps as f64)
}

/// Both directions at once, by host wall clock around both streams; ms per pair of copies.
fn time_bidirectional(
    gpus: &[Gpu],
    bufs: &[CudaSlice<u8>],
    scratch: &[CudaSlice<u8>],
    a: usize,
    b: usize,
    bytes: usize,
    reps: usize,
) -> Result<f64> {
    let t0 = Instant::now();
    for _ in 0..reps {
        for (src, dst) in [(a, b), (b, a)] {
            let g = &gpus[dst];
            let (s, _s) = bufs[src].device_ptr(&gpus[src].stream);
            let (d, _d) = scratch[dst].device_ptr(&g.stream);
            // SAFETY: as in time_copy; the reverse copy lands in a separate scratch buffer.
            unsafe { driver::copy_peer(&g.ctx, d, &gpus[src].ctx, s, bytes, &g.stream) }?;
        }
    }
    for g in [&gpus[a], &gpus[b]] {
        g.stream.synchronize()?;
    }
    Ok(t0.elapsed().as_secs_f64() * 1e3 / reps as f64)
}

/// The first `bytes` of `dst` equal those of `src` (both read back to the host).
fn same_bytes(gpus: &[Gpu], bufs: &[CudaSlice<u8>], src: usize, dst: usize, bytes: usize, what: &str) -> Result<()> {
    let a = gpus[src].stream.clone_dtoh(&bufs[src].slice(..bytes))?;
    let b = gpus[dst].stream.clone_dtoh(&bufs[dst].slice(..bytes))?;
    if a != b {
        let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0);
        return Err(LabError::Usage(format!("{what}: GPU {dst} holds other bytes than GPU {src} from byte {i}")));
    }
    Ok(())
}

/// Peer copies for every ordered pair and size, peer access as it is now (`peer`).
pub fn peer_copies(gpus: &[Gpu], sizes: &[u64], peer: bool, out: &mut MultiResults) -> Result<()> {
    let max = *sizes.iter().max().unwrap_or(&0) as usize;
    let mut bufs = Vec::new();
    let mut scratch = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        let host: Vec<u8> = (0..max).map(|k| (k.wrapping_mul(31) ^ (i + 1).wrapping_mul(97)) as u8).collect();
        bufs.push(g.stream.clone_htod(&host)?);
        // SAFETY: only ever written by copies, then compared after the writes.
        scratch.push(unsafe { g.stream.alloc::<u8>(max) }?);
    }
    let n = gpus.len();
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            // Latency: 4-byte copies back to back on one stream, each waiting for the one before.
            let lat: Vec<f64> = (0..SAMPLES).map(|_| time_copy(gpus, &bufs, src, dst, 4, 100)).collect::<Result<_>>()?;
            out.latency_us.push((src, dst, peer, summary(&lat)?.median_ms * 1e3));
            for &bytes in sizes {
                let bytes = bytes as usize;
                // Poisoned first, so the check below sees what these copies delivered.
                poison(&gpus[dst], &mut bufs[dst])?;
                let reps = reps_for(time_copy(gpus, &bufs, src, dst, bytes, 1)?, 5.0);
                let ms: Vec<f64> = (0..SAMPLES).map(|_| time_copy(gpus, &bufs, src, dst, bytes, reps)).collect::<Result<_>>()?;
                let t = summary(&ms)?;
                out.copies.push(PeerCopy {
                    src,
                    dst,
                    peer_access: peer,
                    bidirectional: false,
                    bytes: bytes as u64,
                    gbs: bytes as f64 / t.median_ms / 1e6,
                    time: t,
                });
                same_bytes(gpus, &bufs, src, dst, bytes, "peer copy")?;
            }
        }
    }
    for a in 0..n {
        for b in (a + 1)..n {
            for &bytes in sizes.iter().filter(|&&b| b >= 1 << 20) {
                let bytes = bytes as usize;
                poison(&gpus[b], &mut scratch[b])?;
                let reps = reps_for(time_bidirectional(gpus, &bufs, &scratch, a, b, bytes, 1)?, 10.0);
                let ms: Vec<f64> =
                    (0..SAMPLES).map(|_| time_bidirectional(gpus, &bufs, &scratch, a, b, bytes, reps)).collect::<Result<_>>()?;
                let t = summary(&ms)?;
                out.copies.push(PeerCopy {
                    src: a,
                    dst: b,
                    peer_access: peer,
                    bidirectional: true,
                    bytes: 2 * bytes as u64,
                    gbs: 2.0 * bytes as f64 / t.median_ms / 1e6,
                    time: t,
                });
                let got_b = gpus[b].stream.clone_dtoh(&scratch[b].slice(..bytes))?;
                let want_b = gpus[a].stream.clone_dtoh(&bufs[a].slice(..bytes))?;
                if got_b != want_b {
                    return Err(LabError::Usage(format!("bidirectional copy {a} <-> {b}: GPU {b} received other bytes")));
                }
            }
        }
    }
    Ok(())
}

/// The memory family's vector copy on `dst` reading `src`'s memory (peer access on), launched on
/// the family's grid, against the copy engine moving the same bytes.
pub fn kernel_reads(gpus: &mut [Gpu], bytes: usize, out: &mut MultiResults) -> Result<()> {
    let spec = registry::by_name(OVERLAP_KERNEL)?;
    let n = gpus.len();
    let floats = bytes / 4;
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            let host: Vec<f32> = random_f32(floats, (src * 7 + dst) as u64);
            let remote = gpus[src].stream.clone_htod(&host)?;
            // SAFETY: poisoned below, then written by the kernel before it is read back.
            let mut local = unsafe { gpus[dst].stream.alloc::<f32>(floats) }?;
            poison(&gpus[dst], &mut local)?;
            let kernel = gpus[dst].kernel(spec)?;
            let g = &gpus[dst];
            if !matches!(kernel.launch.params, Params::Stream { .. }) {
                return Err(LabError::Usage(format!("{} is not a memory kernel", spec.name)));
            }
            let grid = kernel.grid(g, 0, 0, floats as u64)?;
            let (b, _b) = remote.device_ptr(&gpus[src].stream);
            let (a, _a) = local.device_ptr_mut(&g.stream);
            let args = lab_stream_args { a, b, c: b, scalar: 0.0, n: floats as u64 };
            let run = |reps: usize| -> Result<f64> {
                let ms = on_all(std::slice::from_ref(g), &mut || {
                    // SAFETY: memory kernels take lab_stream_args; b is src's buffer of n floats,
                    // readable from dst with peer access on; a is dst's buffer of n floats.
                    (0..reps).try_for_each(|_| unsafe { kernel.launch(g, grid, &args) })
                })?;
                Ok(ms / reps as f64)
            };
            let reps = reps_for(run(1)?, 20.0);
            let ms: Vec<f64> = (0..SAMPLES).map(|_| run(reps)).collect::<Result<_>>()?;
            drop((_a, _b));
            let got = g.stream.clone_dtoh(&local)?;
            if got != host {
                return Err(LabError::Usage(format!("GPU {dst}'s kernel read of GPU {src}'s memory copied other values")));
            }
            let kernel_gbs = bytes as f64 / summary(&ms)?.median_ms / 1e6;
            let copy_engine_gbs = out
                .copies
                .iter()
                .filter(|c| c.src == src && c.dst == dst && c.peer_access && !c.bidirectional && c.bytes as usize == bytes)
                .map(|c| c.gbs)
                .next()
                .unwrap_or(f64::NAN);
            out.kernel_reads.push(KernelRead { src, dst, bytes: bytes as u64, kernel_gbs, copy_engine_gbs });
        }
    }
    Ok(())
}
