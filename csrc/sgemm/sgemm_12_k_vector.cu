// Technique: A read along k (rung 12, sm_80 and later). cp.async lands A's tile row-major, as it
//   lies in memory, and a lane reads four k-steps of one of its rows with one LDS.128, so neither
//   rung 10's transposing pass nor rung 8's staging registers stand between global memory and the
//   FMAs. The shape is cuBLAS's own SGEMM on an H200 (as ncu shows it): 8 warps of
//   64 x 64 on a 256 x 128 tile, 16 x 8 outputs a lane, a STAGES-deep cp.async ring, one barrier a
//   BK step, tiles in groups of GROUP_M tile rows.
// Teaches: the instruction budget. On Hopper an SM issues one FFMA a sub-core a cycle, so every
//   other instruction in the loop costs a slot of math: per 4 k-steps a lane issues TM LDS.128 of A
//   (broadcasts across its row of lanes) and TN LDS.128 of B for 4 * TM * TN FFMA, and the ring's
//   addresses are a base pointer plus constants.
// Limits: 16-byte copies need A's and B's rows in whole float4s: PAD_ROWS = 1, the host pads them
//   (a timed copy) where they are not. 128 accumulators, 64 registers of A and the B fragments
//   leave one block an SM: 8 warps hide latency with ILP. Edge tiles compute zeros.
#include "lab_gemm.h"
#include "cp_async.cuh"
#include "sgemm_tiles.cuh"

#define THREADS (BLOCK_X)
// The rules the tiling puts on the constants (a 1-D block; rows padded to whole float4s, since
// cp.async moves 16-byte chunks; one warp a warp tile; lane tiles of at most 16 x 8; k in float4s;
// a ring of two or more stages, whole chunks a thread, the ring in the dynamic shared memory) are
// this rung's entry's constraints in variants.toml, which the build and the tuner check first.
// A warp's lanes are 4 rows x 8 columns; a lane holds TM rows 4 apart and TN columns as float4s 32 apart.
constexpr int TM = WM / 4, TN = WN / 8;
constexpr int LDA = BK + 4;  // an A row in shared memory: 4 rows of lanes read 4 distinct bank groups
constexpr int STAGE = BM * LDA + BK * BN;  // floats

// The cp.async copies of one stage: each thread's chunks of A's and B's tiles, their global
// addresses computed once and moved on by a tile's k at each stage (a 64-bit add, not a row times
// a pitch); chunks past m, k or n are zero-filled (within a row the host's padding is zeros).
struct Loader {
    static constexpr int NA = BM * BK / 4 / THREADS, NB = BK * BN / 4 / THREADS;
    const float* a[NA];
    const float* b[NB];
    int aCol[NA], bRow[NB], aDst[NA], bDst[NB];
    unsigned aRowOk = 0, bColOk = 0;  // a bit a chunk
    size_t bStep;

    __device__ __forceinline__ Loader(const lab_gemm_f32_args& p, int row0, int col0, int tid) {
        const float* A = lab_ptr<const float>(p.a);
        const float* B = lab_ptr<const float>(p.b);
#pragma unroll
        for (int i = 0; i < NA; ++i) {
            const int chunk = tid + i * THREADS, r = chunk / (BK / 4), c = chunk % (BK / 4) * 4;
            aRowOk |= (row0 + r < p.m) << i;
            a[i] = A + (size_t)min(row0 + r, p.m - 1) * p.lda + c;
            aCol[i] = c;
            aDst[i] = r * LDA + c;
        }
#pragma unroll
        for (int i = 0; i < NB; ++i) {
            const int chunk = tid + i * THREADS, r = chunk / (BN / 4), c = chunk % (BN / 4) * 4;
            bColOk |= (col0 + c < p.n) << i;
            b[i] = B + (size_t)r * p.ldb + min(col0 + c, p.n - 1);
            bRow[i] = r;
            bDst[i] = BM * LDA + r * BN + c;
        }
        bStep = (size_t)BK * p.ldb;
    }

    // Copies the tiles at k0 into `stage`, then moves on to the next k0. A zero-filled chunk
    // reads nothing, but its address stays the matrix's base: past the last tile the moved
    // addresses leave the allocation.
    __device__ __forceinline__ void load(const lab_gemm_f32_args& p, float* stage, int k0) {
#pragma unroll
        for (int i = 0; i < NA; ++i) {
            const bool ok = (aRowOk >> i & 1) && k0 + aCol[i] < p.k;
            lab_cp_async16(stage + aDst[i], ok ? a[i] : lab_ptr<const float>(p.a), ok ? 16 : 0);
            a[i] += BK;
        }
#pragma unroll
        for (int i = 0; i < NB; ++i) {
            const bool ok = (bColOk >> i & 1) && k0 + bRow[i] < p.k;
            lab_cp_async16(stage + bDst[i], ok ? b[i] : lab_ptr<const float>(p.b), ok ? 16 : 0);
            b[i] += bStep;
        }
    }
};

extern "C" __global__ void __launch_bounds__(THREADS, 1) sgemm_12_k_vector(lab_gemm_f32_args p) {
    extern __shared__ __align__(16) float smem[];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

    int tileRow, tileCol;
    lab_grouped_tile<GROUP_M>(tileRow, tileCol);  // rung 9's order
    const int row0 = tileRow * BM, col0 = tileCol * BN;

    // This lane's first row and column inside the block tile.
    const int rowT = (warp / (BN / WN)) * WM + lane / 8, colT = (warp % (BN / WN)) * WN + (lane % 8) * 4;
    const int tiles = (p.k + BK - 1) / BK;
    Loader ld(p, row0, col0, tid);
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) ld.load(p, smem + s * STAGE, s * BK);
        lab_cp_async_commit();  // empty groups keep the count uniform
    }

    float acc[TM][TN] = {};
    int read = 0, write = STAGES - 1;
    for (int t = 0; t < tiles; ++t) {
        lab_cp_async_wait<STAGES - 2>();  // tile t has landed (this thread's copies)...
        __syncthreads();                  // ...every thread's, and stage `write` is read no more
        if (t + STAGES - 1 < tiles) ld.load(p, smem + write * STAGE, (t + STAGES - 1) * BK);
        lab_cp_async_commit();
        const float* as = smem + read * STAGE + rowT * LDA;
        const float* bs = smem + read * STAGE + BM * LDA + colT;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 4) {
            float a[TM][4];
#pragma unroll
            for (int i = 0; i < TM; ++i) *reinterpret_cast<float4*>(a[i]) = *reinterpret_cast<const float4*>(&as[4 * i * LDA + kk]);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                float b[TN];
#pragma unroll
                for (int j = 0; j < TN; j += 4)
                    *reinterpret_cast<float4*>(&b[j]) = *reinterpret_cast<const float4*>(&bs[(kk + k) * BN + 8 * j]);
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] += a[i][k] * b[j];
            }
        }
        read = read + 1 == STAGES ? 0 : read + 1;
        write = write + 1 == STAGES ? 0 : write + 1;
    }
    lab_cp_async_wait<0>();  // no copy outlives the block, even an empty group's

    lab_store_lane<TM, TN, 4, 32>(p, acc, row0 + rowT, col0 + colT);  // rows 4 apart, float4s 32 apart
}
