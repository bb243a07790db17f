// Technique: a transposing asynchronous copy (rung 13, sm_80 and later), the scheme of cuBLAS's own
//   SIMT SGEMM on an H200 (sm80_xmma ... ffma_aligna4, as ncu names it). Each thread copies
//   single floats of A with cp.async straight into shared memory laid out k-major (As[k][m]): the
//   transpose costs no registers and no pass of its own, and a 4-byte copy needs no alignment, so
//   every m, n, k and leading dimension runs this one loop with no padding copy. Each k-step a
//   lane reads its TM values of A and TN of B as float4s into a second set of registers while the
//   FMAs of the step before run (fragments double-buffered), one barrier a BK step.
// Teaches: where rung 12 reads A along k (64 registers of A a lane, no room to prefetch them),
//   the k-major layout makes a k-step's operands TM/4 + TN/4 LDS.128, small enough to read one
//   step ahead; and cp.async at 4 bytes buys alignment-free loads for a few percent of the issue
//   slots (BK * (BM + BN) / THREADS copies a thread a stage, against BK * TM * TN FMAs).
//   SPLIT_K slices each tile's K over blocks that add into C, for shapes with too few tiles;
//   STREAMK (sgemm_stream_k.cuh) instead splits only the last partial wave's k-steps over one
//   block a resident slot, so no SM idles in the tail and C needs no zeroing: at 4096^3 the 512
//   tiles of 128 x 256 are 3.88 waves of 132, and stream-K is what puts this rung past cuBLAS.
// Limits: 128 accumulators and two fragment sets leave one block of 256 threads an SM (8 warps):
//   latency is hidden by ILP. Edge tiles compute zeros.
#include "lab_gemm.h"
#include "cp_async.cuh"
#include "sgemm_stream_k.cuh"
#include "sgemm_tiles.cuh"

#define THREADS (BLOCK_X)
// Blocks an SM must hold (ptxas keeps registers to 64K / (THREADS * MIN_BLOCKS)): 1 for the
// 128-accumulator tiles, 2 or more for small ones, whose latency needs more warps.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
// The rules the tiling puts on the constants (a 1-D block, one warp a warp tile, lane tiles of
// whole float4s of at most 16 x 8, an even BK for the two fragment sets, a ring of two or more
// stages in whole passes of the block and in the dynamic shared memory) are variants.toml's
// k_major set, which the build and the tuner check before compiling; stream-K without SPLIT_K is
// the sgemm launch protocol's rule.
// A warp's lanes are 4 rows x 8 columns; a lane holds TM rows as float4s 16 apart and TN columns
// as float4s 32 apart, so each LDS.128 of a warp reads one contiguous run (broadcast across lanes).
constexpr int TM = WM / 4, TN = WN / 8;
// As[k][m] with a pitch of BM + 4: the copy's lanes run along k (BK of them a row of A), and the
// pad puts consecutive k 4 banks apart, so a warp's 4-byte stores land in distinct banks at BK = 8.
constexpr int LDA = BM + 4;
constexpr int STAGE = BK * LDA + BK * BN;  // floats

// The cp.async copies of one stage: A's elements 4 bytes each into As[k][m]; B's as they lie into
// Bs[k][n], 16 bytes each where B's rows allow float4s (kVecB, lab_rows_vec4), else 4. A thread's
// A elements share one k (its lane along k) and lie A_ROWS rows apart; its B chunks follow one
// another through the tile in steps of THREADS. Chunks past m, n or k are zero-filled from the
// matrix's base address (a moved pointer may leave the allocation); a stage wholly inside the
// matrix (kAll, all but the edge blocks' and the last k-tile's) skips those tests.
template <bool kVecB>
struct Loader {
    static constexpr int W = kVecB ? 4 : 1;  // floats a B chunk
    static constexpr int NA = BM * BK / THREADS, NB = BK * BN / W / THREADS, A_ROWS = THREADS / BK;
    static_assert((BK * BN / W) % THREADS == 0, "B's tile in whole passes of the block");
    const float* a;  // this thread's first A element of the next stage
    const float* b;  // B's tile origin (row k0, column col0) of the next stage
    unsigned aRowOk = 0, bColOk = 0;  // a bit a copy
    int aK, aDst, tid;

