/* The arguments of the softmax_bwd family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* softmax_bwd family: the softmax's backward pass over each row of a rows x cols row-major fp32
 * matrix. y is the forward's output, dy the loss's gradient with respect to it; the kernel writes
 * the gradient with respect to the forward's input, dx_j = y_j (dy_j - sum_i dy_i y_i). */
typedef struct lab_softmax_bwd_args {
    lab_dptr y;
    lab_dptr dy;
    lab_dptr dx;
    int32_t rows;
    int32_t cols;
} lab_softmax_bwd_args;
