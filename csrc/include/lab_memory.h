/* The arguments of the memory family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

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
