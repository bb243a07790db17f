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

/* memory family: dst[i] = src[i] for i < n. */
typedef struct lab_copy_args {
    lab_dptr src;
    lab_dptr dst;
    uint64_t n; /* elements of 4 bytes */
} lab_copy_args;

/* sgemm family, row-major: C = alpha * A * B + beta * C, A is m x k, B is k x n, C is m x n.
 * beta == 0 means C is not read (BLAS semantics), so an unwritten C cannot leak into the result. */
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
} lab_gemm_f32_args;

#endif
