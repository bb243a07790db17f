/* The arguments of the batch-norm family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* batchnorm_fp16 (inference, as a network in eval mode runs it): dst = (src - mean) /
 * sqrt(var + eps) * gamma + beta per channel, src and dst fp16 with `pixels` rows of `c` channels
 * (NHWC: n h w pixels, channels last), mean, var, gamma and beta fp32 arrays of c, fp32 arithmetic. */
typedef struct lab_batchnorm_args {
    lab_dptr src;
    lab_dptr dst;
    lab_dptr mean;
    lab_dptr var;
    lab_dptr gamma;
    lab_dptr beta;
    float eps;
    int32_t c;
    uint64_t pixels;
} lab_batchnorm_args;
