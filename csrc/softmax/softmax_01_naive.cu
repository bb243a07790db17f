// Technique: one thread a row (rung 1), three passes over it: its max, the sum of exp(x - max),
// then each output exp(x - max) / sum.
// Teaches: subtracting the max, which keeps exp from overflowing (a row offset by 10^4 gives inf
// without it), and why a thread a row is slow: neighbouring threads read addresses a row apart,
// so a warp's 32 loads touch 32 lines and each load uses 4 bytes of its 32-byte sector.
// Limits: rows / BLOCK_X blocks, so a few thousand rows leave most of the GPU idle; rung 2 gives
// a row a block, whose threads also split the row's sum into short ones.
#include "lab_softmax.h"
#include "softmax_row.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");  // a thread a row: the entry's constraint

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_01_naive(lab_softmax_args p) {
    const int row = blockIdx.x * BLOCK_X + threadIdx.x;
    if (row >= p.rows) return;
    const float* x = lab_ptr<const float>(p.src) + (size_t)row * p.cols;
    float* y = lab_ptr<float>(p.dst) + (size_t)row * p.cols;
    float m = -LAB_INF;
    for (int j = 0; j < p.cols; ++j) m = fmaxf(m, x[j]);
    // The thread sums the whole row alone: over 65,536 terms a plain fp32 sum drifts about 6e-5
    // from the exact one, past fp32's tolerance; Kahan's compensation c carries what each
    // addition rounds away (nvcc keeps the order: no fast-math reassociation).
    float s = 0.0f, c = 0.0f;
    for (int j = 0; j < p.cols; ++j) {
        const float y = lab_softmax_exp(x[j], m) - c, t = s + y;
        c = (t - s) - y;
        s = t;
    }
    const float inv = lab_softmax_inv(s);
    for (int j = 0; j < p.cols; ++j) y[j] = lab_softmax_exp(x[j], m) * inv;
}
