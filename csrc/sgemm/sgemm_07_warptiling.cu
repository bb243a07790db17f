// Technique: warp tiling (rung 7). Between the block tile and the thread tile sits a warp tile:
//   each warp owns a WM x WN region of the block's C tile and walks it in WMITER x WNITER
//   sub-tiles, each lane holding TM x TN outputs (see WarpTile in sgemm_tiles.cuh).
// Teaches: the warp is the unit that issues shared-memory loads. Keeping a warp's 32 lanes on one
//   compact region makes their As/Bs reads mostly broadcasts, and the sub-tile loop gives each
//   lane more independent FMAs per loaded value; the shape of each level is tunable.
// Limits: one buffer per tile, so loads from global memory and the math take turns, with two
//   barriers per BK step. Rung 8 overlaps them. Any shape: where rows are not whole float4s
//   (k or n not a multiple of 4, an odd leading dimension) the tiles move element by element.
#include "lab_gemm.h"
#include "sgemm_tiles.cuh"

#define THREADS (BLOCK_X)
// The rules the tiling puts on the constants are variants.toml's warp_tile set, which the build and the
// tuner check before compiling.

template <bool kVec>
__device__ __forceinline__ void warptiled(const lab_gemm_f32_args& p, float* As, float* Bs) {
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    ATile<BM, BK, THREADS> a;
    BTile<BN, BK, THREADS> b;
    WarpTile<THREADS, BM, BN, BK, WM, WN, WNITER, TM, TN> w(tid);
    for (int k0 = 0; k0 < p.k; k0 += BK) {
        a.template fetch<kVec>(A, p.lda, p.m, p.k, row0, k0, tid);
        b.template fetch<kVec>(B, p.ldb, p.k, p.n, k0, col0, tid);
        a.store(As, tid);
        b.store(Bs, tid);
        __syncthreads();
        w.mma(As, Bs);
        __syncthreads();
    }
    w.store(p, row0, col0);
}

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_07_warptiling(lab_gemm_f32_args p) {
    __shared__ __align__(16) float As[BK * BM];
    __shared__ __align__(16) float Bs[BK * BN];
    if (lab_gemm_vec4(p))
        warptiled<true>(p, As, Bs);
    else
        warptiled<false>(p, As, Bs);
}
