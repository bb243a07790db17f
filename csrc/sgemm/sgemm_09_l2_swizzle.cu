// Technique: L2-friendly block rasterisation (rung 9): rung 8's loop, with blocks taken in
//   groups of GROUP_M tile rows, column by column inside a group.
// Teaches: the order blocks run in decides L2 reuse. Row-major order sweeps all of B for every
//   row of tiles; grouped order keeps GROUP_M rows of A and a few columns of B hot in L2 while the
//   blocks that need them run, so fewer bytes come from DRAM per FLOP.
// Limits: pays only when the operands outgrow L2 (60 MB on an H200 holds 4096^2 fp32 A and B);
//   GROUP_M is tunable, and too large a group sweeps as much of A as row order sweeps of B.
#include "lab_gemm.h"
#include "sgemm_double_buffer.cuh"

#define THREADS (BLOCK_X)
// The rules the tiling puts on the constants are variants.toml's warp_tile set and this rung's entry, which the build and the
// tuner check before compiling.

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_09_l2_swizzle(lab_gemm_f32_args p) {
    int tileRow, tileCol;
    lab_grouped_tile<GROUP_M>(tileRow, tileCol);
    lab_sgemm_double_buffered<THREADS, BM, BN, BK, WM, WN, WNITER, TM, TN>(p, tileRow, tileCol);
}
