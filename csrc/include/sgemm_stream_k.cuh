// Stream-K for the one-tile-a-block SGEMM rungs (STREAMK = 1, the sgemm protocol; Osama et al.,
// PPoPP 2023). The host launches a 1-D grid: the first `whole` blocks take one tile each, `whole`
// being the tiles of full waves of p.sk_blocks blocks; the last p.sk_blocks blocks split the
// k-steps of the tiles left over, the partial wave that would leave SMs idle, evenly between
// them, a block's share spanning at most two tiles. p.sk_blocks is one block a resident slot,
// or, where there are two or more slots a tile (fewer tiles than SMs), the tiles times the whole
// number of slots each gets, so every tile is cut into the same number of equal pieces.
// A piece that is not a whole tile writes its accumulators to a slot of p.partials and counts
// itself on the tile's counter in p.arrivals; the last piece of a tile to arrive adds the other
// slots to its own, stores C and zeroes the counter for the next launch. Nothing waits for
// another block, so no order of the blocks can deadlock. The schedule is the one wgmma_gemm.cuh
// runs for the Tensor Core rungs, written here for blocks that each own one tile or pieces (no
// persistent walk); the bounds of a tile's pieces are found by a scan over the blocks' shares,
// checked against a simulation of 18,000 random (tiles, blocks, k-steps) and by `verify --fuzz`.
#pragma once
#include "lab_gemm.h"
#include "lab_device.cuh"

#ifndef STREAMK
#define STREAMK 0
#endif

// Steps k0 .. k1 - 1 of tile `id` (in the grouped order); a piece's slot in p.partials (two a
// block) and the number of its stream-K tile, `sk`.
struct lab_sk_unit {
    int id, k0, k1, slot, sk;
};

// A kernel keeps it in shared memory (thread 0 calls init, then a barrier): its fields are read
// where needed, not held in registers across the main loop, where the accumulators need them.
template <int kBm, int kBn, int kBk>
struct lab_sk_tiles {
    int ktiles, whole, blocks;
    // The stream-K tiles' k-steps, split = q * blocks + r: q < ktiles, as there are fewer such tiles
    // than blocks, so a share is found without a 64-bit division (whose call would make ptxas
    // spill the accumulators around it in the fixup).
    int q, r;

    __device__ __forceinline__ void init(const lab_gemm_f32_args& p) {
        ktiles = (p.k + kBk - 1) / kBk;
        const int tiles = ((p.m + kBm - 1) / kBm) * ((p.n + kBn - 1) / kBn);
        blocks = p.sk_blocks;
        whole = tiles - tiles % blocks;
        const long long split = (long long)(tiles - whole) * ktiles;
        q = (int)(split / blocks), r = (int)(split % blocks);
    }
    // The first k-step of the stream-K work of stream-K block b, b * split / blocks (its share
    // runs to that of b + 1); b * r < blocks^2 fits 32 bits.
    __device__ __forceinline__ long long share(int b) const { return (long long)b * q + b * r / blocks; }
    // Piece i (0 or 1) of stream-K block b's share (a share spans at most two tiles); false where
    // it has none.
    __device__ __forceinline__ bool share_piece(int b, int i, lab_sk_unit& w) const {
        const long long s = share(b), e = share(b + 1), x = i == 0 ? s : (s / ktiles + 1) * ktiles;
        if (i > 1 || x >= e) return false;
        const int j = (int)(x / ktiles);
        w = {whole + j, (int)(x - (long long)j * ktiles), (int)min((long long)ktiles, e - (long long)j * ktiles), 2 * b + i, j};
        return true;
    }
    // This block's u-th unit of work; false when it has no more.
    __device__ __forceinline__ bool unit(int u, lab_sk_unit& w) const {
        const int b = blockIdx.x - whole;
        if (b < 0) {
            w = {(int)blockIdx.x, 0, ktiles, 0, 0};
            return u == 0;
        }
        return share_piece(b, u, w);
    }
    // Whether w is a piece of a tile (not all of its k-steps).
    __device__ __forceinline__ bool piece(const lab_sk_unit& w) const { return w.k1 - w.k0 < ktiles; }
};

// A piece's end: its kR accumulators a thread to its slot (i-major, so every access is coalesced),
// one arrival on the tile's counter; the last piece to arrive adds the others' slots into acc and
// returns true (it stores C). Every thread of the block calls it.
template <int kThreads, int kBm, int kBn, int kBk, int kR>
__device__ __forceinline__ bool lab_sk_fixup(const lab_gemm_f32_args& p, const lab_sk_tiles<kBm, kBn, kBk>& t, const lab_sk_unit& w,
                                             float (&acc)[kR]) {
    __shared__ int last;
    const int tid = threadIdx.x;
    float* partials = lab_ptr<float>(p.partials);
    auto at = [&](int slot, int i) { return partials + ((size_t)slot * kR + i) * kThreads + tid; };
#pragma unroll
    for (int i = 0; i < kR; ++i) __stcg(at(w.slot, i), acc[i]);
    __threadfence();
    __syncthreads();
    // The tile's pieces: the blocks b0 .. b1 whose shares hold its first and last k-step (this
    // block is one), less those between whose shares are empty (with fewer stream-K k-steps than
    // blocks, some are). b0's piece is its second where its share starts in an earlier tile.
    const long long first = (long long)w.sk * t.ktiles, end = first + t.ktiles;
    int b0 = w.slot / 2, b1 = b0;
    while (t.share(b0) > first) --b0;
    while (t.share(b1 + 1) < end) ++b1;
    unsigned* count = lab_ptr<unsigned>(p.arrivals) + w.sk;
    if (tid == 0) {
        unsigned pieces = 0;
        for (int b = b0; b <= b1; ++b) pieces += t.share(b) < t.share(b + 1);
        last = atomicAdd(count, 1u) == pieces - 1;
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
    for (int b = b0; b <= b1; ++b) {
        const int slot = 2 * b + (b == b0 && t.share(b0) < first);
        if (slot == w.slot || t.share(b) == t.share(b + 1)) continue;
#pragma unroll
        for (int i = 0; i < kR; ++i) acc[i] += __ldcg(at(slot, i));
    }
    if (tid == 0) *count = 0;
    return true;
}
