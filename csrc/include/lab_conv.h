/* The arguments of the convolution family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* conv_fp16: dst = the 2-D convolution (cross-correlation, as deep-learning frameworks compute it)
 * of src with filter, fp16 in and out, fp32 arithmetic. src is n x h x w x c (NHWC, channels
 * last, as PyTorch's channels_last runs ResNets), filter k x r x s x c (each output channel's
 * r x s x c taps, channels innermost), dst n x p x q x k, where p = (h + 2 pad - r) / stride + 1
 * and q = (w + 2 pad - s) / stride + 1; taps outside the image read zeros. */
typedef struct lab_conv_args {
    lab_dptr src;
    lab_dptr filter;
    lab_dptr dst;
    int32_t n;
    int32_t h;
    int32_t w;
    int32_t c;
    int32_t k;
    int32_t r;
    int32_t s;
    int32_t stride;
    int32_t pad;
    int32_t p;
    int32_t q;
} lab_conv_args;
