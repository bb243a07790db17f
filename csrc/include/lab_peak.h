/* The arguments of the peak family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* peak family: `tasks` units of work, spread over a persistent grid (task t goes to warp
 * t mod warps). inputs holds 32-bit-or-wider register images the kernel reads at run time (so the
 * compiler can fold nothing): see each kernel for their meaning. out: one float per thread, the
 * sum of its accumulators. */
typedef struct lab_peak_args {
    lab_dptr out;
    lab_dptr inputs;
    uint64_t tasks;
} lab_peak_args;
