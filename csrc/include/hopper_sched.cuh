// The Hopper GEMM's tile schedulers, one type each: which units of work (a tile's k-tiles, or a
// stream-K piece of them) a block computes, in which order, and where a tile lies in C. Tile ids
// are rasterised in groups: consecutive ids walk GROUP_M cluster rows down one tile column (the
// blocks of a cluster taking adjacent tile rows), so a wave's A and B stay in L2.
//   lab_data_parallel<CY>  one tile a block, by its grid position (the host rounds the grid up to
//                          whole clusters of CY blocks on adjacent tile rows)
//   lab_persistent<CY>     one resident block (or cluster of CY) an SM walks every gridDim.x-th
//                          tile in the grouped order (fast.cu's kernel 12 with CY = 2)
//   lab_stream_k<F>, lab_stream_k_helpers<F, U>   hopper_stream_k.cuh: persistent, the tail wave
//                          split by k-tiles
// A scheduler gives the kernel units(), unit(u, w) and at(id, row0, col0); `stream_k` says whether
// its pieces need a fixup (the scheduler's fixup()) before C is stored.
#pragma once
#include "lab_gemm.h"
#include "lab_device.cuh"

// Consumer warpgroup wg's first row in a tile of kernel configuration K, and its part of the
// tiles. (Expressions rather than functions: written as calls, the compiler associates the ring's
// address arithmetic otherwise and the SASS changes.)
#define LAB_WG_ROW(K, wg) (K::ping_pong ? 0 : ((wg) - 1) * 64 * K::MT)
#define LAB_WG_PART(K, wg) (K::ping_pong ? 0 : (wg) - 1)

// A compile-time choice between two parts: lab_if<C, A, B> is A where C holds, else B (NVRTC has
// no <type_traits>). Rungs whose manifest entries or tuning choose a part by a define use it.
template <bool C, class A, class B>
struct lab_if_t {
    typedef A type;
};
template <class A, class B>
struct lab_if_t<false, A, B> {
    typedef B type;
};
template <bool C, class A, class B>
using lab_if = typename lab_if_t<C, A, B>::type;

// A block's share of work: k-tiles k0 .. k1 - 1 of tile `id`; a stream-K piece has `slot`, its
// place in p.partials (two a block), and the number of the stream-K tile, `sk`.
struct lab_unit {
    int id, k0, k1, slot, sk;
};

