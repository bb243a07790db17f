// Technique: 1-D register blocking (rung 4). Each thread computes TM outputs of one column of C,
//   keeping them in registers; one B value read from shared memory feeds TM FMAs.
// Teaches: arithmetic intensity per thread. Shared-memory loads per FMA drop from 2 to about
//   (1 + TM) / TM, so the FMA units, not shared memory, start to set the pace.
// Limits: A is still read once per FMA from shared memory; sgemm_05 blocks in two dimensions.
#include "lab_gemm.h"
#include "lab_device.cuh"

#define THREADS (BLOCK_X)
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");
static_assert(BM * BN / TM == THREADS, "each thread owns TM outputs of the BM x BN tile");
static_assert(BM * BK == THREADS && BK * BN == THREADS, "one A and one B element per thread per tile");

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_04_1d_blocktiling(lab_gemm_f32_args p) {
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    float* C = lab_ptr<float>(p.c);
    const int tid = threadIdx.x;
    const int bRow = blockIdx.y * BM, bCol = blockIdx.x * BN;
    const int threadCol = tid % BN, threadRow = tid / BN;
    const int aRow = tid / BK, aCol = tid % BK;
    const int bRowIn = tid / BN, bColIn = tid % BN;

    float acc[TM] = {0.0f};
    for (int k0 = 0; k0 < p.k; k0 += BK) {
        const int ar = bRow + aRow, ac = k0 + aCol;
        As[aRow * BK + aCol] = (ar < p.m && ac < p.k) ? A[(size_t)ar * p.lda + ac] : 0.0f;
        const int br = k0 + bRowIn, bc = bCol + bColIn;
        Bs[bRowIn * BN + bColIn] = (br < p.k && bc < p.n) ? B[(size_t)br * p.ldb + bc] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int d = 0; d < BK; ++d) {
            const float b = Bs[d * BN + threadCol];
#pragma unroll
            for (int r = 0; r < TM; ++r) acc[r] += As[(threadRow * TM + r) * BK + d] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int row = bRow + threadRow * TM + r, col = bCol + threadCol;
        if (row < p.m && col < p.n) {
            float* c = &C[(size_t)row * p.ldc + col];
            *c = lab_axpby(p.alpha, acc[r], p.beta, c);
        }
    }
}
