// Technique: mma.sync m16n8k16 from PTX with ldmatrix, XOR-swizzled shared memory and warp
//   tiling, fed by a STAGES-deep cp.async pipeline with one barrier a k-tile, fragments
//   double-buffered in registers, blocks rasterised in groups of GROUP_M tile rows (rung 4; sm_80
//   and later); STREAMK = 1 splits the last partial wave's k-tiles over one block an SM, and
//   PERSISTENT = 1 with it has one block an SM walk its whole tiles first, the ring running on.
// Teaches: what WMMA hides. One ldmatrix.x4 fills a warp's whole A fragment (four 8x8 matrices)
//   and ldmatrix.trans turns row-major B into the column fragments mma wants; the XOR swizzle of
//   16-byte chunks puts the eight rows an 8x8 load touches in eight different bank groups, with no
//   padding; each warp owns a WM x WN tile of (WM / 16) x (WN / 8) accumulators. And what
//   feeding them costs: each thread's copies are worked out once, then issued a few at a time
//   between the mmas, and no barrier stands between a fragment load and the mmas that hide it,
//   so the Tensor Cores wait neither on address arithmetic nor on shared memory.
// Limits: BK 32 or 64 and BN 128 or 256 (the swizzles below); k and n multiples of 8; the stages
//   in dynamic shared memory (LAB_DYN_SMEM: the build keeps to the 99 KB every sm_80+ part
//   allows; a search on an H100 or H200 may give a block up to 227 KB, a deeper ring), so the
//   search reaches the 128 x 256 tiles, 64 x 64 warp tiles and 3-5 stages of the Ampere recipe;
//   the epilogue stores fp32 from registers, in pairs where the warp tile lies inside C.
#include "lab_gemm.h"
#include "cp_async.cuh"
#include "mma_tiles.cuh"
#include "sgemm_stream_k.cuh"
#include "sgemm_tiles.cuh"

// STREAMK = 1 (rung 4 with stream-K): the sgemm protocol's launch and scratch (sgemm_stream_k.cuh):
// one block a tile for the tiles of whole waves, then one block an SM splitting the k-tiles of the
// last, partial wave's tiles; the args are then the sgemm protocol's (alpha and beta unused), else
// the Tensor Core GEMM's. The build names the one this launch takes (LAB_ARGS).
#ifndef PERSISTENT
#define PERSISTENT 0
#endif
using Args = LAB_ARGS;

#define THREADS (BLOCK_X)
#define WARPS (THREADS / 32)
// What the tiling needs of the constants (a 1-D block, the swizzles' row widths, warps tiling the
// block, whole 16-byte copies, three stages or more in the dynamic shared memory) is
// variants.toml's mma_ldmatrix set, which the build and the tuner check before compiling.

// Element offsets of 16-byte chunk c of row r of A's and B's stages (mma_tiles.cuh's swizzle).
__device__ __forceinline__ int a_off(int r, int c) { return lab_swizzle16<BK>(r, c); }
__device__ __forceinline__ int b_off(int r, int c) { return lab_swizzle16<BN>(r, c); }

// The block's tile of C: blocks in groups of GROUP_M tile rows (a power of two) walking down the
// tile columns, so a wave's tiles share A's and B's panels in L2 (row by row, each wave streams
// all of B from DRAM); a last group of fewer rows keeps the launch's order. Shifts and masks of
// blockIdx only: a form with divisions, computed in each k-tile's copies to spare registers, makes
// the loop half as long again and runs a fifth slower.
__device__ __forceinline__ void tile_origin(int& row0, int& col0) {
    static_assert(GROUP_M >= 1 && (GROUP_M & (GROUP_M - 1)) == 0, "tile rows per rasterisation group: a power of two");
    constexpr int SHIFT = GROUP_M == 1 ? 0 : GROUP_M == 2 ? 1 : GROUP_M == 4 ? 2 : GROUP_M == 8 ? 3 : GROUP_M == 16 ? 4 : 5;
    static_assert(GROUP_M <= 32, "GROUP_M up to 32");
    const int top = blockIdx.y & ~(GROUP_M - 1);
    if (top + GROUP_M > (int)gridDim.y) {
        row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
        return;
    }
    const int l = (blockIdx.y & (GROUP_M - 1)) * gridDim.x + blockIdx.x;  // the block's place in its group
    row0 = (top + (l & (GROUP_M - 1))) * BM, col0 = (l >> SHIFT) * BN;
}