    __device__ __forceinline__ Loader(const lab_gemm_f32_args& p, int row0, int col0, int k0, int t) : tid(t) {
        const int r = tid / BK;
        aK = tid % BK;
        aDst = aK * LDA + r;
        a = lab_ptr<const float>(p.a) + (size_t)(row0 + r) * p.lda + k0 + aK;
        b = lab_ptr<const float>(p.b) + (size_t)k0 * p.ldb + col0;
#pragma unroll
        for (int i = 0; i < NA; ++i) aRowOk |= (row0 + r + i * A_ROWS < p.m) << i;
#pragma unroll
        for (int i = 0; i < NB; ++i) bColOk |= (col0 + (tid + i * THREADS) * W % BN < p.n) << i;
    }

    template <bool kAll>
    __device__ __forceinline__ void load(const lab_gemm_f32_args& p, float* stage, int k0) {
        const bool kOk = kAll || k0 + aK < p.k;
#pragma unroll
        for (int i = 0; i < NA; ++i) {
            const bool ok = kAll || (kOk && (aRowOk >> i & 1));
            lab_cp_async4(stage + aDst + i * A_ROWS, ok ? a + (size_t)i * A_ROWS * p.lda : lab_ptr<const float>(p.a), ok ? 4 : 0);
        }
#pragma unroll
        for (int i = 0; i < NB; ++i) {
            const int e = (tid + i * THREADS) * W, k = e / BN, c = e % BN;
            const bool ok = kAll || (k0 + k < p.k && (bColOk >> i & 1));
            const float* src = ok ? b + (size_t)k * p.ldb + c : lab_ptr<const float>(p.b);
            if (kVecB)
                lab_cp_async16(stage + BK * LDA + e, src, ok ? 16 : 0);
            else
                lab_cp_async4(stage + BK * LDA + e, src, ok ? 4 : 0);
        }
        a += BK;
        b += (size_t)BK * p.ldb;
    }
};

// One k-step's operands of this lane from a stage: TM values of A and TN of B.
__device__ __forceinline__ void fragments(float (&fa)[TM], float (&fb)[TN], const float* stage, int k, int rowT, int colT) {
#pragma unroll
    for (int g = 0; g < TM / 4; ++g)
        *reinterpret_cast<float4*>(&fa[4 * g]) = *reinterpret_cast<const float4*>(&stage[k * LDA + rowT + 16 * g]);
#pragma unroll
    for (int h = 0; h < TN / 4; ++h)
        *reinterpret_cast<float4*>(&fb[4 * h]) = *reinterpret_cast<const float4*>(&stage[BK * LDA + k * BN + colT + 32 * h]);
}

// Thread tid's first row and column inside the block tile.
__device__ __forceinline__ void lane_origin(int tid, int& rowT, int& colT) {
    const int warp = tid / 32, lane = tid % 32;
    rowT = (warp / (BN / WN)) * WM + (lane / 8) * 4, colT = (warp % (BN / WN)) * WN + (lane % 8) * 4;
}

// acc = this lane's outputs of the tile at (row0, col0) over k in [kBegin, kEnd).
template <bool kVecB>
__device__ __forceinline__ void product(const lab_gemm_f32_args& p, int row0, int col0, int kBegin, int kEnd, float (&acc)[TM / 4][4][TN]) {
    extern __shared__ __align__(16) float smem[];
    // Before sm_90, a stream-K block reads its thread index afresh for each unit: what the loader
    // derives from it is then recomputed, not held across the units, which makes ptxas spill on
    // sm_80 and sm_86. On sm_90 the same read costs 2.4% at 4096^3, so it is not made there.
    int tid = threadIdx.x;
#if STREAMK && __CUDA_ARCH__ < 900
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(tid));
#endif
    int rowT, colT;
    lane_origin(tid, rowT, colT);
    const int tiles = (max(kEnd - kBegin, 0) + BK - 1) / BK;
    const bool inside = row0 + BM <= p.m && col0 + BN <= p.n;
    Loader<kVecB> ld(p, row0, col0, kBegin, tid);
    auto load = [&](int stage, int k0) {
        if (inside && k0 + BK <= p.k)
            ld.template load<true>(p, smem + stage * STAGE, k0);
        else
            ld.template load<false>(p, smem + stage * STAGE, k0);
    };
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load(s, kBegin + s * BK);
        lab_cp_async_commit();  // empty groups keep the count uniform
    }
    lab_cp_async_wait<STAGES - 2>();
    __syncthreads();

