// Technique: none: rung 8 slowed on purpose, for the test that `compare` catches a regression.
// Teaches: what a regression gate must catch. SLOWDOWN_PCT blocks in every hundred compute their
//   tile twice (all of them at 100): about that much more work, the same output.
// Limits: test-only; the GPU test renames it to rung 8 in a copy of the kernel set, as a rebuild
//   of rung 8 with the define would leave it.
#include "sgemm_double_buffer.cuh"

#define THREADS (BLOCK_X)
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_08_test_slowdown(lab_gemm_f32_args p) {
    const unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    const int times = (block % 100u) < SLOWDOWN_PCT ? 2 : 1;
    for (int t = 0; t < times; ++t) {
        lab_sgemm_double_buffered<THREADS, BM, BN, BK, WM, WN, WNITER, TM, TN>(p, blockIdx.y, blockIdx.x);
    }
}
