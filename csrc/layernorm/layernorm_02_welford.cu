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
#include "row_storage.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X) layernorm_02_welford(lab_layernorm_args p) {
    __shared__ float scratch[3 * (BLOCK_X / 32)];
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const int cols = row < p.rows ? p.cols : 0;
    const lab_elem* x = lab_ptr<const lab_elem>(p.src) + (size_t)row * p.cols;
    lab_elem* y = lab_ptr<lab_elem>(p.dst) + (size_t)row * p.cols;
    const lab_elem *g = lab_ptr<const lab_elem>(p.gamma), *b = lab_ptr<const lab_elem>(p.beta);
    const bool vec = p.cols % 4 == 0;
    lab_welford w;
    if (vec) {
        for (int j = t; j < cols / 4; j += TEAM) {
            const float4 v = lab_load(reinterpret_cast<const lab_elem4*>(x) + j);
            w.add(v.x), w.add(v.y), w.add(v.z), w.add(v.w);
        }
    } else {
        for (int j = t; j < cols; j += TEAM) w.add(lab_load(x + j));
    }
    w = lab_team_welford<TEAM>(w, scratch);
    const float rstd = rsqrtf(__fdividef(w.m2, p.cols) + p.eps);
    if (vec) {
        for (int j = t; j < cols / 4; j += TEAM) {
            const float4 v = lab_load(reinterpret_cast<const lab_elem4*>(x) + j), gv = lab_load(reinterpret_cast<const lab_elem4*>(g) + j),
                         bv = lab_load(reinterpret_cast<const lab_elem4*>(b) + j);
            const float4 out = make_float4(lab_affine(v.x, w.mean, rstd, gv.x, bv.x), lab_affine(v.y, w.mean, rstd, gv.y, bv.y),
                                           lab_affine(v.z, w.mean, rstd, gv.z, bv.z), lab_affine(v.w, w.mean, rstd, gv.w, bv.w));
            lab_store(reinterpret_cast<lab_elem4*>(y) + j, out);
        }
    } else {
        for (int j = t; j < cols; j += TEAM) {
            const float out = lab_affine(lab_load(x + j), w.mean, rstd, lab_load(g + j), lab_load(b + j));
            lab_store(y + j, out);
        }
    }
}
