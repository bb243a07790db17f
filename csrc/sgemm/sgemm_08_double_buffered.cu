// Technique: register-staged double buffering (rung 8), on the warp tiling of rung 7.
// Teaches: overlap. The next tile's global loads are issued into registers before this tile's
//   math and stored to the second shared-memory buffer after it, so DRAM/L2 latency hides behind
//   FMAs and each BK step needs one barrier instead of two. It uses plain loads, so it runs on
//   every architecture (Volta included); the loop is in sgemm_double_buffer.cuh.
// Limits: the staging registers compete with the accumulators (watch spills in `resources`);
//   blocks are launched row by row, so concurrent blocks share little of B in L2 (rung 9). Where
//   the tiles alone leave SMs idle, SPLIT_K slices each tile's K over blocks that add into C
//   (the manifest's sgemm_08_double_buffered_split_k), at the cost of C's atomic traffic.
#include "lab_gemm.h"
#include "sgemm_double_buffer.cuh"

#define THREADS (BLOCK_X)
// The rules the tiling puts on the constants are variants.toml's warp_tile set and this rung's entries, which the build and the
// tuner check before compiling.

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_08_double_buffered(lab_gemm_f32_args p) {
    lab_sgemm_double_buffered<THREADS, BM, BN, BK, WM, WN, WNITER, TM, TN>(p, blockIdx.y, blockIdx.x);
}
