// Technique: a thread tile of TM x TN (up to 16 x 8 = 128 accumulators) on a 2-D block of one warp
//   per row (rung 11), with the next k-step's operands read from shared memory into a second set of
//   registers while this step's FMAs run, and tiles in L2-friendly groups of GROUP_M tile rows.
// Teaches: where rungs 7-10 spend registers on warp-tile bookkeeping, this layout spends them on
//   the outer product: a warp shares its rows of A (every A read is a broadcast), a lane's TN
//   columns are float4s BN/TN*4 apart (conflict-free LDS.128), so each k-step costs TM/4 + TN/4
//   shared loads for TM*TN FMAs, and the fragment double buffer keeps those loads off the FMAs'
//   critical path. Global tiles are staged through registers into the other shared buffer (rung
//   8's scheme), with the same any-shape tile loads.
// Limits: 128 accumulators and two fragment sets need ~230 registers, so one block of 256 threads
//   per SM (8 warps): latency is hidden by ILP, not by warps; edge tiles compute zeros.
#include "lab_gemm.h"
#include "sgemm_tiles.cuh"

#define THREADS (BLOCK_X * BLOCK_Y)
// The rules the tiling puts on the constants (one warp a row of threads, the block tile the
// threads' tiles, float4 fragments, two stages in the dynamic shared memory) are this rung's
// entry's constraints in variants.toml, which the build and the tuner check before compiling.
constexpr int STRIDE = BLOCK_X * 4;  // between a lane's float4s of columns

template <bool kVec>
__device__ __forceinline__ void prefetched(const lab_gemm_f32_args& p) {
    extern __shared__ __align__(16) float smem[];
    float* As = smem;                // [2][BK][BM], A transposed
    float* Bs = smem + 2 * BK * BM;  // [2][BK][BN]
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    const int tid = threadIdx.y * BLOCK_X + threadIdx.x;

    int tileRow, tileCol;
    lab_grouped_tile<GROUP_M>(tileRow, tileCol);  // rung 9's order
    const int row0 = tileRow * BM, col0 = tileCol * BN;

    ATile<BM, BK, THREADS> a;
    BTile<BN, BK, THREADS> b;
    a.template fetch<kVec>(A, p.lda, p.m, p.k, row0, 0, tid);
    b.template fetch<kVec>(B, p.ldb, p.k, p.n, 0, col0, tid);
    a.store(As, tid);
    b.store(Bs, tid);
    __syncthreads();

    // This thread's rows of the tile, and its first column of each float4 of TN.
    const int rowT = threadIdx.y * TM, colT = threadIdx.x * 4;
    float acc[TM][TN] = {};
    float fa[2][TM], fb[2][TN];
    int buf = 0;
    for (int k0 = 0; k0 < p.k; k0 += BK) {
        const float* as = As + buf * BK * BM;
        const float* bs = Bs + buf * BK * BN;
        const bool next = k0 + BK < p.k;
        if (next) {  // issued now, stored after the math (rung 8)
            a.template fetch<kVec>(A, p.lda, p.m, p.k, row0, k0 + BK, tid);
            b.template fetch<kVec>(B, p.ldb, p.k, p.n, k0 + BK, col0, tid);
        }
        // A fence for the scheduler: without it ptxas sinks these loads to their stores after the
        // math (to save registers), exposing their latency: 0.78x cuBLAS at 4096 on an H200
        // against 0.92x with it. (In rung 8's loop the same fence costs 4%: it is not shared.)
        __syncwarp();
#pragma unroll
        for (int i = 0; i < TM; i += 4) *reinterpret_cast<float4*>(&fa[0][i]) = *reinterpret_cast<const float4*>(&as[rowT + i]);
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            *reinterpret_cast<float4*>(&fb[0][j]) = *reinterpret_cast<const float4*>(&bs[(j / 4) * STRIDE + colT]);
#pragma unroll
        for (int d = 0; d < BK; ++d) {
            const int cur = d & 1;
            if (d + 1 < BK) {  // the next step's fragments, while this step's FMAs run
#pragma unroll
                for (int i = 0; i < TM; i += 4)
                    *reinterpret_cast<float4*>(&fa[cur ^ 1][i]) = *reinterpret_cast<const float4*>(&as[(d + 1) * BM + rowT + i]);
#pragma unroll
                for (int j = 0; j < TN; j += 4)
                    *reinterpret_cast<float4*>(&fb[cur ^ 1][j]) =
                        *reinterpret_cast<const float4*>(&bs[(d + 1) * BN + (j / 4) * STRIDE + colT]);
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += fa[cur][i] * fb[cur][j];
        }
        if (next) {  // the other buffer was last read before the previous barrier
            a.store(As + (buf ^ 1) * BK * BM, tid);
            b.store(Bs + (buf ^ 1) * BK * BN, tid);
        }
        __syncthreads();
        buf ^= 1;
    }

    lab_store_lane<TM, TN, 1, STRIDE>(p, acc, row0 + rowT, col0 + colT);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) sgemm_11_register_prefetch(lab_gemm_f32_args p) {
    if (lab_gemm_vec4(p))
        prefetched<true>(p);
    else
        prefetched<false>(p);
}
