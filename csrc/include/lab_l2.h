/* The arguments of the l2 family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* l2 family: the grid reads a working set of n 32-bit words `passes` times, one slice per block
 * and pass, and writes one wrapping integer sum per thread to out. */
typedef struct lab_l2_args {
    lab_dptr src;
    lab_dptr out;
    uint64_t n;
    int32_t passes;
} lab_l2_args;
