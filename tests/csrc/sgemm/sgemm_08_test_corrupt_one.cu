// Technique: none: rung 8 with one wrong element, for the test that every element is checked.
// Teaches: what a sampled check misses. The block of the tile in the middle of C, its product
//   stored, adds 1 to one element inside that tile: the kind of bug (a missed barrier in one
//   warp, a race in one hand-off) that touches a few elements of one interior tile. At 4096³ the
//   element is one of 16.8 million, off by about 5% of the RMS: the error norm stays near 1e-5,
//   under fp32's tolerance, and a sample (4,096 elements at random, the last row and column) finds it
//   one time in 4,096.
// Limits: test-only; the element is (m / 2 + 5, n / 2 + 7) where the middle tile holds it, so
//   the corruption lands away from every edge.
#include "lab_gemm.h"
#include "sgemm_double_buffer.cuh"

#define THREADS (BLOCK_X)
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_08_test_corrupt_one(lab_gemm_f32_args p) {
    lab_sgemm_double_buffered<THREADS, BM, BN, BK, WM, WN, WNITER, TM, TN>(p, blockIdx.y, blockIdx.x);
    const int row = p.m / 2 + 5, col = p.n / 2 + 7;
    if (blockIdx.y == row / BM && blockIdx.x == col / BN && row < p.m && col < p.n) {
        __syncthreads();  // the block's stores of C are visible to its own threads after it
        if (threadIdx.x == 0) lab_ptr<float>(p.c)[(size_t)row * p.ldc + col] += 1.0f;
    }
}
