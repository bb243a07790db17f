// Technique: tree reduction in shared memory with interleaved addressing (rung 1): in step s the
//   thread t adds element 2*s*t + s into 2*s*t. One element per thread; one partial per block,
//   and the host launches the kernel again on the partials until one value is left.
// Teaches: the textbook tree, and what its addressing costs: the active threads spread out, so
//   each step's shared-memory accesses collide in the same banks, and most warps sit idle.
// Limits: shared-memory bank conflicts and a barrier per step; half the threads idle after the
//   first load. Rung 2 keeps the active threads contiguous.
#include "lab_reduce.h"
#include "lab_device.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1 && (BLOCK_X & (BLOCK_X - 1)) == 0, "a power-of-two 1-D block");

extern "C" __global__ void __launch_bounds__(BLOCK_X) reduce_01_interleaved(lab_reduce_args p) {
    __shared__ float s[BLOCK_X];
    const unsigned t = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * BLOCK_X + t;
    s[t] = i < p.n ? lab_ptr<const float>(p.src)[i] : 0.0f;
    __syncthreads();
    for (unsigned step = 1; step < BLOCK_X; step *= 2) {
        const unsigned at = 2 * step * t;
        if (at < BLOCK_X) s[at] += s[at + step];
        __syncthreads();
    }
    if (t == 0) lab_ptr<float>(p.dst)[blockIdx.x] = s[0];
}