// What every scheduler keeps: the tile grid, and (stream-K) this block's units worked out once:
// `mine` whole tiles and `pieces` stream-K pieces, the first of stream-K tile j0 from k-tile k0,
// its share ending e k-tiles past j0's first (past ktiles, the second piece: the next tile's first
// e - ktiles). Worked out per unit, a division would stand between a ping-pong consumer's main loop
// and its handover of the turn, and the other consumer would wait on it every unit: 32 bits for
// whole tiles, and for stream-K three calls of the 64-bit division routine. Without them, the
// 128 x 128 ping-pong runs 1-2% closer to cuBLAS at 4096^3 and its stream-K form 2%.
template <int CY>
struct lab_tiles {
    static constexpr int cluster = CY;
    static_assert(CY == 1 || CY == 2, "one block, or two on adjacent tile rows sharing B");
    int columns, cluster_rows, rank, ktiles, whole, blocks;
    int last_steps;   // the k-steps (BK / 4 elements each) of the last k-tile that hold data
    long long split;  // k-tiles of the stream-K tiles, shared by all the blocks
    int mine, pieces, j0, k0, e;
    __device__ __forceinline__ void k_tiles(const lab_gemm_tc_args& g) {
        ktiles = (g.k + BK - 1) / BK;
        last_steps = (g.k - (ktiles - 1) * BK + BK / 4 - 1) / (BK / 4);
        pieces = 0, j0 = 0, k0 = 0, e = 0;
    }
    // gridDim.x clusters of gridDim.y = CY blocks, persistent.
    __device__ __forceinline__ void grid(const lab_gemm_tc_args& g) {
        columns = (g.n + BN - 1) / BN, cluster_rows = (g.m + BM * CY - 1) / (BM * CY), rank = blockIdx.y, blocks = gridDim.x;
    }
    __device__ __forceinline__ int units() const { return mine + pieces; }
    // The first k-tile of the stream-K work of block b under the even split (its share runs to
    // that of b + 1).
    __device__ __forceinline__ long long share(int b) const { return b * split / blocks; }
    // Stream-K piece i (0 or 1) of this block's share under the even split.
    __device__ __forceinline__ lab_unit piece(int i) const {
        const int b = blockIdx.x;
        return i == 0 ? lab_unit{whole + j0, k0, min(ktiles, e), 2 * b, j0} : lab_unit{whole + j0 + 1, 0, e - ktiles, 2 * b + 1, j0 + 1};
    }
    // The unit at which the pieces start when they come first (the helpers' split places one later).
    __device__ __forceinline__ int pieces_at() const { return 0; }
    // The u-th unit of a persistent block's work, false when it has no more: its whole tiles, and
    // its pieces (S::piece) after them or (F) from unit S::pieces_at() on.
    template <bool F, class S>
    __device__ __forceinline__ bool walk(const S& s, int u, lab_unit& w) const {
        if (u >= units()) return false;
        const int at = !F ? mine : s.pieces_at();  // the unit at which the pieces start
        const int p = u - at;                       // the piece this unit is, if 0 or 1
        if (p >= 0 && p < pieces) {
            w = s.piece(p);
        } else {
            w = {(int)blockIdx.x + (!F || u < at ? u : u - pieces) * blocks, 0, ktiles, 0, 0};
        }
        return true;
    }
    // The first row and column of C of tile `id`.
    __device__ __forceinline__ void at(int id, int& row0, int& col0) const {
        const int per_group = GROUP_M * columns, group = id / per_group * GROUP_M;
        const int rows = min(cluster_rows - group, GROUP_M);
        row0 = ((group + id % per_group % rows) * CY + rank) * BM, col0 = id % per_group / rows * BN;
    }
};

template <int CY>
struct lab_data_parallel : lab_tiles<CY> {
    static constexpr bool persistent = false, stream_k = false;
    __device__ __forceinline__ lab_data_parallel(const lab_gemm_tc_args& g) {
        this->k_tiles(g);
        // The host rounds the grid up to whole clusters.
        this->columns = gridDim.x, this->cluster_rows = gridDim.y / CY, this->rank = blockIdx.y % CY;
        this->whole = 1, this->blocks = 1, this->split = 0, this->mine = 1;
    }
    // The u-th unit of this block's work; false when it has no more.
    __device__ __forceinline__ bool unit(int u, lab_unit& w) const {
        if (u >= this->units()) return false;
        w = {(int)(blockIdx.y / CY * gridDim.x + blockIdx.x), 0, this->ktiles, 0, 0};
        return true;
    }
};

// Whole tiles only: every gridDim.x-th of them (with a cluster, of its cluster's rows, at its
// rank's tile row). The pair of a cluster has the same units, so every stage holds the same
// k-tile in both blocks and each consumer's release frees it in both.
template <int CY>
struct lab_persistent : lab_tiles<CY> {
    static constexpr bool persistent = true, stream_k = false;
    __device__ __forceinline__ lab_persistent(const lab_gemm_tc_args& g) {
        this->k_tiles(g);
        this->grid(g);
        const int tiles = this->columns * this->cluster_rows, b = blockIdx.x;
        this->whole = tiles;
        this->split = (long long)(tiles - this->whole) * this->ktiles;
        this->mine = b < this->whole ? (this->whole - 1 - b) / this->blocks + 1 : 0;
    }
    // The walk of lab_stream_k's units with no pieces (their count is 0): its whole tiles. (A
    // walk of whole tiles alone, without the pieces' dead branch, compiles fp8's persistent loop
    // to other SASS.)
    __device__ __forceinline__ bool unit(int u, lab_unit& w) const { return this->template walk<false>(*this, u, w); }
};
