// Technique: two passes for the statistics (rung 1): a team of warps a row (TEAM = BLOCK_X /
// ROWS_PER_BLOCK threads) sums the row, shifted by its first element, for its mean; then sums
// the squared deviations from that mean for its variance; then writes each element normalised,
// scaled and shifted.
// Teaches: the textbook two-pass variance, which never forms the large sums of squares that
// E[x^2] - E[x]^2 cancels; and the shift, which makes the mean of a constant row exact, where a
// plain fp32 sum's rounding (n additions of c need not give n x c) would be magnified by
// 1 / sqrt(eps) = 316 in every output of a row whose variance is 0.
// Limits: three reads of the row, the second and third from L1 or L2 if it stayed there; rung 2
// needs two.
#include "lab_layernorm.h"
#include "layernorm_row.cuh"
#include "row_geometry.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X) layernorm_01_two_pass(lab_layernorm_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    // A team past the last row reads nothing but still meets the others (lab_team_all).
    const int cols = row < p.rows ? p.cols : 0;
    const float* x = lab_ptr<const float>(p.src) + (size_t)row * p.cols;
    float* y = lab_ptr<float>(p.dst) + (size_t)row * p.cols;
    const float *g = lab_ptr<const float>(p.gamma), *b = lab_ptr<const float>(p.beta);
    const float x0 = cols > 0 ? x[0] : 0.0f;
    float s = 0.0f;
    for (int j = t; j < cols; j += TEAM) s += x[j] - x0;
    const float mean = x0 + __fdividef(lab_team_all<TEAM>(s, lab_sum_op{}, scratch), p.cols);
    float q = 0.0f;
    for (int j = t; j < cols; j += TEAM) q += (x[j] - mean) * (x[j] - mean);
    const float rstd = rsqrtf(__fdividef(lab_team_all<TEAM>(q, lab_sum_op{}, scratch), p.cols) + p.eps);
    for (int j = t; j < cols; j += TEAM) y[j] = lab_affine(x[j], mean, rstd, g[j], b[j]);
}
