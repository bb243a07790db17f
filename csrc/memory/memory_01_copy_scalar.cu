// Technique: grid-stride copy, one 4-byte element per thread per iteration.
// Teaches: the floor of a memory-bound kernel. Consecutive threads touch consecutive words, so
//   every warp access is one fully used 128-byte line; a grid of a few blocks per SM loops over
//   the whole array, so launch cost is paid once however large the array is.
// Limits: each thread has one 4-byte load in flight at a time; on HBM parts that is not enough
//   bytes in flight to reach the copy engine's bandwidth (see memory_02).
#include "lab_device.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");

extern "C" __global__ void __launch_bounds__(BLOCK_X) memory_01_copy_scalar(lab_copy_args p) {
    const float* __restrict__ src = lab_ptr<const float>(p.src);
    float* __restrict__ dst = lab_ptr<float>(p.dst);
    const uint64_t stride = (uint64_t)gridDim.x * BLOCK_X;
    for (uint64_t i = (uint64_t)blockIdx.x * BLOCK_X + threadIdx.x; i < p.n; i += stride) {
        dst[i] = src[i];
    }
}
