//! kernel-lab: write, check, time and compare CUDA kernel variants across GPU architectures.
//!
//! Module map (module -> what it owns):
//! - [`arch`]: the architecture table (Volta .. Blackwell) and nvcc target selection (shared with build.rs)
//! - [`manifest`]: the schema of `csrc/<family>/variants.toml` (shared with build.rs)
//! - [`expr`]: integer expressions for manifests' tuning constraints (shared with build.rs)
//! - [`resources`]: registers / shared memory / spills from ptxas's report (shared with build.rs)
//! - [`ffi`]: the bindgen types of `csrc/include/lab.h`, the kernels' argument structs
//! - [`jit`]: compiling a variant again at run time in another configuration (NVRTC)
//! - [`legacy`]: compiling for architectures the toolkit dropped (sm_70, with NVRTC 12)
//! - [`registry`]: the variants compiled into this binary; lookup and filters
//! - [`device`]: what the running GPU reports; the GPU handle (context, stream, cuBLAS)
//! - [`multi`]: several GPUs: links, peer copies, NCCL collectives, data-parallel scaling
//! - [`families`]: per family: inputs, f64 reference, launches, declared work, what it can run
//! - [`verify`]: error norms and the tolerance of each precision
//! - [`stats`]: summaries of timing samples
//! - [`telemetry`]: NVML clocks, power, temperature, throttling and energy while variants are timed
//! - [`timing`]: CUDA-event timing with warm-up and an L2 flush before every sample
//! - [`tune`]: the search over a variant's tunable constants (children compile with NVRTC)
//! - [`roofline`]: measured ceilings, each variant by its intensity, bounds on the sheet's GPUs, the SVG plot
//! - [`runner`]: verify, then time, then verify again, for every variant and baseline
//! - [`transfers`]: host <-> device copies, pageable and pinned, and copy/compute overlap
//! - [`store`]: the per-device results files (schema, atomic writes, merging)
//! - [`report`]: tables of results, side by side per device
//! - [`sheet`]: the published spec sheet of the GPUs the lab compares (rates, memory, links, prices)
//! - [`error`]: the library's error type

pub mod arch;
pub mod device;
pub mod error;
pub mod expr;
pub mod families;
pub mod ffi;
pub mod jit;
pub mod legacy;
pub mod manifest;
pub mod multi;
pub mod registry;
pub mod report;
pub mod resources;
pub mod roofline;
pub mod runner;
pub mod sheet;
pub mod stats;
pub mod store;
pub mod telemetry;
pub mod timing;
pub mod transfers;
pub mod tune;
pub mod verify;

pub use error::{LabError, Result};
