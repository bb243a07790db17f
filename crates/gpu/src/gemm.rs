//! A GEMM as the vendor libraries take it: what a family's case hands to cuBLAS's default call
//! (`driver::gemm_ex`) and to cuBLASLt's candidates (`lt`), written once.

use cudarc::cublas::sys as blas;

/// One column-major GEMM, D = alpha·op(A)·op(B) + beta·C with C = D, in cublasGemmEx's terms
/// (the families name their types once, for both libraries): the pointers are device addresses
/// of buffers that outlive every launch.
#[derive(Debug, Clone)]
pub struct Gemm {
    pub trans: (bool, bool),
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub a: (u64, blas::cudaDataType_t, i64),
    pub b: (u64, blas::cudaDataType_t, i64),
    pub c: (u64, blas::cudaDataType_t, i64),
    pub compute: blas::cublasComputeType_t,
    /// alpha = 1 and beta = 0 in the compute type's scale type, as bytes.
    pub one_zero: ([u8; 4], [u8; 4]),
}
