// What the layer-norm rungs share: the affine step every rung ends with, and Welford's running
// (count, mean, sum of squared deviations) with the merge of two such states (Chan et al.).
#pragma once
#include "lab_layernorm.h"
#include "row_team.cuh"

// y = (x - mean) * rstd * gamma + beta, the normalised element scaled and shifted.
__device__ __forceinline__ float lab_affine(float x, float mean, float rstd, float g, float b) {
    return (x - mean) * rstd * g + b;
}

// Welford's state over the elements seen: their count n, mean and sum of squared deviations m2.
// Adding an element moves the mean by its share of the deviation, so no sum of squares of large
// values is ever formed (E[x^2] - E[x]^2 loses every digit on a row offset by 10^4).
struct lab_welford {
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    __device__ __forceinline__ void add(float x) {
        n += 1.0f;
        const float d = x - mean;
        mean += __fdividef(d, n);  // approximate (2 ulp), without IEEE division's slow-path call
        m2 += d * (x - mean);
    }
    // Another state folded in: the means weighted by their counts, m2 corrected by the gap.
    __device__ __forceinline__ void merge(float n2, float mean2, float m2_2) {
        const float n_all = n + n2;
        if (n_all == 0.0f) return;
        const float d = mean2 - mean, f = __fdividef(n2, n_all);
        mean += d * f;
        m2 += m2_2 + d * d * n * f;
        n = n_all;
    }
};

// The state over a team of TEAM threads (whole warps) sharing a row, the same in every thread of
// the team: butterfly shuffles within a warp (whose partners may round a merge differently, so
// lane 0's result is broadcast), then the team's warps meet in `scratch` (three floats a warp of
// the block) as lab_team_all's do.
template <int TEAM>
__device__ __forceinline__ lab_welford lab_team_welford(lab_welford w, float* scratch) {
    static_assert(TEAM % 32 == 0 && TEAM <= 1024, "a team is whole warps");
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float n2 = __shfl_xor_sync(0xffffffffu, w.n, off), mean2 = __shfl_xor_sync(0xffffffffu, w.mean, off),
                    m2_2 = __shfl_xor_sync(0xffffffffu, w.m2, off);
        w.merge(n2, mean2, m2_2);
    }
    w = lab_welford{__shfl_sync(0xffffffffu, w.n, 0), __shfl_sync(0xffffffffu, w.mean, 0), __shfl_sync(0xffffffffu, w.m2, 0)};
    if constexpr (TEAM > 32) {
        constexpr int WARPS = TEAM / 32;
        const int warp = threadIdx.x / 32, first = warp / WARPS * WARPS;
        __syncthreads();
        if (threadIdx.x % 32 == 0) scratch[3 * warp] = w.n, scratch[3 * warp + 1] = w.mean, scratch[3 * warp + 2] = w.m2;
        __syncthreads();
        w = lab_welford{scratch[3 * first], scratch[3 * first + 1], scratch[3 * first + 2]};
#pragma unroll
        for (int i = 1; i < WARPS; ++i) w.merge(scratch[3 * (first + i)], scratch[3 * (first + i) + 1], scratch[3 * (first + i) + 2]);
    }
    return w;
}
