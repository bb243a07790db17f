// Technique: none: rung 8 slowed on purpose, for the test that `compare` catches a regression.
// Teaches: what a regression gate must catch. Each thread, its tile done, waits SLOWDOWN_PCT
//   percent of the time the tile took (on the GPU's global timer), so every block, and the
//   kernel, takes about that much longer; the output is rung 8's.
// Limits: test-only; the GPU test renames it to rung 8 in a copy of the kernel set, as a rebuild
//   of rung 8 with the define would leave it.
#include "lab_gemm.h"
#include "sgemm_double_buffer.cuh"

#define THREADS (BLOCK_X)
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");

__device__ __forceinline__ unsigned long long lab_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_08_test_slowdown(lab_gemm_f32_args p) {
    const unsigned long long start = lab_now();
    lab_sgemm_double_buffered<THREADS, BM, BN, BK, WM, WN, WNITER, TM, TN>(p, blockIdx.y, blockIdx.x);
    const unsigned long long took = lab_now() - start;
    const unsigned long long until = start + took + took * SLOWDOWN_PCT / 100;
    while (lab_now() < until) {
        __nanosleep(256);
    }
}
