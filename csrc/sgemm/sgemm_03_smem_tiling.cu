// Technique: shared-memory tiling (rung 3). The block stages a TILE x TILE tile of A and of B in
//   shared memory, then every thread reads its row and column of the tiles from there.
// Teaches: data reuse. Each global element is loaded once per block instead of once per thread,
//   cutting global traffic by TILE; out-of-range elements are loaded as zeros, so any m, n, k work.
// Limits: still one output per thread: 2 shared-memory loads per FMA keep the kernel bound by
//   shared-memory bandwidth. sgemm_04 computes several outputs per thread.
#include "lab_gemm.h"
#include "lab_device.cuh"

static_assert(BLOCK_X == TILE && BLOCK_Y == TILE && BLOCK_Z == 1, "a TILE x TILE block");
static_assert(BM == TILE && BN == TILE, "a block computes one TILE x TILE tile of C");

extern "C" __global__ void __launch_bounds__(TILE * TILE) sgemm_03_smem_tiling(lab_gemm_f32_args p) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    float* C = lab_ptr<float>(p.c);
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < p.k; k0 += TILE) {
        As[ty][tx] = (row < p.m && k0 + tx < p.k) ? A[(size_t)row * p.lda + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < p.k && col < p.n) ? B[(size_t)(k0 + ty) * p.ldb + col] : 0.0f;
        __syncthreads();
        // As[ty][i] is one address per warp (a broadcast); Bs[i][tx] is 32 consecutive banks.
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (row < p.m && col < p.n) {
        float* c = &C[(size_t)row * p.ldc + col];
        *c = lab_axpby(p.alpha, acc, p.beta, c);
    }
}
