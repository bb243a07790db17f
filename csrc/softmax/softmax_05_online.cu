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
#include "row_storage.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_05_online(lab_softmax_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const int cols = row < p.rows ? p.cols : 0;
    const lab_elem* x = lab_ptr<const lab_elem>(p.src) + (size_t)row * p.cols;
    lab_elem* y = lab_ptr<lab_elem>(p.dst) + (size_t)row * p.cols;
    const bool vec = p.cols % 4 == 0;
    lab_online o;
    if (vec) {
        const lab_elem4* x4 = reinterpret_cast<const lab_elem4*>(x);
        for (int j = t; j < cols / 4; j += TEAM) {
            const float4 v = lab_load(x4 + j);
            o.add(v.x), o.add(v.y), o.add(v.z), o.add(v.w);
        }
    } else {
        for (int j = t; j < cols; j += TEAM) o.add(lab_load(x + j));
    }
    const float m = lab_team_all<TEAM>(o.m, lab_max_op{}, scratch);
    const float inv = lab_softmax_inv(lab_team_all<TEAM>(o.s * lab_softmax_exp(o.m, m), lab_sum_op{}, scratch));
    if (vec) {
        const lab_elem4* x4 = reinterpret_cast<const lab_elem4*>(x);
        lab_elem4* y4 = reinterpret_cast<lab_elem4*>(y);
        for (int j = t; j < cols / 4; j += TEAM) {
            const float4 v = lab_load(x4 + j);
            lab_store(y4 + j, make_float4(lab_softmax_exp(v.x, m) * inv, lab_softmax_exp(v.y, m) * inv, lab_softmax_exp(v.z, m) * inv,
                                          lab_softmax_exp(v.w, m) * inv));
        }
    } else {
        for (int j = t; j < cols; j += TEAM) {
            const float v = lab_softmax_exp(lab_load(x + j), m) * inv;
            lab_store(y + j, v);
        }
    }
}
