//! The library's one error type. The binary adds context with anyhow, prints one line, and exits
//! with the code of the error's kind (`LabError::exit_code`, the README's table).

use cudarc::cublas::result::CublasError;
use cudarc::driver::DriverError;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("no GPU: {0}; stored results can still be read with `kernel-lab report`")]
    NoGpu(String),
    /// A library or tool the command needs is not installed (NVRTC, NCCL, compiled kernels).
    #[error("{0}")]
    Unavailable(String),
    #[error("CUDA driver: {0}")]
    Driver(#[from] DriverError),
    #[error("cuBLAS: {0}")]
    Cublas(#[from] CublasError),
    #[error("cuDNN: {0}")]
    Cudnn(String),
    /// Bad input from the user: a filter, a size, an architecture name.
    #[error("{0}")]
    Usage(String),
    /// A results file that cannot be read, parsed or written.
    #[error("{path}: {msg}")]
    Results { path: String, msg: String },
}

pub type Result<T> = std::result::Result<T, LabError>;

/// The exit codes of every command: the README's contract.
pub mod exit {
    /// Everything ran and passed (skips are not failures).
    pub const OK: u8 = 0;
    /// A variant failed verification, faulted or hung; or `compare` found a regression.
    pub const FAILED: u8 = 1;
    /// Bad usage: an unknown name, a bad size or flag, an unreadable results file.
    pub const USAGE: u8 = 2;
    /// No GPU, no CUDA driver, or a library or tool the command needs is missing.
    pub const NO_GPU: u8 = 3;
    /// The CUDA driver, cuBLAS or cuDNN failed outside any one variant (out of memory, a lost device).
    pub const DRIVER: u8 = 4;
}

impl LabError {
    pub fn exit_code(&self) -> u8 {
        match self {
            LabError::NoGpu(_) | LabError::Unavailable(_) => exit::NO_GPU,
            LabError::Driver(_) | LabError::Cublas(_) | LabError::Cudnn(_) => exit::DRIVER,
            LabError::Usage(_) | LabError::Results { .. } => exit::USAGE,
        }
    }
}
