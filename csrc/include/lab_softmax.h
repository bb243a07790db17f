/* The arguments of the softmax family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* softmax families: each of `rows` rows of dst (rows x cols, row-major) = the softmax of the same
 * row of src, y_j = exp(x_j - max x) / sum_i exp(x_i - max x), in fp32 arithmetic; src and dst hold
 * the family's element type (fp32, or fp16 / bf16: LAB_ELEM, row_storage.cuh). */
typedef struct lab_softmax_args {
    lab_dptr src;
    lab_dptr dst;
    int32_t rows;
    int32_t cols;
} lab_softmax_args;
