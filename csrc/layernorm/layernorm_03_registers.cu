// Technique: the row held in registers (rung 3). Each thread of the team loads its share of the
// first TEAM x PER_THREAD elements once (float4s where the row's length is a multiple of 4) and
// folds them into its Welford state; elements past what the registers hold are streamed into it
// and read again for their outputs. The outputs of the held elements are written from registers:
// one read and one write of a row that fits.
// Teaches: the register file as the row's cache: BERT's rows of 768 fit a warp at 24 floats a
// thread, so the kernel moves the minimum, 8 bytes an element (and gamma and beta, from L2).
// Limits: PER_THREAD registers a thread cap the residency; longer rows read their rest twice.
#include "lab_layernorm.h"
#include "layernorm_row.cuh"
#include "row_geometry.cuh"
#include "row_storage.cuh"

static_assert(PER_THREAD % 4 == 0, "whole float4s a thread");

__device__ __forceinline__ void fold(lab_welford& w, float v) { w.add(v); }
__device__ __forceinline__ void fold(lab_welford& w, float4 v) { w.add(v.x), w.add(v.y), w.add(v.z), w.add(v.w); }
__device__ __forceinline__ float affine(float v, float mean, float rstd, float g, float b) { return lab_affine(v, mean, rstd, g, b); }
__device__ __forceinline__ float4 affine(float4 v, float mean, float rstd, float4 g, float4 b) {
    return make_float4(lab_affine(v.x, mean, rstd, g.x, b.x), lab_affine(v.y, mean, rstd, g.y, b.y), lab_affine(v.z, mean, rstd, g.z, b.z),
                       lab_affine(v.w, mean, rstd, g.w, b.w));
}

// One row in V-wide pieces (n of them): K pieces a thread held, the rest streamed.
template <typename V, int K>
__device__ __forceinline__ void row(const lab_mem<V>* x, lab_mem<V>* y, const lab_mem<V>* g, const lab_mem<V>* b, int n, int cols, float eps, int t,
                                    float* scratch) {
    V v[K];
    lab_welford w;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = k * TEAM + t;
        if (j < n) v[k] = lab_load(x + j), fold(w, v[k]);
    }
    for (int j = K * TEAM + t; j < n; j += TEAM) fold(w, lab_load(x + j));
    w = lab_team_welford<TEAM>(w, scratch);
    const float rstd = rsqrtf(__fdividef(w.m2, cols) + eps);
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int j = k * TEAM + t;
        if (j < n) {
            const V out = affine(v[k], w.mean, rstd, lab_load(g + j), lab_load(b + j));
            lab_store(y + j, out);
        }
    }
    for (int j = K * TEAM + t; j < n; j += TEAM) {
        const V out = affine(lab_load(x + j), w.mean, rstd, lab_load(g + j), lab_load(b + j));
        lab_store(y + j, out);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_X) layernorm_03_registers(lab_layernorm_args p) {
    __shared__ float scratch[3 * (BLOCK_X / 32)];
    const int r = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const int cols = r < p.rows ? p.cols : 0;
    const size_t at = (size_t)r * p.cols;
    if (p.cols % 4 == 0) {
        row<float4, PER_THREAD / 4>(lab_ptr<const lab_elem4>(p.src + sizeof(lab_elem) * at), lab_ptr<lab_elem4>(p.dst + sizeof(lab_elem) * at),
                                    lab_ptr<const lab_elem4>(p.gamma), lab_ptr<const lab_elem4>(p.beta), cols / 4, p.cols, p.eps, t, scratch);
    } else {
        row<float, PER_THREAD>(lab_ptr<const lab_elem>(p.src) + at, lab_ptr<lab_elem>(p.dst) + at, lab_ptr<const lab_elem>(p.gamma),
                               lab_ptr<const lab_elem>(p.beta), cols, p.cols, p.eps, t, scratch);
    }
}
