// Technique: the layer norm's backward pass in three phases of one kernel (rung 1). A team of
// warps a row sums g = dy * gamma and g * xhat over its row (lab_team_all) and writes dx, reading
// x and dy a second time; then each block sums dy * xhat and dy down every column of its slab of
// rows, reading them a third time, and the grid meets at a barrier to add the slabs' sums into
// dgamma and dbeta (layernorm_bwd.cuh).
// Teaches: a backward pass has two reductions running across each other, over a row for dx and
// over the rows for gamma's and beta's gradients; the second cannot finish inside one block.
// PyTorch runs the two as separate kernels.
// Limits: x and dy are read three times; the later reads find a slab in L2 only while the
// grid's slabs fit there. Rung 2 takes all three from one read.
#include "layernorm_bwd.cuh"
#include "row_team.cuh"
#include "row_geometry.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_X) layernorm_bwd_01_two_pass(lab_layernorm_bwd_args p) {
    __shared__ float scratch[BLOCK_X / 32];
    const lab_slab s = lab_block_slab(p.rows);
    const int team = threadIdx.x / TEAM, t = threadIdx.x % TEAM;
    const float* gamma = lab_ptr<const float>(p.gamma);
    const float inv_cols = 1.0f / p.cols;
    // Every team makes the same trips (the team sums meet at block barriers); a team past the
    // slab's last row reads nothing.
    for (int first = s.first; first < s.last; first += ROWS_PER_BLOCK) {
        const int r = first + team;
        const bool mine = r < s.last;
        const int cols = mine ? p.cols : 0;
        const size_t at = (size_t)(mine ? r : 0) * p.cols;
        const float* x = lab_ptr<const float>(p.x) + at;
        const float* dy = lab_ptr<const float>(p.dy) + at;
        float* dx = lab_ptr<float>(p.dx) + at;
        const float mean = mine ? lab_ptr<const float>(p.mean)[r] : 0.0f, rstd = mine ? lab_ptr<const float>(p.rstd)[r] : 0.0f;
        float sg = 0.0f, sgx = 0.0f;
        for (int j = t; j < cols; j += TEAM) {
            const float g = lab_ln_g(dy[j], gamma[j]);
            sg += g, sgx += g * (x[j] - mean) * rstd;
        }
        sg = lab_team_all<TEAM>(sg, lab_sum_op{}, scratch) * inv_cols;
        sgx = lab_team_all<TEAM>(sgx, lab_sum_op{}, scratch) * inv_cols;
        for (int j = t; j < cols; j += TEAM) dx[j] = lab_ln_dx(x[j], dy[j], gamma[j], mean, rstd, sg, sgx);
    }
    lab_ln_bwd_column_sums(p, s, 0, BLOCK_X);
    lab_grid_sync(lab_ptr<unsigned>(p.barrier));
    lab_ln_bwd_finish(p, BLOCK_X);
}
