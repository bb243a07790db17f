// Technique: grid-stride STREAM kernels with 4-byte accesses (copy, scale, add, triad by OP).
// Teaches: the floor of a memory-bound kernel. Consecutive threads touch consecutive words, so
//   every warp access is one fully used 128-byte line; a grid of a few blocks per SM loops over
//   the whole array, so launch cost is paid once however large the array is.
// Limits: each thread has one 4-byte load per array in flight at a time; on HBM that is too few
//   bytes in flight to reach the copy engine's bandwidth (see memory_02 and memory_03).
#include "lab_memory.h"
#include "stream_ops.cuh"

static_assert(VEC == 1, "4-byte accesses");  // a 1-D block: the entries' constraint

extern "C" __global__ void __launch_bounds__(BLOCK_X) memory_01_stream_scalar(lab_stream_args p) {
    const uint64_t threads = (uint64_t)gridDim.x * BLOCK_X;
    lab_stream_tail(p, 0, (uint64_t)blockIdx.x * BLOCK_X + threadIdx.x, threads);
}
