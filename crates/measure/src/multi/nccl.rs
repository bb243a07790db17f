//! NCCL collectives in fp32 and bf16 at every size, each checked against the host's answer, with
//! nccl-tests' algorithm and bus bandwidths.

use crate::gpu::cuda::CudaSlice;
use crate::gpu::cuda::nccl::{group_end, group_start, Comm, NcclType, ReduceOp};
use half::bf16;

use super::{nccl_error, reps_for, summary, SAMPLES};
use crate::error::{LabError, Result};
use crate::gpu::device::Gpu;
use crate::timing::on_all;
use crate::schema::multi::{Collective, CollectiveRun, MultiResults};

/// nccl-tests' bus bandwidth: the algorithm bandwidth (bytes / time) times the share of the data
/// each rank must send over its links, so that it compares with the hardware's link rate.
pub fn bus_factor(collective: Collective, ranks: usize) -> f64 {
    let n = ranks as f64;
    match collective {
        Collective::AllReduce => 2.0 * (n - 1.0) / n,
        Collective::AllGather | Collective::ReduceScatter => (n - 1.0) / n,
        Collective::Broadcast => 1.0,
    }
}

/// Rank r's element i: a small integer, exact in fp32 and bf16, and so are sums of a few ranks.
pub fn value(rank: usize, i: usize) -> f32 {
    ((rank + 1) * (1 + i % 7)) as f32
}

pub trait Elem: NcclType + crate::gpu::cuda::DeviceRepr + crate::gpu::cuda::ValidAsZeroBits + Copy + Unpin + 'static {
    const NAME: &'static str;
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
}
impl Elem for f32 {
    const NAME: &'static str = "fp32";
    fn from_f32(x: f32) -> Self {
        x
    }
    fn to_f32(self) -> f32 {
        self
    }
}
impl Elem for bf16 {
    const NAME: &'static str = "bf16";
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

/// What rank r must hold after the collective at element i, with `part` elements per rank's part.
pub fn expected(c: Collective, ranks: usize, rank: usize, i: usize, part: usize) -> f32 {
    match c {
        Collective::AllReduce => (0..ranks).map(|r| value(r, i)).sum(),
        // Part q of the output is rank q's input.
        Collective::AllGather => value(i / part, i % part),
        // Rank r gets the sum of part r of every rank's input.
        Collective::ReduceScatter => (0..ranks).map(|r| value(r, rank * part + i)).sum(),
        Collective::Broadcast => value(0, i),
    }
}

pub fn collective_runs<T: Elem>(gpus: &[Gpu], comms: &[Comm], sizes: &[u64], out: &mut MultiResults) -> Result<()> {
    let ranks = gpus.len();
    let size_of = std::mem::size_of::<T>() as u64;
    for c in Collective::ALL {
        for &bytes in sizes {
            // nccl-tests' size is the full result; all-gather and reduce-scatter move parts of it.
            let total = (bytes / size_of).max(ranks as u64) as usize / ranks * ranks;
            let part = total / ranks;
            let (send_len, recv_len) = match c {
                Collective::AllReduce | Collective::Broadcast => (total, total),
                Collective::AllGather => (part, total),
                Collective::ReduceScatter => (total, part),
            };
            let mut sends = Vec::new();
            let mut recvs = Vec::new();
            for (r, g) in gpus.iter().enumerate() {
                let host: Vec<T> = (0..send_len).map(|i| T::from_f32(value(r, i))).collect();
                sends.push(g.stream.clone_htod(&host)?);
                recvs.push(g.stream.alloc_zeros::<T>(recv_len)?);
            }
            let issue = |recvs: &mut Vec<CudaSlice<T>>| -> Result<()> {
                group_start().map_err(nccl_error)?;
                for (r, comm) in comms.iter().enumerate() {
                    let (s, o) = (&sends[r], &mut recvs[r]);
                    match c {
                        Collective::AllReduce => comm.all_reduce(s, o, &ReduceOp::Sum).map(drop),
                        Collective::AllGather => comm.all_gather(s, o).map(drop),
                        Collective::ReduceScatter => comm.reduce_scatter(s, o, &ReduceOp::Sum).map(drop),
                        Collective::Broadcast => comm.broadcast(Some(s), o, 0).map(drop),
                    }
                    .map_err(nccl_error)?;
                }
                group_end().map(drop).map_err(nccl_error)
            };
            let time = |recvs: &mut Vec<CudaSlice<T>>, reps: usize| -> Result<f64> {
                Ok(on_all(gpus, &mut || (0..reps).try_for_each(|_| issue(recvs)))? / reps as f64)
            };
            for _ in 0..3 {
                issue(&mut recvs)?;
            }
            let reps = reps_for(time(&mut recvs, 1)?, 5.0).min(200);
            let ms: Vec<f64> = (0..SAMPLES).map(|_| time(&mut recvs, reps)).collect::<Result<_>>()?;
            for (r, g) in gpus.iter().enumerate() {
                let got = g.stream.clone_dtoh(&recvs[r])?;
                if let Some(i) = (0..recv_len).find(|&i| got[i].to_f32() != expected(c, ranks, r, i, part)) {
                    return Err(LabError::Usage(format!(
                        "{} {} of {} B: rank {r} element {i} is {} (want {})",
                        c.label(),
                        T::NAME,
                        total as u64 * size_of,
                        got[i].to_f32(),
                        expected(c, ranks, r, i, part)
                    )));
                }
            }
            let t = summary(&ms)?;
            let size = total as u64 * size_of;
            let algbw = size as f64 / t.median_ms / 1e6;
            out.collectives.push(CollectiveRun {
                collective: c,
                dtype: T::NAME.into(),
                bytes: size,
                algbw_gbs: algbw,
                busbw_gbs: algbw * bus_factor(c, ranks),
                time: t,
            });
        }
    }
    Ok(())
}
