//! What the layers above use of cudarc, re-exported: device memory and its pointers, events and
//! graphs, cuBLAS's GEMM calls and the enums they take, NCCL's communicators and collectives.
//! Only this crate depends on cudarc, so above it a raw driver call or type (cudarc's
//! `driver::sys` and `driver::result`) cannot be named: `driver.rs` wraps each call the layers
//! above need, and says what it needs of its caller.

pub use cudarc::driver::{CudaEvent, CudaGraph, CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, PinnedHostSlice, ValidAsZeroBits};

/// cuBLAS's GEMM calls, and the enums of their arguments and status.
pub mod cublas {
    pub use cudarc::cublas::sys::{cublasComputeType_t, cublasOperation_t, cublasStatus_t, cudaDataType_t};
    pub use cudarc::cublas::{Gemm, GemmConfig};
}

/// NCCL's communicators and collectives.
pub mod nccl {
    pub use cudarc::nccl::result::NcclError;
    pub use cudarc::nccl::safe::{group_end, group_start, Comm, NcclType, ReduceOp};
}
