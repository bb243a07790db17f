// Technique: the online softmax (rung 5; Milakov and Gimelshein, 2018): one pass keeps a
// running max and a sum rescaled whenever the max grows (lab_online), so the row is read twice
// (statistics, then outputs) instead of three times. The team then agrees on the max and sums
// each thread's share rescaled to it.
// Teaches: trading an exp per element (the rescale) for a pass over memory: a good trade in a
// memory-bound kernel, and the step that flash attention builds on.
// Limits: the row is still read twice; for a row that fits in the team's registers, rung 6 reads
// it once.
#include "lab_softmax.h"
#include "softmax_row.cuh"
#include "row_geometry.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_05_online(lab_softmax_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const int cols = row < p.rows ? p.cols : 0;
    const float* x = lab_ptr<const float>(p.src) + (size_t)row * p.cols;
    float* y = lab_ptr<float>(p.dst) + (size_t)row * p.cols;
    const bool vec = p.cols % 4 == 0;
    lab_online o;
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        for (int j = t; j < cols / 4; j += TEAM) {
            const float4 v = x4[j];
            o.add(v.x), o.add(v.y), o.add(v.z), o.add(v.w);
        }
    } else {
        for (int j = t; j < cols; j += TEAM) o.add(x[j]);
    }
    const float m = lab_team_all<TEAM>(o.m, lab_max_op{}, scratch);
    const float inv = lab_softmax_inv(lab_team_all<TEAM>(o.s * lab_softmax_exp(o.m, m), lab_sum_op{}, scratch));
    if (vec) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* y4 = reinterpret_cast<float4*>(y);
        for (int j = t; j < cols / 4; j += TEAM) {
            const float4 v = x4[j];
            y4[j] = make_float4(lab_softmax_exp(v.x, m) * inv, lab_softmax_exp(v.y, m) * inv, lab_softmax_exp(v.z, m) * inv,
                                lab_softmax_exp(v.w, m) * inv);
        }
    } else {
        for (int j = t; j < cols; j += TEAM) y[j] = lab_softmax_exp(x[j], m) * inv;
    }
}
