// Technique: int8 Tensor Cores through mma.sync m16n8k32 (sm_80 and later): s8 A tiles staged as
//   they are, B tiles transposed into shared memory on the way in (so each thread's four k-values
//   of a column are one 32-bit word), s32 accumulators, warp tiling.
// Teaches: integer Tensor Cores take 32 products per instruction step and accumulate exactly;
//   the layout work (B must be k-contiguous per column) is the price of a row-major B.
// Limits: the transpose of B is done with byte stores; no cp.async pipeline; k and n must be
//   multiples of 16 (16-byte loads).
#include "lab_gemm.h"
#include "mma_tiles.cuh"

#define THREADS (BLOCK_X)
#define PAD 16
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");
static_assert((BM / WM) * (BN / WN) * 32 == THREADS && WM % 16 == 0 && WN % 8 == 0 && BK % 32 == 0, "warps tile the block");
static_assert((BM * BK / 16) % THREADS == 0 && (BK * BN / 16) % THREADS == 0, "whole 16-byte loads per thread");

extern "C" __global__ void __launch_bounds__(THREADS) int8_04_mma_sync(lab_gemm_tc_args p) {
    __shared__ __align__(16) signed char As[BM][BK + PAD];
    __shared__ __align__(16) signed char Bt[BN][BK + PAD];  // B transposed: [n][k]
    constexpr int MT = WM / 16, NT = WN / 8;
    const signed char* A = lab_ptr<const signed char>(p.a);
    const signed char* B = lab_ptr<const signed char>(p.b);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;
    int acc[MT][NT][4];
    lab_zero(acc);

    for (int k0 = 0; k0 < p.k; k0 += BK) {
#pragma unroll
        for (int v = threadIdx.x; v < BM * BK / 16; v += THREADS) {
            const int r = v / (BK / 16), c = (v % (BK / 16)) * 16;
            uint4 x = make_uint4(0, 0, 0, 0);
            if (row0 + r < p.m && k0 + c < p.k) x = *reinterpret_cast<const uint4*>(A + (size_t)(row0 + r) * p.lda + k0 + c);
            *reinterpret_cast<uint4*>(&As[r][c]) = x;
        }
#pragma unroll
        for (int v = threadIdx.x; v < BK * BN / 16; v += THREADS) {
            const int r = v / (BN / 16), c = (v % (BN / 16)) * 16;
            uint4 x = make_uint4(0, 0, 0, 0);
            if (k0 + r < p.k && col0 + c < p.n) x = *reinterpret_cast<const uint4*>(B + (size_t)(k0 + r) * p.ldb + col0 + c);
            const signed char* bytes = reinterpret_cast<const signed char*>(&x);
#pragma unroll
            for (int e = 0; e < 16; ++e) Bt[c + e][r] = bytes[e];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 32) {
            // A (16 x 32): a0 (g, 4t..4t+3), a1 (g + 8, ...), a2 (g, 16 + 4t..), a3 (g + 8, 16 + 4t..).
            unsigned a[MT][4], b[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const int r = wr + 16 * i + g;
                a[i][0] = *reinterpret_cast<const unsigned*>(&As[r][kk + 4 * t]);
                a[i][1] = *reinterpret_cast<const unsigned*>(&As[r + 8][kk + 4 * t]);
                a[i][2] = *reinterpret_cast<const unsigned*>(&As[r][kk + 16 + 4 * t]);
                a[i][3] = *reinterpret_cast<const unsigned*>(&As[r + 8][kk + 16 + 4 * t]);
            }
            // B (32 x 8, column fragment): b0 (4t..4t+3, g), b1 (16 + 4t.., g).
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int c = wc + 8 * j + g;
                b[j][0] = *reinterpret_cast<const unsigned*>(&Bt[c][kk + 4 * t]);
                b[j][1] = *reinterpret_cast<const unsigned*>(&Bt[c][kk + 16 + 4 * t]);
            }
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
                    lab_mma_16832_s8(acc[i][j], a[i], b[j][0], b[j][1]);
        }
        __syncthreads();
    }
    lab_store_m16n8(lab_ptr<int>(p.c), p.ldc, p.m, p.n, row0 + wr, col0 + wc, acc);
}
