/* The arguments of the layernorm_bwd family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* layernorm_bwd family: the layer norm's backward pass over a rows x cols row-major fp32 matrix.
 * x is the forward's input, mean and rstd (rows floats each) the statistics the forward saved,
 * gamma its scale (cols floats) and dy the loss's gradient with respect to its output. The kernel
 * writes dx (rows x cols), and dgamma and dbeta (cols floats each): the column sums of
 * dy * (x - mean) * rstd and of dy. partial is the kernel's scratch for its blocks' column sums
 * (2 x cols floats a block of the grid); barrier two words, zero before the first launch: an
 * arrival count the kernel leaves zero and a generation that grows by one a barrier. */
typedef struct lab_layernorm_bwd_args {
    lab_dptr x;
    lab_dptr dy;
    lab_dptr gamma;
    lab_dptr mean;
    lab_dptr rstd;
    lab_dptr dx;
    lab_dptr dgamma;
    lab_dptr dbeta;
    lab_dptr partial;
    lab_dptr barrier;
    int32_t rows;
    int32_t cols;
} lab_layernorm_bwd_args;
