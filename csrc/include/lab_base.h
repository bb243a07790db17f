/* What every argument struct of lab_*.h builds on. Plain C: read by nvcc, NVRTC and libclang. */
#pragma once

#if defined(__CUDACC_RTC__)
/* NVRTC (the tuner's run-time compiler) has no C library headers. */
typedef unsigned long long uint64_t;
typedef int int32_t;
#else
#include <stdint.h>
#endif

/* Pointers travel as 64-bit device addresses so the Rust side needs no pointer casts. */
typedef uint64_t lab_dptr;

/* A precision, as the spec sheet names them: what a peak kernel measures and what a Hopper GEMM
 * multiplies in (their PREC define). */
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
