/* The arguments of the GEMM families (sgemm, fp16, bf16, tf32, int8, fp8, fp8_e5m2, linear_fp16, linear_bf16), passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* sgemm family, row-major: C = alpha * A * B + beta * C, A is m x k, B is k x n, C is m x n.
 * beta == 0 means C is not read (BLAS semantics), so an unwritten C cannot leak into the result.
 * A stream-K kernel (STREAMK) also takes `sk_blocks`, the blocks its last partial wave is split
 * over (the grid's last ones), and their scratch: `partials` (two tiles of floats a block) and
 * `arrivals` (a counter a block, zero between launches; the kernel leaves them so). */
typedef struct lab_gemm_f32_args {
    lab_dptr a;
    lab_dptr b;
    lab_dptr c;
    int32_t m;
    int32_t n;
    int32_t k;
    int32_t lda;
    int32_t ldb;
    int32_t ldc;
    float alpha;
    float beta;
    lab_dptr partials;
    lab_dptr arrivals;
    int32_t sk_blocks;
} lab_gemm_f32_args;

/* Tensor Core GEMM families, row-major: C (m x n) = A (m x k) * B (k x n), A and B of the family's
 * input type (fp16: fp16, tf32: fp32, int8: s8), C of its output type (fp32, or s32 for int8). */
typedef struct lab_gemm_tc_args {
    lab_dptr a;
    lab_dptr b;
    lab_dptr c;
    int32_t m;
    int32_t n;
    int32_t k;
    int32_t lda;
    int32_t ldb;
    int32_t ldc;
} lab_gemm_tc_args;

/* A TMA tensor map (CUtensorMap): 128 opaque bytes the driver encodes, 64-byte aligned. */
typedef struct __attribute__((aligned(64))) lab_tma {
    uint64_t opaque[16];
} lab_tma;

/* Tensor Core GEMMs that load through TMA: the plain arguments plus a tensor map for A and B, and
 * a persistent kernel's stream-K scratch: `partials` (two tiles of C's type a block) and
 * `arrivals` (two counters a block, zero between launches; the kernel leaves them so). Where C's
 * rows are 16-byte aligned, c_tma is 1 and c_map describes C (n x m, 4-byte elements) in boxes
 * of LAB_TMA_C_COLS x LAB_TMA_C_ROWS with the 128-byte swizzle: a persistent kernel's epilogue
 * stores through it without waiting for the writes. b_chunks is 1 where the host made b_map of
 * MN-major B 3-D (64-column chunks x k x n / 64, a chunk's 128 bytes apart), so a k-tile's chunks
 * are one copy; 0 where b_map is B's 2-D map. The host alone decides which map it makes.
 * A fused epilogue (the linear families; no other kernel reads them) writes C (g.c) as
 * act(alpha * A * B + beta * c_in + bias): c_in m x n at C's pitch and bias n long, both of C's
 * type. They sit in the struct's padding, so it stays 512 bytes. */
#define LAB_TMA_C_COLS 32
#define LAB_TMA_C_ROWS 64
typedef struct lab_gemm_tma_args {
    lab_gemm_tc_args g;
    lab_tma a_map;
    lab_tma b_map;
    lab_tma c_map;
    lab_dptr partials;
    lab_dptr arrivals;
    int32_t c_tma;
    int32_t b_chunks;
    lab_dptr c_in;
    lab_dptr bias;
    float alpha;
    float beta;
} lab_gemm_tma_args;

/* A helper in a TMA kernel's module: `rows` rows of `cols` bytes, packed at src, copied to dst at a
 * row pitch of `ld` bytes (a multiple of 16, so rows start 16-byte aligned); the padding of each
 * row is written with zeros. */
typedef struct lab_pad_args {
    lab_dptr src;
    lab_dptr dst;
    uint64_t rows;
    uint64_t cols;
    uint64_t ld;
} lab_pad_args;
