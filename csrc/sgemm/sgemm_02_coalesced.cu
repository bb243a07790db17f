// Technique: one thread per output, with threadIdx.x walking along a row of C (rung 2).
// Teaches: coalescing. A warp now reads 32 consecutive floats of B and writes 32 consecutive
//   floats of C in one transaction each, and all its threads share (broadcast) one A element.
// Limits: every operand is still fetched from global memory once per use: 2 loads per FMA, so
//   the kernel is bound by L1/L2 bandwidth, not by the FMA units. sgemm_03 reuses tiles instead.
#include "lab_gemm.h"
#include "lab_device.cuh"

static_assert(BN == BLOCK_X && BM == BLOCK_Y && BLOCK_Z == 1, "one thread per output of a BM x BN tile");

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) sgemm_02_coalesced(lab_gemm_f32_args p) {
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    float* C = lab_ptr<float>(p.c);
    const int row = blockIdx.y * BM + threadIdx.y;
    const int col = blockIdx.x * BN + threadIdx.x;
    if (row >= p.m || col >= p.n) return;
    float acc = 0.0f;
    for (int i = 0; i < p.k; ++i) acc += A[(size_t)row * p.lda + i] * B[(size_t)i * p.ldb + col];
    float* c = &C[(size_t)row * p.ldc + col];
    *c = lab_axpby(p.alpha, acc, p.beta, c);
}
