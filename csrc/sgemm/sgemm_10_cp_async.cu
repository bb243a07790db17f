// Technique: a STAGES-deep cp.async pipeline (rung 10, sm_80 and later), on the warp tiling of
//   rung 7. Tiles of A and B stream from global into a ring of shared-memory stages with cp.async,
//   STAGES - 1 tiles ahead of the math; out-of-range chunks are zero-filled by the copy itself.
// Teaches: asynchronous copies. The loads no longer pass through registers (rung 8's staging
//   registers are freed for accumulators) and several tiles are in flight at once, so the
//   pipeline can be deeper than double buffering without costing registers.
// Limits: cp.async copies bytes as they are, so A lands row-major and is transposed into the
//   [k][m] layout the warp tile reads by one extra pass through shared memory per tile; needs
//   k % 4 == 0 and n % 4 == 0 (16-byte chunks).
#include "lab_gemm.h"
#include "cp_async.cuh"
#include "sgemm_tiles.cuh"

#define THREADS (BLOCK_X)
// The rules the tiling puts on the constants are variants.toml's warp_tile set and this rung's entry (a ring of 2 to 8 stages), which the build and the
// tuner check before compiling.

// Issues the cp.async copies of the A and B tiles at k0 into one stage; chunks past m, n or k
// are zero-filled. The chunk mapping is ATile's and BTile's.
__device__ __forceinline__ void load_stage(const lab_gemm_f32_args& p, int row0, int col0, int k0, float* As, float* Bs,
                                           int tid) {
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    using AT = ATile<BM, BK, THREADS>;
    using BT = BTile<BN, BK, THREADS>;
#pragma unroll
    for (int i = 0; i < BM / AT::ROW_STRIDE; ++i) {
        const int r = tid / AT::PER_ROW + i * AT::ROW_STRIDE, c = (tid % AT::PER_ROW) * 4;
        const bool ok = row0 + r < p.m && k0 + c < p.k;
        lab_cp_async16(&As[r * BK + c], ok ? &A[(size_t)(row0 + r) * p.lda + k0 + c] : A, ok ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < BK / BT::ROW_STRIDE; ++i) {
        const int r = tid / BT::PER_ROW + i * BT::ROW_STRIDE, c = (tid % BT::PER_ROW) * 4;
        const bool ok = k0 + r < p.k && col0 + c < p.n;
        lab_cp_async16(&Bs[r * BN + c], ok ? &B[(size_t)(k0 + r) * p.ldb + col0 + c] : B, ok ? 16 : 0);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_10_cp_async(lab_gemm_f32_args p) {
    __shared__ __align__(16) float As[STAGES][BM * BK];  // row-major, as cp.async leaves it
    __shared__ __align__(16) float Bs[STAGES][BK * BN];
    __shared__ __align__(16) float At[BK * BM];          // A transposed, for the warp tile
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int tiles = (p.k + BK - 1) / BK;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load_stage(p, row0, col0, s * BK, As[s], Bs[s], tid);
        lab_cp_async_commit();  // empty groups keep the count uniform
    }
    WarpTile<THREADS, BM, BN, BK, WM, WN, WNITER, TM, TN> w(tid);
    ATile<BM, BK, THREADS> a;
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        lab_cp_async_wait<STAGES - 2>();  // tile t has landed (for this thread's copies)...
        __syncthreads();                  // ...and for every thread's
        const int r = tid / a.PER_ROW, c = (tid % a.PER_ROW) * 4;
#pragma unroll
        for (int i = 0; i < BM / a.ROW_STRIDE; ++i)
            a.v[i] = *reinterpret_cast<const float4*>(&As[s][(r + i * a.ROW_STRIDE) * BK + c]);
        a.store(At, tid);
        // The stage read one step ago is free again: fill it with tile t + STAGES - 1.
        const int next = t + STAGES - 1;
        if (next < tiles) load_stage(p, row0, col0, next * BK, As[next % STAGES], Bs[next % STAGES], tid);
        lab_cp_async_commit();
        __syncthreads();  // At is complete
        w.mma(At, Bs[s]);
        __syncthreads();  // At and stage s are read before they are written again
    }
    w.store<false, true>(p, row0, col0);  // k % 4 == 0, n % 4 == 0: whole float4s
}
