//! A GEMM as the vendor libraries take it: what a family's case hands to cuBLAS's default call
//! (`driver::gemm_ex`) and to cuBLASLt's candidates (`lt`), written once.

use cudarc::cublas::sys as blas;

/// One column-major GEMM, D = alpha·op(A)·op(B) + beta·C with C = D, in cublasGemmEx's terms
/// (the families name their types once, for both libraries), or with an epilogue fused
/// (`gelu_bias`, cuBLASLt only): the pointers are device addresses of buffers that outlive every
/// launch.
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
    /// alpha and beta in the compute type's scale type, as bytes.
    pub alpha_beta: ([u8; 4], [u8; 4]),
    /// cuBLASLt's GELU_BIAS epilogue: D = GELU(alpha·op(A)·op(B) + beta·C + bias), D at `c`.
    pub gelu_bias: Option<GeluBias>,
}

/// The operands of a GELU_BIAS epilogue: C read from `c_in` (C's type and layout, D apart from
/// it), `bias` one element of C's type for each of D's rows.
#[derive(Debug, Clone, Copy)]
pub struct GeluBias {
    pub c_in: u64,
    pub bias: u64,
}
