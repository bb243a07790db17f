// Technique: WMMA, one warp per 16 x 16 tile of C, fragments loaded straight from global memory
//   (rung 1; Volta and later).
// Teaches: the Tensor Core's unit of work. A warp multiplies 16x16x16 fp16 fragments into fp32
//   accumulators with one instruction; everything else is feeding it.
// Limits: every fragment is read from global memory (no reuse between warps beyond what L1 and
//   L2 catch), so the kernel is bound by memory instructions long before the Tensor Cores; m, n
//   and k must be multiples of 16 (the fragment), declared in the manifest.
#include "lab_gemm.h"
#include "wmma_ptx.cuh"

static_assert(BLOCK_X == 32 * WARPS_N && BLOCK_Y == WARPS_M && BLOCK_Z == 1, "one warp per tile, WARPS_M x WARPS_N warps");
static_assert(BM == 16 * WARPS_M && BN == 16 * WARPS_N, "a block covers its warps' tiles");

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) fp16_01_wmma_naive(lab_gemm_tc_args p) {
    const unsigned short* A = lab_ptr<const unsigned short>(p.a);
    const unsigned short* B = lab_ptr<const unsigned short>(p.b);
    float* C = lab_ptr<float>(p.c);
    const int row = blockIdx.y * BM + threadIdx.y * 16;
    const int col = blockIdx.x * BN + (threadIdx.x / 32) * 16;
    if (row >= p.m || col >= p.n) return;  // whole warps only: the test is uniform in a warp
    lab_frag_c acc;
    lab_fill(acc, 0.0f);
    for (int k0 = 0; k0 < p.k; k0 += 16) {
        lab_frag_a a;
        lab_frag_b b;
        lab_load_a_global(a, A + (size_t)row * p.lda + k0, p.lda);
        lab_load_b_global(b, B + (size_t)k0 * p.ldb + col, p.ldb);
        lab_wmma(acc, a, b);
    }
    lab_store_c_global(C + (size_t)row * p.ldc + col, acc, p.ldc);
}
