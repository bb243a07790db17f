// Technique: one thread per output element, straight from global memory (rung 1, the floor).
// Teaches: what an untuned kernel costs. threadIdx.x walks down a column of C, so a warp's 32
//   loads of A are k floats apart and its 32 stores to C are n floats apart: every access is its
//   own memory transaction, and each A and B element is re-read from DRAM or L2 by many threads.
// Limits: bound by uncoalesced traffic, far below the arithmetic rate; sgemm_02 fixes the order.
#include "lab_gemm.h"
#include "lab_device.cuh"

static_assert(BM == BLOCK_X && BN == BLOCK_Y && BLOCK_Z == 1, "one thread per output of a BM x BN tile");

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) sgemm_01_naive(lab_gemm_f32_args p) {
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    float* C = lab_ptr<float>(p.c);
    const int row = blockIdx.y * BM + threadIdx.x;
    const int col = blockIdx.x * BN + threadIdx.y;
    if (row >= p.m || col >= p.n) return;
    float acc = 0.0f;
    for (int i = 0; i < p.k; ++i) acc += A[(size_t)row * p.lda + i] * B[(size_t)i * p.ldb + col];
    float* c = &C[(size_t)row * p.ldc + col];
    *c = lab_axpby(p.alpha, acc, p.beta, c);
}
