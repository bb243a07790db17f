// Technique: 2-D register blocking (rung 5). Each thread computes a TM x TN sub-tile of C from a
//   column of TM values of A and a row of TN values of B, both cached in registers.
// Teaches: the outer product. TM + TN shared-memory loads feed TM * TN FMAs, so a thread does
//   arithmetic most of the time; a 128 x 128 block tile halves global traffic against rung 4.
// Limits: scalar 4-byte shared and global loads, and the A column read from shared memory is
//   strided (bank conflicts); sgemm_06 vectorises and transposes A.
#include "lab_gemm.h"
#include "lab_device.cuh"

#define THREADS (BLOCK_X)
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");
static_assert((BM / TM) * (BN / TN) == THREADS, "each thread owns a TM x TN sub-tile");
static_assert(THREADS % BK == 0 && BM % (THREADS / BK) == 0, "A tile loads in whole passes");
static_assert(THREADS % BN == 0 && BK % (THREADS / BN) == 0, "B tile loads in whole passes");

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_05_2d_blocktiling(lab_gemm_f32_args p) {
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    float* C = lab_ptr<float>(p.c);
    const int tid = threadIdx.x;
    const int bRow = blockIdx.y * BM, bCol = blockIdx.x * BN;
    const int threadCol = tid % (BN / TN), threadRow = tid / (BN / TN);
    const int aRow = tid / BK, aCol = tid % BK, aStride = THREADS / BK;
    const int bRowIn = tid / BN, bColIn = tid % BN, bStride = THREADS / BN;

    float acc[TM * TN] = {0.0f};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < p.k; k0 += BK) {
#pragma unroll
        for (int off = 0; off < BM; off += aStride) {
            const int r = bRow + aRow + off, c = k0 + aCol;
            As[(aRow + off) * BK + aCol] = (r < p.m && c < p.k) ? A[(size_t)r * p.lda + c] : 0.0f;
        }
#pragma unroll
        for (int off = 0; off < BK; off += bStride) {
            const int r = k0 + bRowIn + off, c = bCol + bColIn;
            Bs[(bRowIn + off) * BN + bColIn] = (r < p.k && c < p.n) ? B[(size_t)r * p.ldb + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int d = 0; d < BK; ++d) {
#pragma unroll
            for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + d];
#pragma unroll
            for (int j = 0; j < TN; ++j) regN[j] = Bs[d * BN + threadCol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i * TN + j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = bRow + threadRow * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = bCol + threadCol * TN + j;
            if (row < p.m && col < p.n) {
                float* c = &C[(size_t)row * p.ldc + col];
                *c = lab_axpby(p.alpha, acc[i * TN + j], p.beta, c);
            }
        }
    }
}
