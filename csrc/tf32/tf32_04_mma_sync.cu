// Technique: tf32 Tensor Cores through mma.sync m16n8k8 (sm_80 and later): fp32 A and B tiles
//   staged in padded shared memory, rounded to tf32 (cvt.rna) as each fragment is read, fp32
//   accumulators in registers, warp tiling.
// Teaches: what "TF32" is: fp32 numbers with a 10-bit mantissa in the multiplier and fp32
//   accumulation, for 8x the rate of fp32 FMA on A100 and Hopper, without changing the data.
// Limits: fragments are read element by element (ldmatrix moves 16-bit elements); no cp.async
//   pipeline; k and n must be multiples of 4 (16-byte loads).
#include "lab_gemm.h"
#include "mma_tiles.cuh"

#define THREADS (BLOCK_X)
#define APAD 4
#define BPAD 8
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");
static_assert((BM / WM) * (BN / WN) * 32 == THREADS && WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "warps tile the block");
static_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0, "whole 16-byte loads per thread");

__device__ __forceinline__ unsigned lab_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

extern "C" __global__ void __launch_bounds__(THREADS) tf32_04_mma_sync(lab_gemm_tc_args p) {
    __shared__ __align__(16) float As[BM][BK + APAD];
    __shared__ __align__(16) float Bs[BK][BN + BPAD];
    constexpr int MT = WM / 16, NT = WN / 8;
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;
    float acc[MT][NT][4];
    lab_zero(acc);

    for (int k0 = 0; k0 < p.k; k0 += BK) {
#pragma unroll
        for (int v = threadIdx.x; v < BM * BK / 4; v += THREADS) {
            const int r = v / (BK / 4), c = (v % (BK / 4)) * 4;
            float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
            if (row0 + r < p.m && k0 + c < p.k) x = *reinterpret_cast<const float4*>(A + (size_t)(row0 + r) * p.lda + k0 + c);
            *reinterpret_cast<float4*>(&As[r][c]) = x;
        }
#pragma unroll
        for (int v = threadIdx.x; v < BK * BN / 4; v += THREADS) {
            const int r = v / (BN / 4), c = (v % (BN / 4)) * 4;
            float4 x = make_float4(0.f, 0.f, 0.f, 0.f);
            if (k0 + r < p.k && col0 + c < p.n) x = *reinterpret_cast<const float4*>(B + (size_t)(k0 + r) * p.ldb + col0 + c);
            *reinterpret_cast<float4*>(&Bs[r][c]) = x;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            // A (16 x 8): a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4).
            unsigned a[MT][4], b[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const int r = wr + 16 * i + g;
                a[i][0] = lab_tf32(As[r][kk + t]);
                a[i][1] = lab_tf32(As[r + 8][kk + t]);
                a[i][2] = lab_tf32(As[r][kk + t + 4]);
                a[i][3] = lab_tf32(As[r + 8][kk + t + 4]);
            }
            // B (8 x 8, column fragment): b0 (t, g), b1 (t + 4, g).
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int c = wc + 8 * j + g;
                b[j][0] = lab_tf32(Bs[kk + t][c]);
                b[j][1] = lab_tf32(Bs[kk + t + 4][c]);
            }
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
                    lab_mma_1688_tf32(acc[i][j], a[i], b[j][0], b[j][1]);
        }
        __syncthreads();
    }
    lab_store_m16n8(lab_ptr<float>(p.c), p.ldc, p.m, p.n, row0 + wr, col0 + wc, acc);
}
