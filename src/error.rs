//! The library's one error type. The binary adds context with anyhow and prints one line.

use cudarc::cublas::result::CublasError;
use cudarc::driver::DriverError;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("no GPU: {0}; stored results can still be read with `kernel-lab report results/*.json`")]
    NoGpu(String),
    #[error("CUDA driver: {0}")]
    Driver(#[from] DriverError),
    #[error("cuBLAS: {0}")]
    Cublas(#[from] CublasError),
    /// Bad input from the user: a filter, a size, an architecture name.
    #[error("{0}")]
    Usage(String),
    /// A results file that cannot be read, parsed or written.
    #[error("{path}: {msg}")]
    Results { path: String, msg: String },
}

pub type Result<T> = std::result::Result<T, LabError>;
