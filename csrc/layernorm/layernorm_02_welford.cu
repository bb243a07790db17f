// Technique: Welford's single pass for the statistics (rung 2): each thread keeps a running
// count, mean and sum of squared deviations (lab_welford) over its share of the row, with float4
// loads where the row's length is a multiple of 4; the team merges the states (lab_team_welford),
// and a second pass writes the outputs, the affine step fused into it.
// Teaches: a one-pass variance that stays accurate, and merging partial statistics, the step
// PyTorch's and Apex's layer norms are built on.
// Limits: the row is still read twice; rung 3 holds it in registers.
#include "lab_layernorm.h"
#include "layernorm_row.cuh"
#include "row_geometry.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X) layernorm_02_welford(lab_layernorm_args p) {
    __shared__ float scratch[3 * (BLOCK_X / 32)];
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const int cols = row < p.rows ? p.cols : 0;
    const float* x = lab_ptr<const float>(p.src) + (size_t)row * p.cols;
    float* y = lab_ptr<float>(p.dst) + (size_t)row * p.cols;
    const float *g = lab_ptr<const float>(p.gamma), *b = lab_ptr<const float>(p.beta);
    const bool vec = p.cols % 4 == 0;
    lab_welford w;
    if (vec) {
        for (int j = t; j < cols / 4; j += TEAM) {
            const float4 v = reinterpret_cast<const float4*>(x)[j];
            w.add(v.x), w.add(v.y), w.add(v.z), w.add(v.w);
        }
    } else {
        for (int j = t; j < cols; j += TEAM) w.add(x[j]);
    }
    w = lab_team_welford<TEAM>(w, scratch);
    const float rstd = rsqrtf(__fdividef(w.m2, p.cols) + p.eps);
    if (vec) {
        for (int j = t; j < cols / 4; j += TEAM) {
            const float4 v = reinterpret_cast<const float4*>(x)[j], gv = reinterpret_cast<const float4*>(g)[j],
                         bv = reinterpret_cast<const float4*>(b)[j];
            reinterpret_cast<float4*>(y)[j] = make_float4(lab_affine(v.x, w.mean, rstd, gv.x, bv.x), lab_affine(v.y, w.mean, rstd, gv.y, bv.y),
                                                          lab_affine(v.z, w.mean, rstd, gv.z, bv.z), lab_affine(v.w, w.mean, rstd, gv.w, bv.w));
        }
    } else {
        for (int j = t; j < cols; j += TEAM) y[j] = lab_affine(x[j], w.mean, rstd, g[j], b[j]);
    }
}
