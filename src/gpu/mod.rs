//! The GPU runtime: the device handle, the kernel set this program runs, the one decision of
//! what can run here and from what code, and every raw driver call in one module. Measurement
//! stands on this; nothing here knows a family.

pub mod availability;
pub mod compare;
pub mod device;
pub mod dnn;
pub mod driver;
pub mod ffi;
pub mod flush;
pub mod gemm;
pub mod jit;
pub mod legacy;
pub mod lt;
pub mod registry;
