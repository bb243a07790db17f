/* The arguments of the layernorm family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* layernorm families: each row of dst (rows x cols, row-major) = the row of src normalised to mean
 * 0 and variance 1 (the biased variance, plus eps), then scaled by gamma and shifted by beta (cols
 * elements each), in fp32 arithmetic; src, dst, gamma and beta hold the family's element type
 * (fp32, or fp16 / bf16: LAB_ELEM, row_storage.cuh). */
typedef struct lab_layernorm_args {
    lab_dptr src;
    lab_dptr dst;
    lab_dptr gamma;
    lab_dptr beta;
    int32_t rows;
    int32_t cols;
    float eps;
} lab_layernorm_args;
