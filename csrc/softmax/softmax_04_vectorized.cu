// Technique: rung 3 with 16-byte loads and stores (rung 4): where a row's length is a multiple
// of 4 its start is 16-byte aligned (cudaMalloc aligns the base to 256), and each thread moves
// float4s; other lengths take rung 3's 4-byte path.
// Teaches: fewer, wider memory instructions: a quarter of the load instructions, and more bytes
// in flight per thread for the same registers.
// Limits: three passes still read the row three times (once from DRAM, twice from L1 or L2 if
// it stayed there); rung 5 needs two.
#include "lab_softmax.h"
#include "softmax_row.cuh"
#include "row_geometry.cuh"

__device__ __forceinline__ float max4(float4 v) { return fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)); }

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_04_vectorized(lab_softmax_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const int cols = row < p.rows ? p.cols : 0;
    const float* x = lab_ptr<const float>(p.src) + (size_t)row * p.cols;
    float* y = lab_ptr<float>(p.dst) + (size_t)row * p.cols;
    float m = -LAB_INF, s = 0.0f;
    if (p.cols % 4 == 0) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* y4 = reinterpret_cast<float4*>(y);
        const int n4 = cols / 4;
        for (int j = t; j < n4; j += TEAM) m = fmaxf(m, max4(x4[j]));
        m = lab_team_all<TEAM>(m, lab_max_op{}, scratch);
        for (int j = t; j < n4; j += TEAM) {
            const float4 v = x4[j];
            s += lab_softmax_exp(v.x, m) + lab_softmax_exp(v.y, m) + lab_softmax_exp(v.z, m) + lab_softmax_exp(v.w, m);
        }
        const float inv = lab_softmax_inv(lab_team_all<TEAM>(s, lab_sum_op{}, scratch));
        for (int j = t; j < n4; j += TEAM) {
            const float4 v = x4[j];
            y4[j] = make_float4(lab_softmax_exp(v.x, m) * inv, lab_softmax_exp(v.y, m) * inv, lab_softmax_exp(v.z, m) * inv,
                                lab_softmax_exp(v.w, m) * inv);
        }
    } else {
        for (int j = t; j < cols; j += TEAM) m = fmaxf(m, x[j]);
        m = lab_team_all<TEAM>(m, lab_max_op{}, scratch);
        for (int j = t; j < cols; j += TEAM) s += lab_softmax_exp(x[j], m);
        const float inv = lab_softmax_inv(lab_team_all<TEAM>(s, lab_sum_op{}, scratch));
        for (int j = t; j < cols; j += TEAM) y[j] = lab_softmax_exp(x[j], m) * inv;
    }
}
