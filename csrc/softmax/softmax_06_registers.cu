// Technique: the row held in registers (rung 6). Each thread of the team loads its share of the
// first TEAM x PER_THREAD elements once, keeps exp(x - its own max) in registers, and writes the
// outputs from them after the team agrees on the max and the sum: one read and one write of the
// row, one exponential an element. Elements past what the registers hold are streamed as
// rung 5 streams them (lab_online) and read again for their outputs.
// Teaches: the register file as the row's cache: BERT's rows of 512 fit a warp at 16 floats a
// thread, so the kernel moves the minimum, 8 bytes an element, and no exp is taken twice.
// Limits: PER_THREAD registers a thread cap the residency; rows much longer than TEAM x
// PER_THREAD fall back to two reads.
#include "lab_softmax.h"
#include "softmax_row.cuh"
#include "row_geometry.cuh"
#include "row_storage.cuh"

static_assert(PER_THREAD % 4 == 0, "whole float4s a thread");

__device__ __forceinline__ float lanes_max(float v) { return v; }
__device__ __forceinline__ float lanes_max(float4 v) { return fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)); }
__device__ __forceinline__ float lanes_exp(float& v, float m) { return v = lab_softmax_exp(v, m); }
__device__ __forceinline__ float lanes_exp(float4& v, float m) {
    v = make_float4(lab_softmax_exp(v.x, m), lab_softmax_exp(v.y, m), lab_softmax_exp(v.z, m), lab_softmax_exp(v.w, m));
    return v.x + v.y + v.z + v.w;
}
__device__ __forceinline__ void lanes_add(lab_online& o, float v) { o.add(v); }
__device__ __forceinline__ void lanes_add(lab_online& o, float4 v) { o.add(v.x), o.add(v.y), o.add(v.z), o.add(v.w); }
__device__ __forceinline__ float scaled(float v, float f) { return v * f; }
__device__ __forceinline__ float4 scaled(float4 v, float f) { return make_float4(v.x * f, v.y * f, v.z * f, v.w * f); }
__device__ __forceinline__ float scaled_exp(float x, float m, float f) { return lab_softmax_exp(x, m) * f; }
__device__ __forceinline__ float4 scaled_exp(float4 x, float m, float f) {
    return make_float4(lab_softmax_exp(x.x, m) * f, lab_softmax_exp(x.y, m) * f, lab_softmax_exp(x.z, m) * f, lab_softmax_exp(x.w, m) * f);
}
template <typename V>
__device__ __forceinline__ V padding();
template <>
__device__ __forceinline__ float padding<float>() { return -LAB_INF; }
template <>
__device__ __forceinline__ float4 padding<float4>() { return make_float4(-LAB_INF, -LAB_INF, -LAB_INF, -LAB_INF); }

// One row in V-wide pieces (n of them): K pieces a thread held, the rest streamed.
template <typename V, int K>
__device__ __forceinline__ void row(const lab_mem<V>* x, lab_mem<V>* y, int n, int t, float* scratch) {
    V v[K];
    float m_held = -LAB_INF;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = k * TEAM + t;
        v[k] = j < n ? lab_load(x + j) : padding<V>();  // -inf adds nothing to the sum
        m_held = fmaxf(m_held, lanes_max(v[k]));
    }
    lab_online o{m_held, 0.0f};
#pragma unroll
    for (int k = 0; k < K; ++k) o.s += lanes_exp(v[k], m_held);  // v[k] now holds exp(x - m_held)
    for (int j = K * TEAM + t; j < n; j += TEAM) lanes_add(o, lab_load(x + j));
    const float m = lab_team_all<TEAM>(o.m, lab_max_op{}, scratch);
    const float inv = lab_softmax_inv(lab_team_all<TEAM>(o.s * lab_softmax_exp(o.m, m), lab_sum_op{}, scratch));
    const float f = lab_softmax_exp(m_held, m) * inv;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = k * TEAM + t;
        if (j < n) lab_store(y + j, scaled(v[k], f));
    }
    for (int j = K * TEAM + t; j < n; j += TEAM) {
        const V out = scaled_exp(lab_load(x + j), m, inv);
        lab_store(y + j, out);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_06_registers(lab_softmax_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const int r = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const int cols = r < p.rows ? p.cols : 0;
    const size_t at = (size_t)r * p.cols;
    if (p.cols % 4 == 0) {
        row<float4, PER_THREAD / 4>(lab_ptr<const lab_elem4>(p.src + sizeof(lab_elem) * at), lab_ptr<lab_elem4>(p.dst + sizeof(lab_elem) * at), cols / 4,
                                    t, scratch);
    } else {
        row<float, PER_THREAD>(lab_ptr<const lab_elem>(p.src) + at, lab_ptr<lab_elem>(p.dst) + at, cols, t, scratch);
    }
}
