// Technique: tree reduction with sequential addressing (rung 2): in each step the first half of
//   the active threads adds the second half, so active threads and their words stay contiguous.
// Teaches: bank-conflict-free shared memory and whole idle warps (which cost nothing) instead of
//   idle lanes in every warp.
// Limits: still one element per thread and a barrier per step, and the last five steps run in
//   one warp with barriers it does not need; rung 3 uses warp shuffles.
#include "lab_reduce.h"
#include "lab_device.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1 && (BLOCK_X & (BLOCK_X - 1)) == 0, "a power-of-two 1-D block");

extern "C" __global__ void __launch_bounds__(BLOCK_X) reduce_02_sequential(lab_reduce_args p) {
    __shared__ float s[BLOCK_X];
    const unsigned t = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * BLOCK_X + t;
    s[t] = i < p.n ? lab_ptr<const float>(p.src)[i] : 0.0f;
    __syncthreads();
    for (unsigned half = BLOCK_X / 2; half > 0; half >>= 1) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0) lab_ptr<float>(p.dst)[blockIdx.x] = s[0];
}