// A thread's share of every stage, fixed for the whole k loop: NA copies of A, rows RA apart in
// one 16-byte column, and NB of B, rows RB apart, so the sources are the first copy's plus
// multiples of one stride and move BK columns (A) or BK rows (B) a k-tile, and the shared
// offsets are the first copy's plus constants (the swizzles repeat every 8 rows). Rows of A and
// columns of B are checked once, k with one compare a copy. Computed afresh per k-tile from the
// thread index, the copies would take ~230 instructions a k-tile against a warp's 64 mmas (SASS),
// issued by every warp at once after the barrier while the Tensor Cores idle; this way a k-tile's
// loop is 172 instructions, 64 of them mmas.
constexpr int CA = BK / 8, RA = THREADS / CA, NA = BM * BK / 8 / THREADS;
constexpr int CB = BN / 8, RB = THREADS / CB, NB = BK * BN / 8 / THREADS;
static_assert(THREADS % CA == 0 && THREADS % CB == 0 && RA % 8 == 0 && NA * RA == BM && NB * RB == BK,
              "each thread copies one column of A and one of B, in rows evenly apart");

struct Copies {
    const unsigned short* a;  // A copy 0's source in the next k-tile to copy
    const unsigned short* b;  // B copy 0's source, likewise
    size_t astep, bstep;      // RA rows of A, RB rows of B (elements)
    int sa, sb;               // their element offsets in a stage
    int ka, kb;               // A's column and B's first row within a k-tile
    unsigned rows;            // bit i: A copy i's row lies inside m
    bool cols;                // B's column lies inside n
};

__device__ __forceinline__ Copies copies(const Args& p, int row0, int col0, int kt0) {
    const int ra = threadIdx.x / CA, ca = threadIdx.x % CA, rb = threadIdx.x / CB, cb = threadIdx.x % CB;
    Copies c;
    c.a = lab_ptr<const unsigned short>(p.a) + (size_t)(row0 + ra) * p.lda + (size_t)kt0 * BK + 8 * ca;
    c.b = lab_ptr<const unsigned short>(p.b) + (size_t)(kt0 * BK + rb) * p.ldb + col0 + 8 * cb;
    c.astep = (size_t)RA * p.lda, c.bstep = (size_t)RB * p.ldb;
    c.sa = a_off(ra, ca), c.sb = b_off(rb, cb), c.ka = 8 * ca, c.kb = rb;
    c.rows = 0;
#pragma unroll
    for (int i = 0; i < NA; ++i) c.rows |= (row0 + ra + i * RA < p.m ? 1u : 0u) << i;
    c.cols = col0 + 8 * cb < p.n;
    return c;
}

