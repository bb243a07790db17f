// Technique: several elements per thread with 16-byte loads (rung 4): a grid of SMs x
//   BLOCKS_PER_SM blocks strides over the array, each thread keeping UNROLL float4 loads in flight
//   into separate accumulators, then a shuffle reduction per block (one partial per block; the
//   host runs a short second pass over the partials).
// Teaches: a reduction is a read stream. Once the per-element work is a few adds, the rate is set
//   by bytes in flight, as for a copy; the tree at the end touches one value per thread.
// Limits: two launches (the second is tiny but costs a launch); rung 5 finishes in one.
#include "lab_reduce.h"
#include "reduce_grid.cuh"

// A 1-D block of whole warps: the entry's constraints in variants.toml.

extern "C" __global__ void __launch_bounds__(BLOCK_X) reduce_04_vectorized(lab_reduce_args p) {
    const float total = lab_block_sum<BLOCK_X>(lab_thread_sum<BLOCK_X, UNROLL>(lab_ptr<const float>(p.src), p.n));
    if (threadIdx.x == 0) lab_ptr<float>(p.dst)[blockIdx.x] = total;
}
