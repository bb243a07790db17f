/* The ABI shared by the lab's kernels and its Rust host: argument structs passed by value.
 * This file is the only input to bindgen, so a layout change reaches Rust as a compile error.
 * Plain C only: it is read by nvcc and by libclang. */
#ifndef KERNEL_LAB_H
#define KERNEL_LAB_H

#if defined(__CUDACC_RTC__)
/* NVRTC (the tuner's run-time compiler) has no C library headers. */
typedef unsigned long long uint64_t;
typedef int int32_t;
#else
#include <stdint.h>
#endif

/* Pointers travel as 64-bit device addresses so the Rust side needs no pointer casts. */
typedef uint64_t lab_dptr;

/* memory family, STREAM's four kernels over n floats, chosen by the OP define:
 * copy a = b; scale a = s * b; add a = b + c; triad a = b + s * c. */
#define LAB_OP_COPY 0
#define LAB_OP_SCALE 1
#define LAB_OP_ADD 2
#define LAB_OP_TRIAD 3
typedef struct lab_stream_args {
    lab_dptr a;
    lab_dptr b;
    lab_dptr c;
    float scalar;
    uint64_t n;
} lab_stream_args;

/* l2 family: the grid reads a working set of n 32-bit words `passes` times, one slice per block
 * and pass, and writes one wrapping integer sum per thread to out. */
typedef struct lab_l2_args {
    lab_dptr src;
    lab_dptr out;
    uint64_t n;
    int32_t passes;
} lab_l2_args;

/* reduce family: sums n floats of src. Multi-pass rungs write one partial per block to dst;
 * the single-pass rung writes the total to dst[0], using counter (zero between launches). */
typedef struct lab_reduce_args {
    lab_dptr src;
    lab_dptr dst;
    lab_dptr counter;
    uint64_t n;
} lab_reduce_args;

/* transpose family: dst (cols x rows) = transpose of src (rows x cols), both row-major. */
typedef struct lab_transpose_args {
    lab_dptr src;
    lab_dptr dst;
    int32_t rows;
    int32_t cols;
} lab_transpose_args;

/* softmax family: each of `rows` rows of dst (rows x cols, row-major) = the softmax of the same
 * row of src, y_j = exp(x_j - max x) / sum_i exp(x_i - max x), in fp32. */
typedef struct lab_softmax_args {
    lab_dptr src;
    lab_dptr dst;
    int32_t rows;
    int32_t cols;
} lab_softmax_args;

/* layernorm family: each row of dst (rows x cols, row-major) = the row of src normalised to mean 0
 * and variance 1 (the biased variance, plus eps), then scaled by gamma and shifted by beta (cols
 * floats each), in fp32. */
typedef struct lab_layernorm_args {
    lab_dptr src;
    lab_dptr dst;
    lab_dptr gamma;
    lab_dptr beta;
    int32_t rows;
    int32_t cols;
    float eps;
} lab_layernorm_args;

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
 * input type (tensor: fp16, tf32: fp32, int8: s8), C of its output type (fp32, or s32 for int8). */
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
 * stores through it without waiting for the writes. */
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

/* peak family: the precision a kernel measures (its PREC define), as the spec sheet names them. */
#define LAB_FP64 0
#define LAB_FP64_TENSOR 1
#define LAB_FP32 2
#define LAB_FP16 3
#define LAB_TF32 4
#define LAB_FP16_F16ACC 5
#define LAB_FP16_F32ACC 6
#define LAB_BF16_F32ACC 7
#define LAB_FP8_F32ACC 8
#define LAB_INT8 9

/* peak family: `tasks` units of work, spread over a persistent grid (task t goes to warp
 * t mod warps). inputs holds 32-bit-or-wider register images the kernel reads at run time (so the
 * compiler can fold nothing): see each kernel for their meaning. out: one float per thread, the
 * sum of its accumulators. */
typedef struct lab_peak_args {
    lab_dptr out;
    lab_dptr inputs;
    uint64_t tasks;
} lab_peak_args;

#endif
