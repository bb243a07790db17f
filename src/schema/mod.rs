//! The results schema: plain data with serde, the bottom of everything that reads or writes
//! results. Nothing here touches a GPU, so stored results are read, compared and rendered
//! without the GPU runtime.
//!
//! A run is one file of JSON lines under `results/<model>-<arch>/`: a [`run::Header`] first (the
//! run and the device), then one [`run::Record`] per line as each is measured.

pub mod check;
pub mod device;
pub mod entry;
pub mod multi;
pub mod run;
pub mod stats;
pub mod telemetry;
pub mod transfers;
pub mod tuning;
