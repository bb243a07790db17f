// Technique: the softmax's backward pass with a team of warps a row (rung 1): the team sums
// dy * y with butterfly shuffles (lab_team_all), then writes dx = y (dy - sum), reading y and dy
// a second time.
// Teaches: the backward pass is the forward's shape again, a reduction over the row and then a
// map over it; it moves three matrices (y and dy in, dx out) where the forward moves two.
// Limits: each row is read twice; the second read finds short rows in L2, long ones in DRAM.
// Rung 2 holds the row in registers.
#include "lab_softmax_bwd.h"
#include "row_team.cuh"
#include "row_geometry.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_bwd_01_two_pass(lab_softmax_bwd_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    // A team past the last row reads nothing but still meets the others (lab_team_all).
    const int cols = row < p.rows ? p.cols : 0;
    const size_t at = (size_t)row * p.cols;
    const float* y = lab_ptr<const float>(p.y) + at;
    const float* dy = lab_ptr<const float>(p.dy) + at;
    float* dx = lab_ptr<float>(p.dx) + at;
    float s = 0.0f;
    for (int j = t; j < cols; j += TEAM) s += dy[j] * y[j];
    s = lab_team_all<TEAM>(s, lab_sum_op{}, scratch);
    for (int j = t; j < cols; j += TEAM) dx[j] = y[j] * (dy[j] - s);
}