// Copies q0 .. q1 - 1 (A's first, then B's) of the k-tile at k0 into stage s, those that lie
// inside the matrices and of a k-tile that exists (`live`); the others zero-fill their 16 bytes
// and read nothing. The range that holds the last copy moves the sources on a k-tile. No branch:
// a branch around the copies would split the k loop into blocks the compiler schedules apart,
// each stretch of copies a gap in the warp's stream of mmas.
__device__ __forceinline__ void copy_part(const Args& p, Copies& c, unsigned short* s, int k0, bool live, int q0, int q1) {
#pragma unroll
    for (int q = q0; q < q1 && q < NA + NB; ++q) {
        if (q < NA) {
            const bool ok = live && (c.rows >> q & 1) && k0 + c.ka < p.k;
            lab_cp_async16(s + c.sa + q * RA * BK, c.a + q * c.astep, ok ? 16 : 0);
        } else {
            const int i = q - NA;
            const bool ok = live && c.cols && k0 + c.kb + i * RB < p.k;
            unsigned short* d = s + BM * BK + (RB % 8 == 0 ? c.sb + i * RB * BN : b_off(c.kb + i * RB, threadIdx.x % CB));
            lab_cp_async16(d, c.b + i * c.bstep, ok ? 16 : 0);
        }
    }
    if (q0 < NA + NB && q1 >= NA + NB) c.a += BK, c.b += NB * c.bstep;
}

// A warp's fragments of one k16 step from a stage: MT of A (one ldmatrix.x4 each: lanes 0-15 give
// rows 0-15 of the k 0-7 half, lanes 16-31 the k 8-15 half) and NT / 2 of B (row-major k x n,
// transposed on load: lanes 0-15 give k rows 0-15 of one n8 tile, lanes 16-31 those of the next).
template <int MT, int NT>
__device__ __forceinline__ void fragments(unsigned (&af)[MT][4], unsigned (&bf)[NT / 2][4], const unsigned short* A, const unsigned short* B,
                                          int kk, int wr, int wc, int lane) {
#pragma unroll
    for (int i = 0; i < MT; ++i) lab_ldmatrix_x4(af[i], A + a_off(wr + 16 * i + (lane & 15), (kk >> 3) + (lane >> 4)));
#pragma unroll
    for (int j = 0; j < NT / 2; ++j) lab_ldmatrix_x4_trans(bf[j], B + b_off(kk + (lane & 15), ((wc + 16 * j) >> 3) + (lane >> 4)));
}

// The k loop's state: the stages its mmas read and its copies fill next, and the next k16 step's
// fragments (double-buffered in registers).
struct Loop {
    int read, write;
    unsigned af[2][WM / 16][4], bf[2][WN / 16][4];
};

// The warp's tile of the block's: its first row and column.
__device__ __forceinline__ int warp_row() { return (threadIdx.x / 32 / (BN / WN)) * WM; }
__device__ __forceinline__ int warp_col() { return (threadIdx.x / 32 % (BN / WN)) * WN; }

// The ring's first STAGES - 1 k-tiles (of `tiles`, from kt0) copied, and the first fragments read.
__device__ __forceinline__ Loop start(const Args& p, Copies& cp, int kt0, int tiles) {
    extern __shared__ __align__(128) unsigned short stages[];  // STAGES x (BM x BK of A, BK x BN of B)
    constexpr int STAGE = BM * BK + BK * BN;
    Loop l;
#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) {
        copy_part(p, cp, stages + t * STAGE, (kt0 + t) * BK, t < tiles, 0, NA + NB);
        lab_cp_async_commit();  // empty groups keep the count uniform
    }
    lab_cp_async_wait<STAGES - 2>();
    __syncthreads();
    fragments<WM / 16, WN / 8>(l.af[0], l.bf[0], stages, stages + BM * BK, 0, warp_row(), warp_col(), threadIdx.x % 32);
    l.read = 0, l.write = STAGES - 1;
    return l;
}

