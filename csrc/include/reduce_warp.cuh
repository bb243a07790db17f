// Warp- and block-level sums shared by the reduction rungs from 03 on.
#pragma once
#include "lab_device.cuh"

__device__ __forceinline__ float lab_warp_sum(float v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// The sum of v over the block, valid in thread 0. THREADS is a multiple of 32, at most 1024.
template <int THREADS>
__device__ __forceinline__ float lab_block_sum(float v) {
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
    __shared__ float warp_sums[THREADS / 32];
    v = lab_warp_sum(v);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x < THREADS / 32 ? warp_sums[threadIdx.x] : 0.0f;
    return threadIdx.x < 32 ? lab_warp_sum(v) : 0.0f;
}
