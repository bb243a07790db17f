//! The GPU runtime: the device handle, the kernel set this program runs, the one decision of
//! what can run here and from what code, and every raw driver call in one module. Measurement
//! stands on this; nothing here knows a family.
//!
//! A layer above is out of reach: this crate does not depend on it, so naming it fails to compile.
//! ```compile_fail,E0432
//! use lab_measure::runner;
//! ```

// The layers below, under the names the modules use (`crate::schema::...`).
use lab_facts as facts;
use lab_schema as schema;

pub mod error;
pub use error::{LabError, Result};

pub mod availability;
pub mod compare;
pub mod cuda;
pub mod device;
pub mod dnn;
pub mod dnn_bn;
pub mod dnn_bn_training;
pub mod dnn_conv;
mod dnn_conv_graph;
pub mod driver;
pub mod ffi;
pub mod flush;
pub mod gemm;
pub mod jit;
pub mod legacy;
pub mod lt;
pub mod registry;
