//! Several GPUs: how they are linked, peer copies (bandwidth and latency, peer access off and on,
//! and a kernel reading the other GPU's memory), NCCL collectives, and data-parallel scaling of
//! a GEMM step. Written for any number of GPUs; every transfer and collective is checked.
//!
//! NCCL runs in one process and one thread: `ncclCommInitAll` makes a communicator per GPU and
//! each collective is issued for every rank inside one group (nccl-tests' `-g N` mode). That
//! needs no launcher and keeps every rank's events in one place; with a handful of GPUs one
//! thread issues fast enough. NVLink multicast (NVLS) stays off: `NCCL_NVLS_ENABLE=0` unless the
//! environment says otherwise, and the lab never calls cuMulticastCreate.

mod nccl;
mod peer;
mod scaling;
pub mod topology;

pub use nccl::{bus_factor, expected, value};

use crate::gpu::cuda::nccl::Comm;
use half::bf16;

use crate::error::{LabError, Result};
use crate::gpu::device::Gpu;
use crate::gpu::driver;
use crate::schema::multi::{MultiResults, ScalingRun};
use crate::schema::stats::Summary;

/// Timed samples per measurement.
const SAMPLES: usize = 15;

/// Enough repetitions that one sample takes about `target_ms`, from one timed launch.
fn reps_for(one_ms: f64, target_ms: f64) -> usize {
    ((target_ms / one_ms.max(1e-4)).ceil() as usize).clamp(1, 1000)
}

fn summary(samples: &[f64]) -> Result<Summary> {
    Summary::of(samples).ok_or_else(|| LabError::Usage("no timing samples".into()))
}

/// One stage of `measure`: said as it starts, and named in its error.
fn stage<T>(name: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
    eprintln!("multi: {name}");
    run().map_err(|e| LabError::Usage(format!("{name}: {e}")))
}

fn nccl_error(e: crate::gpu::cuda::nccl::NcclError) -> LabError {
    LabError::Usage(format!("NCCL: {e:?}"))
}

/// Measures everything on `gpus` (two or more).
pub fn measure(gpus: &mut [Gpu], copy_sizes: &[u64], collective_sizes: &[u64]) -> Result<MultiResults> {
    if gpus.len() < 2 {
        return Err(LabError::Usage(format!("the multi family needs 2 or more GPUs; this machine has {}", gpus.len())));
    }
    // Before NCCL starts: NVLS stays off unless the caller chose otherwise.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    if !driver::nccl_present() {
        return Err(LabError::Unavailable("NCCL (libnccl.so.2) is not installed: the multi family needs it".into()));
    }
    let n = gpus.len();
    let mut out = MultiResults {
        gpus: gpus.iter().map(|g| format!("{} (GPU {})", g.info.name, g.info.ordinal)).collect(),
        links: topology::nvml_links(gpus),
        can_access_peer: topology::peer_matrix(gpus),
        copies: Vec::new(),
        latency_us: Vec::new(),
        kernel_reads: Vec::new(),
        collectives: Vec::new(),
        scaling: Vec::new(),
        nccl_version: String::new(),
        nvlink_sheet_gbs: crate::facts::sheet::for_device(&gpus[0].info.name, gpus[0].info.sms).and_then(|g| g.nvlink_gbs),
    };
    stage("peer copies, peer access off", || peer::peer_copies(gpus, copy_sizes, false, &mut out))?;
    let mut peer = true;
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            if out.can_access_peer[i][j] {
                driver::enable_peer_access(&gpus[i].ctx, &gpus[j].ctx)?;
            } else {
                peer = false;
            }
        }
    }
    if peer {
        stage("peer copies, peer access on", || peer::peer_copies(gpus, copy_sizes, true, &mut out))?;
        let biggest = *copy_sizes.iter().max().unwrap_or(&(1 << 30));
        stage("kernel reads of the other GPU's memory", || peer::kernel_reads(gpus, biggest as usize, &mut out))?;
    }
    let comms = Comm::from_devices(gpus.iter().map(|g| g.stream.clone()).collect()).map_err(nccl_error)?;
    out.nccl_version = driver::nccl_version();
    stage(&format!("NCCL {} collectives, fp32", out.nccl_version), || {
        nccl::collective_runs::<f32>(gpus, &comms, collective_sizes, &mut out)
    })?;
    stage("NCCL collectives, bf16", || nccl::collective_runs::<bf16>(gpus, &comms, collective_sizes, &mut out))?;
    drop(comms);

    // Data-parallel scaling: a 16384 x 4096 x 4096 GEMM (a BERT-large batch of 32 x 512 tokens
    // through a 4096-wide layer) split along the batch, and its 4096 x 4096 fp32 gradient.
    let mnk = (16384, 4096, 4096);
    let grad = 4096 * 4096;
    for lab_gemm in [false, true] {
        let name = if lab_gemm { scaling::LAB_GEMM } else { "cuBLAS SGEMM" };
        let mut t1 = None;
        for g_n in 1..=n {
            let comms = if g_n > 1 {
                Comm::from_devices(gpus[..g_n].iter().map(|g| g.stream.clone()).collect()).map_err(nccl_error)?
            } else {
                Vec::new()
            };
            let s = stage(&format!("data-parallel step, {name} on {g_n} GPU(s)"), || {
                scaling::scaling_step(&mut gpus[..g_n], &comms, lab_gemm, mnk, grad)
            })?;
            let t1v = *t1.get_or_insert(s.median_ms);
            out.scaling.push(ScalingRun {
                gemm: name.into(),
                gpus: g_n,
                shape: format!("{}x{}x{}", mnk.0, mnk.1, mnk.2),
                gradient_bytes: grad as u64 * 4,
                efficiency: Some(t1v / (g_n as f64 * s.median_ms)),
                step: s,
            });
        }
    }
    Ok(out)
}