#pragma unroll
    for (int g = 0; g < TM / 4; ++g)
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[g][e][j] = 0.0f;
    float fa[2][TM], fb[2][TN];
    fragments(fa[0], fb[0], smem, 0, rowT, colT);
    int read = 0, write = STAGES - 1;
    for (int t = 0; t < tiles; ++t) {
        // Stage `write` was last read in tile t - 1, before the barrier that ended it.
        if (t + STAGES - 1 < tiles) load(write, kBegin + (t + STAGES - 1) * BK);
        lab_cp_async_commit();
        const float* stage = smem + read * STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const int cur = kk % 2;
            if (kk == BK - 1) {
                // Tile t + 1 has landed (every thread's copies), and every warp has read its last of
                // tile t: its first fragments come from the next stage.
                lab_cp_async_wait<STAGES - 2>();
                __syncthreads();
                read = read + 1 == STAGES ? 0 : read + 1;
                write = write + 1 == STAGES ? 0 : write + 1;
                fragments(fa[cur ^ 1], fb[cur ^ 1], smem + read * STAGE, 0, rowT, colT);
            } else {
                fragments(fa[cur ^ 1], fb[cur ^ 1], stage, kk + 1, rowT, colT);
            }
            // Rows of the outer product alternate direction (a zig-zag), so each row's first FMA
            // reads the B value the last one of the row before read: ptxas marks more operands
            // for its reuse cache (1898 of 2560 FFMAs against 1718 in row order, sm_90).
#pragma unroll
            for (int g = 0; g < TM / 4; ++g)
#pragma unroll
                for (int e = 0; e < 4; ++e)
#pragma unroll
                    for (int jj = 0; jj < TN; ++jj) {
                        const int j = e % 2 ? TN - 1 - jj : jj;
                        acc[g][e][j] += fa[cur][4 * g + e] * fb[cur][j];
                    }
        }
    }
    lab_cp_async_wait<0>();  // no copy outlives the tile, even an empty group's
}

template <bool kVecB>
__device__ __forceinline__ void k_major(const lab_gemm_f32_args& p) {
    auto store = [&](const float(&acc)[TM / 4][4][TN], int row0, int col0) {
        int rowT, colT;
        lane_origin(threadIdx.x, rowT, colT);
#pragma unroll
        for (int g = 0; g < TM / 4; ++g)  // rows 1 apart in a float4 of A, float4s 32 columns apart
            lab_store_lane<4, TN, 1, 32, (SPLIT_K > 1)>(p, acc[g], row0 + rowT + 16 * g, col0 + colT);
    };
    int tileRow, tileCol;
#if STREAMK
    // The schedule and the current unit live in shared memory, written by thread 0 between
    // barriers: none of it is held in registers across the main loop, where the accumulators and
    // fragments need them all (held, they make ptxas spill on sm_80 to sm_90).
    __shared__ lab_sk_tiles<BM, BN, BK> sched;
    __shared__ lab_sk_unit w;
    for (int u = 0;; ++u) {
        if (threadIdx.x == 0) {
            if (u == 0) sched.init(p);
            if (!sched.unit(u, w)) w.id = -1;
        }
        __syncthreads();  // (and, u > 0: every warp has read its last of the ring)
        if (w.id < 0) break;
        lab_grouped_tile<GROUP_M>(w.id, (p.n + BN - 1) / BN, (p.m + BM - 1) / BM, tileRow, tileCol);
        float acc[TM / 4][4][TN];
        product<kVecB>(p, tileRow * BM, tileCol * BN, w.k0 * BK, min(p.k, w.k1 * BK), acc);
        if (sched.piece(w) && !lab_sk_fixup<THREADS>(p, sched, w, reinterpret_cast<float(&)[TM * TN]>(acc))) continue;
        lab_grouped_tile<GROUP_M>(w.id, (p.n + BN - 1) / BN, (p.m + BM - 1) / BM, tileRow, tileCol);
        store(acc, tileRow * BM, tileCol * BN);
        __syncthreads();  // every thread has read w
    }
#else
    lab_grouped_tile<GROUP_M>(tileRow, tileCol);
    int kBegin, kEnd;  // this block's slice of K (SPLIT_K)
    lab_k_slice<BK>(p, kBegin, kEnd);
    float acc[TM / 4][4][TN];
    product<kVecB>(p, tileRow * BM, tileCol * BN, kBegin, kEnd, acc);
    store(acc, tileRow * BM, tileCol * BN);
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) sgemm_13_k_major(lab_gemm_f32_args p) {
    if (lab_rows_vec4(lab_ptr<const float>(p.b), p.ldb, p.n))
        k_major<true>(p);
    else
        k_major<false>(p);
}