// One k-tile of the main loop: its mmas, and the copies of the k-tile at k0 (those that are
// `live`) into the stage the ring fills next.
// One barrier a k-tile, at its top: past it, k-tile t + 1 has landed (so the k-tile's last
// k16 step may read the next one's first fragments) and every warp is done with k-tile t - 1
// (so its stage may take the copies of k-tile t + STAGES - 1). The fragments are
// double-buffered: each k16 step reads the next one's from shared memory while its mmas run,
// and no barrier stands between a load and the mmas that hide it. With the barrier between a
// k-tile's two k16 steps instead, ptxas hoists 18 of the last step's 32 mmas above it, the
// next k-tile's ldmatrix comes after it in one burst from all eight warps with 14 mmas to
// hide behind, and the k-tile's first mma holds 16% of the warp stall samples (SASS). The
// price: one copy group fewer in flight at the wait. The next stage's
// copies go out a few at a time between the rows of mmas.
__device__ __forceinline__ void ktile(const Args& p, Copies& cp, Loop& l, int k0, bool live, float (&acc)[WM / 16][WN / 8][4]) {
    extern __shared__ __align__(128) unsigned short stages[];
    constexpr int MT = WM / 16, NT = WN / 8, KK = BK / 16, STAGE = BM * BK + BK * BN;
    static_assert(COPY_ROWS >= 1 && COPY_ROWS <= KK * MT, "the copies follow the first COPY_ROWS of a k-tile's KK x MT rows of mmas");
    constexpr int PER = (NA + NB + COPY_ROWS - 1) / COPY_ROWS;  // copies after each of those rows
    const int wr = warp_row(), wc = warp_col(), lane = threadIdx.x % 32;
    lab_cp_async_wait<STAGES - 3>();
    __syncthreads();
    unsigned short* const next = stages + l.write * STAGE;
    const int ahead = l.read + 1 == STAGES ? 0 : l.read + 1;
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) {
        const int cur = kk % 2;  // KK is 2 or 4: each k-tile starts on set 0
        const unsigned short* src = stages + (kk == KK - 1 ? ahead : l.read) * STAGE;
        fragments<MT, NT>(l.af[cur ^ 1], l.bf[cur ^ 1], src, src + BM * BK, kk == KK - 1 ? 0 : 16 * (kk + 1), wr, wc, lane);
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            lab_mma_row<NT>(acc[i], l.af[cur][i], l.bf[cur], i % 2);
            copy_part(p, cp, next, k0, live, (kk * MT + i) * PER, (kk * MT + i + 1) * PER);
        }
    }
    lab_cp_async_commit();
    l.read = ahead;
    l.write = l.write + 1 == STAGES ? 0 : l.write + 1;
}

// acc = the warp's share of the tile at (row0, col0) over k-tiles kt0 .. kt1 - 1.
__device__ __forceinline__ void product(const Args& p, int row0, int col0, int kt0, int kt1, float (&acc)[WM / 16][WN / 8][4]) {
    const int tiles = kt1 - kt0;
    Copies cp = copies(p, row0, col0, kt0);
    lab_zero(acc);
    Loop l = start(p, cp, kt0, tiles);
    for (int t = 0; t < tiles; ++t) ktile(p, cp, l, (kt0 + t + STAGES - 1) * BK, t + STAGES - 1 < tiles, acc);
    lab_cp_async_wait<0>();  // no copy outlives the unit, even an empty group's
}

#if PERSISTENT
// PERSISTENT = 1 (with STREAMK): the host launches p.sk_blocks blocks, one an SM, and each walks
// the whole tiles blockIdx.x, + gridDim.x, ... before its stream-K pieces, the ring running on
// from one tile into the next: a tile's first stages are copied during the last k-tiles of the
// one before and its first fragments read by that one's last k16 step, so neither the ring's fill
// nor C's stores stand between two tiles' mmas, as they do between one-tile blocks.
static_assert(STREAMK, "the persistent walk gives its last partial wave to stream-K");

__device__ __forceinline__ void walk_tile(int i, int tilesN, int tilesM, int& row0, int& col0) {
    int tr, tc;
    lab_grouped_tile<GROUP_M>(blockIdx.x + i * gridDim.x, tilesN, tilesM, tr, tc);
    row0 = tr * BM, col0 = tc * BN;
}

