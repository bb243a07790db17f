// Technique: a team of warps a row (rung 3), TEAM = BLOCK_X / ROWS_PER_BLOCK threads, reducing
// in registers with butterfly shuffles (lab_team_all): a warp needs no barrier, and a team of
// several warps meets once in shared memory.
// Teaches: sizing the team to the row. A warp suits BERT's rows of 512 (16 elements a thread);
// a wide row wants the whole block. The team is a compile-time constant, so the tuner picks it.
// Limits: still three passes over the row and 4-byte loads: rung 4 loads 16 bytes at a time.
#include "lab_softmax.h"
#include "softmax_row.cuh"
#include "row_geometry.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_03_warp_shuffle(lab_softmax_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    // A team past the last row reads nothing but still meets the others (lab_team_all).
    const int cols = row < p.rows ? p.cols : 0;
    const float* x = lab_ptr<const float>(p.src) + (size_t)row * p.cols;
    float* y = lab_ptr<float>(p.dst) + (size_t)row * p.cols;
    float m = -LAB_INF;
    for (int j = t; j < cols; j += TEAM) m = fmaxf(m, x[j]);
    m = lab_team_all<TEAM>(m, lab_max_op{}, scratch);
    float s = 0.0f;
    for (int j = t; j < cols; j += TEAM) s += lab_softmax_exp(x[j], m);
    const float inv = lab_softmax_inv(lab_team_all<TEAM>(s, lab_sum_op{}, scratch));
    for (int j = t; j < cols; j += TEAM) y[j] = lab_softmax_exp(x[j], m) * inv;
}
