// Technique: one read of x and dy for all three outputs (rung 2). Each thread of a row's team
// holds its share of the first TEAM x PER_THREAD columns of the row in registers (float4s where
// the row's length is a multiple of 4), writes dx from them once the team agrees on the row's
// sums, and keeps, for those same columns, running sums of dy * xhat and dy over every row its
// team takes: the column sums come from the registers dx was computed from. The block's teams
// then add their sums in shared memory, in turn, the block writes its partial rows, and the grid
// finishes dgamma and dbeta after a barrier, as rung 1 does.
// Teaches: fusing the two reductions: a thread always holds the same columns, so the column sums
// ride along with the row pass for 2 x PER_THREAD more registers.
// Limits: columns past TEAM x PER_THREAD are read again for dx and once more for their column
// sums (rung 1's way); the shared sums cap TEAM x PER_THREAD at 4,096 columns.
#include "layernorm_bwd.cuh"
#include "row_team.cuh"
#include "row_geometry.cuh"

static_assert(PER_THREAD % 4 == 0, "whole float4s a thread");
// The columns the registers hold; the block's shared column sums of them fit 32 KB (at most 4,096:
// the entry's constraint in variants.toml).
constexpr int HELD = TEAM * PER_THREAD;

struct sums {
    float g = 0.0f, gx = 0.0f;  // of g = dy * gamma and of g * xhat
};
__device__ __forceinline__ void add(sums& s, float x, float dy, float gamma, float mean, float rstd) {
    const float g = lab_ln_g(dy, gamma);
    s.g += g, s.gx += g * (x - mean) * rstd;
}
__device__ __forceinline__ void add(sums& s, float4 x, float4 dy, float4 gamma, float mean, float rstd) {
    add(s, x.x, dy.x, gamma.x, mean, rstd), add(s, x.y, dy.y, gamma.y, mean, rstd);
    add(s, x.z, dy.z, gamma.z, mean, rstd), add(s, x.w, dy.w, gamma.w, mean, rstd);
}
__device__ __forceinline__ float dx_of(float x, float dy, float gamma, float mean, float rstd, sums m) {
    return lab_ln_dx(x, dy, gamma, mean, rstd, m.g, m.gx);
}
__device__ __forceinline__ float4 dx_of(float4 x, float4 dy, float4 gamma, float mean, float rstd, sums m) {
    return make_float4(dx_of(x.x, dy.x, gamma.x, mean, rstd, m), dx_of(x.y, dy.y, gamma.y, mean, rstd, m),
                       dx_of(x.z, dy.z, gamma.z, mean, rstd, m), dx_of(x.w, dy.w, gamma.w, mean, rstd, m));
}
// The column sums: dgamma's dy * xhat and dbeta's dy, element by element.
__device__ __forceinline__ void fold(float& cg, float& cb, float x, float dy, float mean, float rstd) {
    cg += dy * (x - mean) * rstd, cb += dy;
}
__device__ __forceinline__ void fold(float4& cg, float4& cb, float4 x, float4 dy, float mean, float rstd) {
    fold(cg.x, cb.x, x.x, dy.x, mean, rstd), fold(cg.y, cb.y, x.y, dy.y, mean, rstd);
    fold(cg.z, cb.z, x.z, dy.z, mean, rstd), fold(cg.w, cb.w, x.w, dy.w, mean, rstd);
}
__device__ __forceinline__ void share(float* at, float v) { *at += v; }
__device__ __forceinline__ void share(float* at, float4 v) { at[0] += v.x, at[1] += v.y, at[2] += v.z, at[3] += v.w; }
template <typename V>
__device__ __forceinline__ V zero() { return V{}; }

// The block's slab of rows in V-wide pieces (n a row): K pieces a thread held, the rest streamed.
template <typename V, int K>
__device__ __forceinline__ void slab(const lab_layernorm_bwd_args& p, lab_slab s, int n, float* scratch, float* shared_g, float* shared_b) {
    constexpr int W = sizeof(V) / sizeof(float);
    const int team = threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const V* gamma = lab_ptr<const V>(p.gamma);
    const float inv_cols = 1.0f / p.cols;
    V cg[K], cb[K];
#pragma unroll
    for (int k = 0; k < K; ++k) cg[k] = zero<V>(), cb[k] = zero<V>();
    for (int first = s.first; first < s.last; first += ROWS_PER_BLOCK) {
        const int r = first + team;
        const bool mine = r < s.last;
        const int m = mine ? n : 0;
        const size_t at = (size_t)(mine ? r : 0) * n;
        const V* x = lab_ptr<const V>(p.x) + at;
        const V* dy = lab_ptr<const V>(p.dy) + at;
        V* dx = lab_ptr<V>(p.dx) + at;
        const float mean = mine ? lab_ptr<const float>(p.mean)[r] : 0.0f, rstd = mine ? lab_ptr<const float>(p.rstd)[r] : 0.0f;
        V a[K], b[K];
        sums row;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int j = k * TEAM + t;
            a[k] = j < m ? x[j] : zero<V>();
            b[k] = j < m ? dy[j] : zero<V>();
            if (j < m) add(row, a[k], b[k], gamma[j], mean, rstd);
        }
        for (int j = K * TEAM + t; j < m; j += TEAM) add(row, x[j], dy[j], gamma[j], mean, rstd);
        row.g = lab_team_all<TEAM>(row.g, lab_sum_op{}, scratch) * inv_cols;
        row.gx = lab_team_all<TEAM>(row.gx, lab_sum_op{}, scratch) * inv_cols;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int j = k * TEAM + t;
            if (j < m) dx[j] = dx_of(a[k], b[k], gamma[j], mean, rstd, row), fold(cg[k], cb[k], a[k], b[k], mean, rstd);
        }
        for (int j = K * TEAM + t; j < m; j += TEAM) dx[j] = dx_of(x[j], dy[j], gamma[j], mean, rstd, row);
    }
    // The teams add their column sums in turn, team 0 first, a barrier each: the order is fixed,
    // so dgamma and dbeta come out the same bits from launch to launch (shared-memory atomics
    // would add in whatever order the warps arrive), for ROWS_PER_BLOCK barriers a block.
    for (int turn = 0; turn < ROWS_PER_BLOCK; ++turn) {
        if (team == turn) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int j = k * TEAM + t;
                if (j < n) share(shared_g + W * j, cg[k]), share(shared_b + W * j, cb[k]);
            }
        }
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_X) layernorm_bwd_02_fused(lab_layernorm_bwd_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    __shared__ float shared_g[HELD], shared_b[HELD];
    const lab_slab s = lab_block_slab(p.rows);
    const int held = min(p.cols, HELD);
    for (int j = threadIdx.x; j < held; j += BLOCK_X) shared_g[j] = 0.0f, shared_b[j] = 0.0f;
    __syncthreads();
    if (p.cols % 4 == 0) {
        slab<float4, PER_THREAD / 4>(p, s, p.cols / 4, scratch, shared_g, shared_b);
    } else {
        slab<float, PER_THREAD>(p, s, p.cols, scratch, shared_g, shared_b);
    }
    __syncthreads();
    float* part = lab_ptr<float>(p.partial) + (size_t)blockIdx.x * 2 * p.cols;
    for (int j = threadIdx.x; j < held; j += BLOCK_X) part[j] = shared_g[j], part[p.cols + j] = shared_b[j];
    lab_ln_bwd_column_sums(p, s, held, BLOCK_X);
    lab_grid_sync(lab_ptr<unsigned>(p.barrier));
    lab_ln_bwd_finish(p, BLOCK_X);
}
