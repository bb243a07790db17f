// Technique: rung 2 with a STAGES-deep cp.async pipeline (rung 3; sm_80 and later): tiles of A
//   and B stream into a ring of shared-memory stages, STAGES - 1 ahead of the math, without
//   passing through registers; out-of-range chunks are zero-filled by the copy itself.
// Teaches: overlap. While the Tensor Cores work on one stage the copies for the next ones are in
//   flight, so the block no longer stops at every BK slice to wait for global memory.
// Limits: WMMA's fragment loads from shared memory still go through its fixed layout (no
//   ldmatrix, no swizzle: rung 4); k and n must be multiples of 8 (16-byte chunks); the stages
//   live in static shared memory, so STAGES x stage size stays under 48 KB.
#include "lab_gemm.h"
#include "cp_async.cuh"
#include "wmma_ptx.cuh"

#define THREADS (BLOCK_X)
#define WARPS (THREADS / 32)
#define PAD 8
// What the tiling needs of the constants (a 1-D block, warps tiling the block, whole 16-byte copies,
// a pipeline of 2 to 8 stages) is variants.toml's wmma_tile set and this entry's constraints,
// which the build and the tuner check before compiling.

struct lab_stage {
    unsigned short a[BM][BK + PAD];
    unsigned short b[BK][BN + PAD];
};
struct lab_smem {
    union {
        lab_stage st[STAGES];
        float c[WARPS][16][16 + 4];
    };
};

// Issues the copies of the k0 slice into one stage; chunks past m, n or k are zero-filled.
__device__ __forceinline__ void load_stage(const lab_gemm_tc_args& p, lab_stage& st, int row0, int col0, int k0) {
    const unsigned short* A = lab_ptr<const unsigned short>(p.a);
    const unsigned short* B = lab_ptr<const unsigned short>(p.b);
#pragma unroll
    for (int v = threadIdx.x; v < BM * BK / 8; v += THREADS) {
        const int r = v / (BK / 8), c = (v % (BK / 8)) * 8;
        const bool ok = row0 + r < p.m && k0 + c < p.k;
        lab_cp_async16(&st.a[r][c], ok ? A + (size_t)(row0 + r) * p.lda + k0 + c : A, ok ? 16 : 0);
    }
#pragma unroll
    for (int v = threadIdx.x; v < BK * BN / 8; v += THREADS) {
        const int r = v / (BN / 8), c = (v % (BN / 8)) * 8;
        const bool ok = k0 + r < p.k && col0 + c < p.n;
        lab_cp_async16(&st.b[r][c], ok ? B + (size_t)(k0 + r) * p.ldb + col0 + c : B, ok ? 16 : 0);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) fp16_03_wmma_cp_async(lab_gemm_tc_args p) {
    __shared__ __align__(128) lab_smem s;
    float* C = lab_ptr<float>(p.c);
    const int warp = threadIdx.x / 32;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;
    const int tiles = (p.k + BK - 1) / BK;
    lab_frag_c acc[WM / 16][WN / 16];
#pragma unroll
    for (int i = 0; i < WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < WN / 16; ++j) lab_fill(acc[i][j], 0.0f);

#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) {
        if (t < tiles) load_stage(p, s.st[t], row0, col0, t * BK);
        lab_cp_async_commit();  // empty groups keep the count uniform
    }
    for (int t = 0; t < tiles; ++t) {
        lab_cp_async_wait<STAGES - 2>();  // tile t has landed (this thread's copies)...
        __syncthreads();                  // ...everyone's, and stage (t - 1) % STAGES is free
        const int next = t + STAGES - 1;
        if (next < tiles) load_stage(p, s.st[next % STAGES], row0, col0, next * BK);
        lab_cp_async_commit();
        const lab_stage& st = s.st[t % STAGES];
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            lab_frag_a a[WM / 16];
            lab_frag_b b[WN / 16];
#pragma unroll
            for (int i = 0; i < WM / 16; ++i) lab_load_a_shared(a[i], &st.a[wr + 16 * i][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < WN / 16; ++j) lab_load_b_shared(b[j], &st.b[kk][wc + 16 * j], BN + PAD);
#pragma unroll
            for (int i = 0; i < WM / 16; ++i)
#pragma unroll
                for (int j = 0; j < WN / 16; ++j) lab_wmma(acc[i][j], a[i], b[j]);
        }
    }
    lab_cp_async_wait<0>();
    __syncthreads();  // the stages are free for the epilogue's staging tiles
#pragma unroll
    for (int i = 0; i < WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < WN / 16; ++j)
            lab_store_c_checked(C, p.ldc, p.m, p.n, row0 + wr + 16 * i, col0 + wc + 16 * j, acc[i][j], &s.c[warp][0][0]);
}
