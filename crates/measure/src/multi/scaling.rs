//! Data-parallel scaling: a GEMM split along the batch over 1..N GPUs, then an all-reduce of its
//! gradient, against one GPU doing the whole batch.

use crate::gpu::cuda::nccl::{group_end, group_start, Comm, ReduceOp};

use super::nccl::value;
use super::{nccl_error, summary};
use crate::error::{LabError, Result};
use crate::gpu::device::Gpu;
use crate::gpu::registry;
use crate::families::{self, Shape};
use crate::timing::on_all;
use crate::schema::stats::Summary;

/// The lab's GEMM in the step, beside cuBLAS.
pub const LAB_GEMM: &str = "sgemm_08_double_buffered";

/// One data-parallel step on `g` GPUs: each multiplies its m / g rows, then the gradient-sized
/// buffer is all-reduced (not on one GPU, which has nothing to reduce). Median step time, ms.
pub fn scaling_step(gpus: &mut [Gpu], comms: &[Comm], lab_gemm: bool, mnk: (u64, u64, u64), grad_floats: usize) -> Result<Summary> {
    let spec = registry::by_name(LAB_GEMM)?;
    let fam = families::of(spec)?;
    let g_n = gpus.len();
    let rows = mnk.0 / g_n as u64;
    let shape = Shape(vec![rows, mnk.1, mnk.2]);
    let mut cases = Vec::new();
    let mut kernels = Vec::new();
    let mut grads = Vec::new();
    let mut sums = Vec::new();
    for (r, g) in gpus.iter_mut().enumerate() {
        cases.push(fam.prepare(g, &shape, 1000 + r as u64)?);
        kernels.push(if lab_gemm { Some(g.kernel(spec)?) } else { None });
        let host: Vec<f32> = (0..grad_floats).map(|i| value(r, i)).collect();
        grads.push(g.stream.clone_htod(&host)?);
        sums.push(g.stream.alloc_zeros::<f32>(grad_floats)?);
    }
    let mut step = |cases: &mut Vec<Box<dyn families::Case>>| -> Result<f64> {
        on_all(gpus, &mut || {
            for (r, g) in gpus.iter().enumerate() {
                match &kernels[r] {
                    Some(k) => cases[r].launch(g, k)?,
                    None => cases[r].launch_baseline(g)?,
                }
            }
            if g_n > 1 {
                group_start().map_err(nccl_error)?;
                for (r, comm) in comms.iter().enumerate() {
                    comm.all_reduce(&grads[r], &mut sums[r], &ReduceOp::Sum).map_err(nccl_error)?;
                }
                group_end().map_err(nccl_error)?;
            }
            Ok(())
        })
    };
    for _ in 0..3 {
        step(&mut cases)?;
    }
    let ms: Vec<f64> = (0..20).map(|_| step(&mut cases)).collect::<Result<_>>()?;
    for (r, g) in gpus.iter().enumerate() {
        let c = cases[r].check(g, fam.info().precision)?;
        if !c.passed() {
            return Err(LabError::Usage(format!("scaling step: GPU {r}'s GEMM failed its check: {}", c.describe())));
        }
        if g_n > 1 {
            let got = g.stream.clone_dtoh(&sums[r])?;
            if let Some(i) = (0..grad_floats).find(|&i| got[i] != (0..g_n).map(|q| value(q, i)).sum::<f32>()) {
                return Err(LabError::Usage(format!("scaling step: GPU {r}'s all-reduced gradient is wrong at {i}")));
            }
        }
    }
    summary(&ms)
}
