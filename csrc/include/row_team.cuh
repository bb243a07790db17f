// Reductions across a warp and across a team of warps that shares a row: the row-wise families'
// (softmax, layernorm) rungs from a warp a row up.
#pragma once
#include "lab_device.cuh"

struct lab_max_op {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct lab_sum_op {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

// op over the warp's 32 values, in every lane (butterfly shuffles).
template <typename Op>
__device__ __forceinline__ float lab_warp_all(float v, Op op) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

// op over a team of TEAM consecutive threads (whole warps) that shares a row, in every thread of
// the team. Teams wider than a warp meet in `scratch` (a float per warp of the block) between
// two barriers, so every thread of the block must call it the same number of times: a team past
// the last row still takes part.
template <int TEAM, typename Op>
__device__ __forceinline__ float lab_team_all(float v, Op op, float* scratch) {
    static_assert(TEAM % 32 == 0 && TEAM <= 1024, "a team is whole warps");
    v = lab_warp_all(v, op);
    if constexpr (TEAM > 32) {
        constexpr int WARPS = TEAM / 32;
        const int warp = threadIdx.x / 32, first = warp / WARPS * WARPS;
        __syncthreads();  // the scratch's readers of the last call are done
        if (threadIdx.x % 32 == 0) scratch[warp] = v;
        __syncthreads();
        v = scratch[first];
#pragma unroll
        for (int w = 1; w < WARPS; ++w) v = op(v, scratch[first + w]);
    }
    return v;
}
