// The per-thread part of rungs 4 and 5: a grid-stride sum with float4 loads, UNROLL of them in
// flight, into independent accumulators; the n % 4 tail as scalars.
#pragma once
#include "reduce_warp.cuh"

template <int THREADS, int UNROLL_>
__device__ __forceinline__ float lab_thread_sum(const float* src, uint64_t n) {
    const float4* v4 = reinterpret_cast<const float4*>(src);
    const uint64_t n4 = n / 4, threads = (uint64_t)gridDim.x * THREADS;
    const uint64_t tid = (uint64_t)blockIdx.x * THREADS + threadIdx.x;
    float acc[UNROLL_] = {0.0f};
    uint64_t i = tid;
    for (; i + (UNROLL_ - 1) * threads < n4; i += UNROLL_ * threads) {
        float4 v[UNROLL_];
#pragma unroll
        for (int u = 0; u < UNROLL_; ++u) v[u] = v4[i + u * threads];
#pragma unroll
        for (int u = 0; u < UNROLL_; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < n4; i += threads) {
        const float4 v = v4[i];
        acc[0] += (v.x + v.y) + (v.z + v.w);
    }
    for (uint64_t j = n4 * 4 + tid; j < n; j += threads) acc[0] += src[j];
    float s = 0.0f;
#pragma unroll
    for (int u = 0; u < UNROLL_; ++u) s += acc[u];
    return s;
}
