// Technique: one pass with a grid-wide finish (rung 5): rung 4's blocks write their partials to
//   dst[1 + block], and the last block to finish (an atomic ticket after a memory fence) sums
//   them into dst[0] and resets the ticket for the next launch.
// Teaches: ordering across blocks without a second launch: __threadfence makes a block's partial
//   visible before its ticket is taken, so the block that draws the last ticket sees them all.
// Limits: the last block's sum of the partials is serial in one block (a few thousand values);
//   the counter must be zero before the first launch (the host zeroes it once).
#include "lab_reduce.h"
#include "reduce_grid.cuh"

// A 1-D block of whole warps: the entry's constraints in variants.toml.

extern "C" __global__ void __launch_bounds__(BLOCK_X) reduce_05_single_pass(lab_reduce_args p) {
    float* dst = lab_ptr<float>(p.dst);
    unsigned* ticket = lab_ptr<unsigned>(p.counter);
    __shared__ bool last;
    const float total = lab_block_sum<BLOCK_X>(lab_thread_sum<BLOCK_X, UNROLL>(lab_ptr<const float>(p.src), p.n));
    if (threadIdx.x == 0) {
        dst[1 + blockIdx.x] = total;
        __threadfence();
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    float s = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK_X) s += __ldcg(&dst[1 + b]);
    s = lab_block_sum<BLOCK_X>(s);
    if (threadIdx.x == 0) {
        dst[0] = s;
        *ticket = 0;
    }
}
