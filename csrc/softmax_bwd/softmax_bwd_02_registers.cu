// Technique: the row held in registers (rung 2). Each thread of the team loads its share of the
// first TEAM x PER_THREAD elements of y and dy once, in float4s where the row allows, sums
// dy * y, and writes dx from the registers once the team agrees on the sum: one read of each
// input and one write. Elements past what the registers hold are read again, as rung 1 does.
// Teaches: the forward's register-resident row (softmax_06) carries over to the backward pass;
// BERT's rows of 512 fit a warp at 16 elements a thread, 32 registers for y and dy.
// Limits: twice the registers of the forward for the same row; rows much longer than
// TEAM x PER_THREAD fall back to two reads.
#include "lab_softmax_bwd.h"
#include "row_team.cuh"
#include "row_geometry.cuh"

static_assert(PER_THREAD % 4 == 0, "whole float4s a thread");

__device__ __forceinline__ float dot(float a, float b) { return a * b; }
__device__ __forceinline__ float dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
__device__ __forceinline__ float grad(float y, float dy, float s) { return y * (dy - s); }
__device__ __forceinline__ float4 grad(float4 y, float4 dy, float s) {
    return make_float4(y.x * (dy.x - s), y.y * (dy.y - s), y.z * (dy.z - s), y.w * (dy.w - s));
}
template <typename V>
__device__ __forceinline__ V zero();
template <>
__device__ __forceinline__ float zero<float>() { return 0.0f; }
template <>
__device__ __forceinline__ float4 zero<float4>() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }

// One row in V-wide pieces (n of them): K pieces a thread held, the rest streamed.
template <typename V, int K>
__device__ __forceinline__ void row(const V* y, const V* dy, V* dx, int n, int t, float* scratch) {
    V a[K], b[K];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = k * TEAM + t;
        a[k] = j < n ? y[j] : zero<V>();
        b[k] = j < n ? dy[j] : zero<V>();
        s += dot(a[k], b[k]);
    }
    for (int j = K * TEAM + t; j < n; j += TEAM) s += dot(y[j], dy[j]);
    s = lab_team_all<TEAM>(s, lab_sum_op{}, scratch);
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = k * TEAM + t;
        if (j < n) dx[j] = grad(a[k], b[k], s);
    }
    for (int j = K * TEAM + t; j < n; j += TEAM) dx[j] = grad(y[j], dy[j], s);
}

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_bwd_02_registers(lab_softmax_bwd_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const int r = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const int cols = r < p.rows ? p.cols : 0;
    const size_t at = (size_t)r * p.cols;
    if (p.cols % 4 == 0) {
        row<float4, PER_THREAD / 4>(lab_ptr<const float4>(p.y + 4 * at), lab_ptr<const float4>(p.dy + 4 * at),
                                    lab_ptr<float4>(p.dx + 4 * at), cols / 4, t, scratch);
    } else {
        row<float, PER_THREAD>(lab_ptr<const float>(p.y) + at, lab_ptr<const float>(p.dy) + at, lab_ptr<float>(p.dx) + at, cols, t,
                               scratch);
    }
}
