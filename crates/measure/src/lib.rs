//! Measurement: the families (inputs, f64 references, launches, declared work), verification,
//! timing and telemetry, the plan of a run and its runner, worker processes that isolate each
//! job, fuzzing shapes, the tuner, host transfers and several GPUs.
//!
//! A layer above is out of reach: this crate does not depend on it, so naming it fails to compile.
//! ```compile_fail,E0432
//! use lab_analysis::store;
//! ```
//! Nor can a raw driver call: cudarc is the gpu crate's dependency, not this one's, and
//! `gpu::cuda` re-exports only its safe parts.
//! ```compile_fail,E0433
//! let init = cudarc::driver::sys::cuInit;
//! ```

// The layers below, under the names the modules use (`crate::gpu::...`).
use lab_facts as facts;
use lab_gpu as gpu;
use lab_gpu::error;
use lab_schema as schema;

pub mod child;
pub mod element;
pub mod families;
pub mod isolate;
pub mod multi;
pub mod phases;
pub mod plan;
pub mod profile;
pub mod resume;
pub mod runner;
pub mod strategy;
pub mod telemetry;
pub mod timing;
pub mod transfers;
pub mod tune;
pub mod tune_cache;
pub mod vendor;
pub mod verify;
