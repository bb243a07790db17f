// Technique: warp shuffles (rung 3): each warp sums its 32 values in registers with
//   __shfl_down_sync, then one warp sums the warps' results (lab_block_sum in reduce_warp.cuh).
// Teaches: registers over shared memory. Five shuffle steps replace five shared-memory steps
//   and their barriers; the block needs one barrier in all.
// Limits: still one 4-byte element per thread, so the grid is n / BLOCK_X blocks and each load
//   has little company in flight; rung 4 gives each thread many vector loads.
#include "lab_reduce.h"
#include "reduce_warp.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");

extern "C" __global__ void __launch_bounds__(BLOCK_X) reduce_03_warp_shuffle(lab_reduce_args p) {
    const uint64_t i = (uint64_t)blockIdx.x * BLOCK_X + threadIdx.x;
    const float v = i < p.n ? lab_ptr<const float>(p.src)[i] : 0.0f;
    const float total = lab_block_sum<BLOCK_X>(v);
    if (threadIdx.x == 0) lab_ptr<float>(p.dst)[blockIdx.x] = total;
}
