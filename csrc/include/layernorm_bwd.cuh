// What the layer-norm backward rungs share. With xhat = (x - mean) * rstd the forward's
// normalised input and g = dy * gamma:
//   dx_j = rstd * (g_j - mean(g) - xhat_j * mean(g * xhat))   (a row's two sums, then a map)
//   dgamma_j = sum over rows of dy_j * xhat_j,  dbeta_j = sum over rows of dy_j
// The column sums cross every row, so no block can finish them alone: each block leaves the sums
// over its slab of rows in p.partial (2 x cols floats a block), the grid meets at a barrier
// (grid_barrier.cuh; the grid is resident), and then the whole grid adds the slabs' sums up,
// a few lanes a column.
#pragma once
#include "lab_layernorm_bwd.h"
#include "lab_device.cuh"
#include "grid_barrier.cuh"

// The rows [first, last) of this block's slab: the rows split as evenly as the grid allows.
struct lab_slab {
    int first, last;
};
__device__ __forceinline__ lab_slab lab_block_slab(int rows) {
    const long long b = blockIdx.x, g = gridDim.x;
    return lab_slab{(int)(b * rows / g), (int)((b + 1) * rows / g)};
}

// g = dy * gamma, rounded once (no fused multiply-add may keep the product exact in one place
// and not in another): the row's sums and dx see the same g, so a row of one element, whose dx is
// g - mean(g) = 0, gets exactly 0 and not the product's rounding error times rstd.
__device__ __forceinline__ float lab_ln_g(float dy, float gamma) { return __fmul_rn(dy, gamma); }

// dx of one element, given its row's mean(g) and mean(g * xhat).
__device__ __forceinline__ float lab_ln_dx(float x, float dy, float gamma, float mean, float rstd, float mean_g, float mean_gx) {
    return rstd * (lab_ln_g(dy, gamma) - mean_g - (x - mean) * rstd * mean_gx);
}

// This block's column sums for the columns [from, cols) over its slab, into its partial rows,
// reading x and dy again: a thread a column at a time, so a warp reads 32 consecutive floats of
// a row, and walks down the slab.
__device__ __forceinline__ void lab_ln_bwd_column_sums(const lab_layernorm_bwd_args& p, lab_slab s, int from, int threads) {
    const float *x = lab_ptr<const float>(p.x), *dy = lab_ptr<const float>(p.dy);
    const float *mean = lab_ptr<const float>(p.mean), *rstd = lab_ptr<const float>(p.rstd);
    float* part = lab_ptr<float>(p.partial) + (size_t)blockIdx.x * 2 * p.cols;
    for (int j = from + (int)threadIdx.x; j < p.cols; j += threads) {
        float sg = 0.0f, sb = 0.0f;
#pragma unroll 4
        for (int r = s.first; r < s.last; ++r) {
            const size_t i = (size_t)r * p.cols + j;
            const float d = dy[i];
            sg += d * (x[i] - mean[r]) * rstd[r];
            sb += d;
        }
        part[j] = sg, part[p.cols + j] = sb;
    }
}

// After the barrier: dgamma and dbeta from every block's partial rows. L lanes share a column
// (as many as the grid's threads allow, at most a warp), each adding every L-th block's sums,
// then a butterfly across the L; where columns outnumber the threads, a lane a column and the
// loads of a warp coalesce along the partial rows.
__device__ __forceinline__ void lab_ln_bwd_finish(const lab_layernorm_bwd_args& p, int threads) {
    const float* part = lab_ptr<const float>(p.partial);
    float *dgamma = lab_ptr<float>(p.dgamma), *dbeta = lab_ptr<float>(p.dbeta);
    const int blocks = gridDim.x, all = blocks * threads;
    int lanes = 1;
    while (lanes < 32 && 2 * lanes * p.cols <= all) lanes *= 2;
    const int lane = threadIdx.x % 32, per_warp = 32 / lanes, warps = all / 32;
    const int warp = (blockIdx.x * threads + threadIdx.x) / 32;
    // Every lane of a warp makes the same trips, so the shuffles see the whole warp.
    for (int first = warp * per_warp; first < p.cols; first += warps * per_warp) {
        const int j = first + lane / lanes;
        float sg = 0.0f, sb = 0.0f;
        if (j < p.cols) {
            for (int b = lane % lanes; b < blocks; b += lanes) {
                const float* row = part + (size_t)b * 2 * p.cols;
                sg += row[j], sb += row[p.cols + j];
            }
        }
        for (int off = lanes / 2; off > 0; off >>= 1) {
            sg += __shfl_xor_sync(0xffffffffu, sg, off);
            sb += __shfl_xor_sync(0xffffffffu, sb, off);
        }
        if (j < p.cols && lane % lanes == 0) dgamma[j] = sg, dbeta[j] = sb;
    }
}