// The block's whole tiles first .. first + n - 1, of kt k-tiles each, C stored after each. The
// last STAGES - 1 k-tiles of a tile copy the next one's first: a loop of their own, so no branch
// splits the k loop (kt >= STAGES - 1, or n = 1).
__device__ __forceinline__ void walk(const Args& p, int first, int n, int kt, int tilesN, int tilesM, float (&acc)[WM / 16][WN / 8][4]) {
    int row0, col0;
    walk_tile(first, tilesN, tilesM, row0, col0);
    Copies cp = copies(p, row0, col0, 0);
    Loop l = start(p, cp, 0, kt);
    for (int i = first; i < first + n; ++i) {
        lab_zero(acc);
        int t = 0;
        for (; t + STAGES - 1 < kt; ++t) ktile(p, cp, l, (t + STAGES - 1) * BK, true, acc);
        const bool more = i + 1 < first + n;
        if (more) {
            walk_tile(i + 1, tilesN, tilesM, row0, col0);
            cp = copies(p, row0, col0, 0);
        }
        for (int s = 0; t < kt; ++t, ++s) ktile(p, cp, l, s * BK, more, acc);
        walk_tile(i, tilesN, tilesM, row0, col0);
        lab_store_m16n8(lab_ptr<float>(p.c), p.ldc, p.m, p.n, row0 + warp_row(), col0 + warp_col(), acc);
    }
    lab_cp_async_wait<0>();
    __syncthreads();  // the ring is free for the next walk or the stream-K pieces
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS) fp16_04_mma_ldmatrix(Args p) {
    const int warp = threadIdx.x / 32;
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;
    float acc[WM / 16][WN / 8][4];
#if STREAMK
    // The schedule and the unit live in shared memory, written by thread 0 between barriers, as
    // in the SGEMM rungs: none of it is held in registers across the main loop.
    __shared__ lab_sk_tiles<BM, BN, BK> sched;
    __shared__ lab_sk_unit w;
    const int tilesN = (p.n + BN - 1) / BN, tilesM = (p.m + BM - 1) / BM;
#if PERSISTENT
    if (threadIdx.x == 0) sched.init(p);
    __syncthreads();
    const int n = (int)blockIdx.x < sched.whole ? (sched.whole - 1 - blockIdx.x) / gridDim.x + 1 : 0, kt = sched.ktiles;
    if (kt >= STAGES - 1) {
        if (n > 0) walk(p, 0, n, kt, tilesN, tilesM, acc);
    } else {
        for (int i = 0; i < n; ++i) walk(p, i, 1, kt, tilesN, tilesM, acc);
    }
#endif
    for (int u = 0;; ++u) {
        if (threadIdx.x == 0) {
#if PERSISTENT
            // Every block is a stream-K one here, its index blockIdx.x.
            if (!sched.share_piece(blockIdx.x, u, w)) w.id = -1;
#else
            if (u == 0) sched.init(p);
            if (!sched.unit(u, w)) w.id = -1;
#endif
        }
        __syncthreads();  // (and, u > 0: every warp is done with the ring)
        if (w.id < 0) break;
        int tr, tc;
        lab_grouped_tile<GROUP_M>(w.id, tilesN, tilesM, tr, tc);
        product(p, tr * BM, tc * BN, w.k0, w.k1, acc);
        if (sched.piece(w) && !lab_sk_fixup<THREADS>(p, sched, w, reinterpret_cast<float(&)[WM / 16 * WN / 8 * 4]>(acc))) continue;
        lab_grouped_tile<GROUP_M>(w.id, tilesN, tilesM, tr, tc);
        lab_store_m16n8(lab_ptr<float>(p.c), p.ldc, p.m, p.n, tr * BM + wr, tc * BN + wc, acc);
        __syncthreads();  // every thread has read w
    }
#else
    int row0, col0;
    tile_origin(row0, col0);
    product(p, row0, col0, 0, (p.k + BK - 1) / BK, acc);
    lab_store_m16n8(lab_ptr<float>(p.c), p.ldc, p.m, p.n, row0 + wr, col0 + wc, acc);
#endif
}
