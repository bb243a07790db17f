//! The results schema: plain data with serde, the bottom of everything that reads or writes
//! results. Nothing here touches a GPU, so stored results are read, compared and rendered
//! without the GPU runtime.
//!
//! A run is one file of JSON lines under `results/<model>-<arch>/`: a [`run::Header`] first (the
//! run and the device), then one [`run::Record`] per line as each is measured.
//!
//! A layer above is out of reach: this crate does not depend on it, so naming it fails to compile.
//! ```compile_fail,E0432
//! use lab_gpu::device::Gpu;
//! ```

// The layer below, under the name the modules use (`crate::facts::...`).
use lab_facts as facts;

pub mod check;
pub mod device;
pub mod entry;
pub mod multi;
pub mod run;
pub mod stats;
pub mod telemetry;
pub mod transfers;
pub mod tuning;
