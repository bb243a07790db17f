// Technique: WMMA with block tiling through shared memory (rung 2; Volta and later): a BM x BN
//   tile of C per block, BK-deep slices of A and B staged in padded shared memory with 16-byte
//   loads, each warp a WM x WN sub-tile of fragments.
// Teaches: reuse. Each element of A and B is read from global memory once per block instead of
//   once per warp, and the padding of 8 halves a row keeps the fragment loads off a single
//   shared-memory bank.
// Limits: no overlap of loads and math (the next rungs pipeline them); k and n must be multiples
//   of 8 so every 16-byte load is whole; edges of m, n and k are zero-filled on the way in and
//   bounds-checked on the way out through a shared-memory staging tile.
#include "lab_gemm.h"
#include "wmma_ptx.cuh"

#define THREADS (BLOCK_X)
#define WARPS (THREADS / 32)
#define PAD 8
// What the tiling needs of the constants (a 1-D block, warps tiling the block, whole 16-byte loads)
// is variants.toml's wmma_tile set, which the build and the tuner check before compiling.

struct lab_smem {
    union {
        struct {
            unsigned short a[BM][BK + PAD];
            unsigned short b[BK][BN + PAD];
        } in;
        float c[WARPS][16][16 + 4];  // the epilogue's per-warp staging tile
    };
};

extern "C" __global__ void __launch_bounds__(THREADS) fp16_02_wmma_smem(lab_gemm_tc_args p) {
    __shared__ __align__(32) lab_smem s;
    const unsigned short* A = lab_ptr<const unsigned short>(p.a);
    const unsigned short* B = lab_ptr<const unsigned short>(p.b);
    float* C = lab_ptr<float>(p.c);
    const int warp = threadIdx.x / 32;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;
    lab_frag_c acc[WM / 16][WN / 16];
#pragma unroll
    for (int i = 0; i < WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < WN / 16; ++j) lab_fill(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < p.k; k0 += BK) {
#pragma unroll
        for (int v = threadIdx.x; v < BM * BK / 8; v += THREADS) {
            const int r = v / (BK / 8), c = (v % (BK / 8)) * 8;
            uint4 x = make_uint4(0, 0, 0, 0);
            if (row0 + r < p.m && k0 + c < p.k) x = *reinterpret_cast<const uint4*>(A + (size_t)(row0 + r) * p.lda + k0 + c);
            *reinterpret_cast<uint4*>(&s.in.a[r][c]) = x;
        }
#pragma unroll
        for (int v = threadIdx.x; v < BK * BN / 8; v += THREADS) {
            const int r = v / (BN / 8), c = (v % (BN / 8)) * 8;
            uint4 x = make_uint4(0, 0, 0, 0);
            if (k0 + r < p.k && col0 + c < p.n) x = *reinterpret_cast<const uint4*>(B + (size_t)(k0 + r) * p.ldb + col0 + c);
            *reinterpret_cast<uint4*>(&s.in.b[r][c]) = x;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            lab_frag_a a[WM / 16];
            lab_frag_b b[WN / 16];
#pragma unroll
            for (int i = 0; i < WM / 16; ++i) lab_load_a_shared(a[i], &s.in.a[wr + 16 * i][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < WN / 16; ++j) lab_load_b_shared(b[j], &s.in.b[kk][wc + 16 * j], BN + PAD);
#pragma unroll
            for (int i = 0; i < WM / 16; ++i)
#pragma unroll
                for (int j = 0; j < WN / 16; ++j) lab_wmma(acc[i][j], a[i], b[j]);
        }
        __syncthreads();
    }
    // Epilogue: each fragment through the warp's staging tile, then bounds-checked stores.
#pragma unroll
    for (int i = 0; i < WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < WN / 16; ++j)
            lab_store_c_checked(C, p.ldc, p.m, p.n, row0 + wr + 16 * i, col0 + wc + 16 * j, acc[i][j], &s.c[warp][0][0]);
}
