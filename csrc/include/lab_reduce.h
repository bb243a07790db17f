/* The arguments of the reduce family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* reduce family: sums n floats of src. Multi-pass rungs write one partial per block to dst;
 * the single-pass rung writes the total to dst[0], using counter (zero between launches). */
typedef struct lab_reduce_args {
    lab_dptr src;
    lab_dptr dst;
    lab_dptr counter;
    uint64_t n;
} lab_reduce_args;
