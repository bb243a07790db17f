// The Hopper GEMM's stream-K schedulers: persistent blocks (one an SM) whose last, partial wave of
// tiles is not given out whole but split by k-tiles. F (a tunable constant, the manifests'
// STREAMK_FIRST) takes a block's pieces before its whole tiles instead of after them.
//   lab_stream_k<F>             the even split (Osama et al., PPoPP 2023): the tail's k-tiles
//                               shared evenly by all the blocks, a share spanning at most two tiles
//   lab_stream_k_helpers<F, U>  a last-wave tile's own block keeps its first k-tiles; the blocks
//                               that wave leaves idle (the helpers) take its last ones
// A piece's accumulators go to a slot of p.partials; fixup<K>() says whether this warpgroup's
// piece is the one that stores C, after adding the others' slots. Nothing waits for a block that
// is not resident, so no order of the blocks can deadlock. A ping-pong consumer's piece is a whole
// tile's rows (K::TILE_PARTS = 1), so one consumer's fixup runs while the other's wgmmas do.
#pragma once
#include "hopper_sched.cuh"

// A piece's slot (both fixups): each thread's registers in fours, i-major, so every access is a
// 16-byte one and coalesced: a quarter of the instructions of one access a register (16-byte reads
// time within noise of 4-byte ones). The host gives each slot a tile of C's type (TILE_PARTS parts
// of R registers of 128 threads). `put` stores this piece's accumulators, seen by any block that
// reads the slot after this warpgroup's arrival; `add` adds another slot into d. (As lambdas: as
// members of a struct the compiler orders the kernel's shared variables otherwise, which moves
// their addresses in the SASS.)

// The even split. Taken after a block's whole tiles (F = 0), the pieces end together, and so do
// the last pieces' fixups (reading the other slots, storing C): under ncu at base clocks (128 x 192
// ping-pong, 4096^3) the pieces alone end level with the even split, 280k cycles on the slowest
// SM; the partial stores and arrivals add 6k, the last pieces' reads and C stores 30k more, as much
// as stream-K saves over whole tiles. F = 1 takes the pieces first: a fixup then overlaps the other
// consumer's main loop (ping-pong) or other blocks' tiles, and the blocks still end together.
template <int F>
struct lab_stream_k : lab_tiles<1> {
    static constexpr bool persistent = true, stream_k = true;
    __device__ __forceinline__ lab_stream_k(const lab_gemm_tc_args& g) {
        k_tiles(g);
        grid(g);
        const int tiles = columns * cluster_rows, b = blockIdx.x;
        whole = ktiles > 0 ? tiles - tiles % blocks : tiles;
        split = (long long)(tiles - whole) * ktiles;
        mine = b < whole ? (whole - 1 - b) / blocks + 1 : 0;
        const long long s = share(b), end = share(b + 1);
        if (s < end) {  // a share is shorter than a tile, so it spans one tile or two
            j0 = (int)(s / ktiles), k0 = (int)(s - (long long)j0 * ktiles), e = (int)(end - (long long)j0 * ktiles);
            pieces = e > ktiles ? 2 : 1;
        }
    }
    // The u-th unit of this block's work; false when it has no more. The base's walk() written
    // out, its pieces first (F) from unit 0: through walk() the compiler numbers the registers of
    // this block's units otherwise, and ptxas allocates them otherwise.
    __device__ __forceinline__ bool unit(int u, lab_unit& w) const {
        if (u >= units()) return false;
        const int at = !F ? mine : 0;  // the unit at which the pieces start
        const int p = u - at;          // the piece this unit is, if 0 or 1
        if (p >= 0 && p < pieces) {
            w = piece(p);
        } else {
            w = {(int)blockIdx.x + (!F || u < at ? u : u - pieces) * blocks, 0, ktiles, 0, 0};
        }
        return true;
    }
    // A piece's end (consumer warpgroup wg - 1): its accumulators to its slot, one arrival on the
    // counter of its part of the tile; the last piece to arrive adds the others' slots into d and
    // returns true (it stores C), zeroing the counter for the next launch.
    template <class K>
    __device__ __forceinline__ bool fixup(const lab_gemm_tma_args& p, const lab_unit& w, typename K::acc (&d)[K::MT][BN / 2], int wg, int tid) const {
        typedef typename K::acc4 acc4;
        constexpr int MT = K::MT, R = MT * BN / 2;  // registers a thread
        acc4* partials = lab_ptr<acc4>(p.partials);
        auto at = [&](int slot, int m, int q) { return partials + ((size_t)(K::TILE_PARTS * slot + LAB_WG_PART(K, wg)) * (R / 4) + m * (BN / 8) + q) * 128 + tid; };
        auto put = [&]() {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int q = 0; q < BN / 8; ++q) __stcg(at(w.slot, m, q), acc4{d[m][4 * q], d[m][4 * q + 1], d[m][4 * q + 2], d[m][4 * q + 3]});
            __threadfence();
            asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
        };
        auto add = [&](int slot) {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int q = 0; q < BN / 8; ++q) {
                    const acc4 v = __ldcg(at(slot, m, q));
                    d[m][4 * q] += v.x, d[m][4 * q + 1] += v.y, d[m][4 * q + 2] += v.z, d[m][4 * q + 3] += v.w;
                }
        };
        unsigned* count = lab_ptr<unsigned>(p.arrivals) + 2 * w.sk + LAB_WG_PART(K, wg);
        __shared__ int last[2];
        put();
        // The tile's pieces: the blocks whose shares hold its first and last k-tile, and those between
        // whose shares are not empty (with fewer stream-K k-tiles than blocks, some are).
        const long long first = (long long)w.sk * ktiles, end = first + ktiles;
        const int b0 = (int)(((first + 1) * blocks - 1) / split), b1 = (int)((end * blocks - 1) / split);
        if (tid == 0) {
            unsigned pieces = 0;
            for (int b = b0; b <= b1; ++b) pieces += share(b) < share(b + 1);
            last[wg - 1] = atomicAdd(count, 1u) == pieces - 1;
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
        if (!last[wg - 1]) return false;
        __threadfence();
        for (int b = b0; b <= b1; ++b) {
            const int slot = 2 * b + (share(b) / ktiles == w.sk ? 0 : 1);
            if (slot == w.slot || share(b) == share(b + 1)) continue;
            add(slot);
        }
        if (tid == 0) *count = 0;
        return true;
    }
};

// The helpers' split: the last wave's T tiles are split another way. Block b < T keeps tile b's
// first k-tiles; the blocks that wave leaves idle (the helpers) take its last e = ktiles / (h + 1),
// h the most tiles one helper takes a piece of. A helper's piece goes to a slot and raises the
// tile's flag; the tile's own block waits for the flag, adds the slot and stores C. So the T
// blocks read the same k-tiles of their tiles at the same time, as a whole wave does (the even
// split's pieces start at other k-tiles on every block, which loses the SMs their shared L2
// reads), and only the helpers' pieces cross L2. With F = 1 the pieces come first: the wait
// overlaps the other consumer's tile, and all the blocks then walk their whole tiles in step.
// U (the manifests' OWNER_UNIT, with F = 1) takes a tile's own block's piece as its unit U instead
// (its whole tiles before and after it): a helper writes its slots in turn, the last of its three
// or four after all its pieces' main loops, so an own block that takes its piece first waits for
// the slot while its next unit is due. At 4096^3 the busiest SM runs 277.7k cycles with U = 0,
// 271.0k with 1 and 270.9k with 2 (ncu). The helpers wait for nothing, and every block of the
// persistent grid is resident, so a waiting block waits on one that runs. At 4096^3, 128 x 128, 6
// stages (7.76 waves, e = 12 of 64) it runs level with cuBLASLt's best (0.99x-1.00x) and 2-3%
// ahead of whole tiles (275k-278k cycles elapsed under ncu against 281k-283k). With the pieces
// last the blocks wait at the end for helpers slower than them (about 3.5% slower); e of 10, 14 or
// 16, or the helpers' k-tiles split evenly over them (two pieces for some tiles), are slower than
// e = 12.
template <int F, int U>
struct lab_stream_k_helpers : lab_tiles<1> {
    static constexpr bool persistent = true, stream_k = true;
    static_assert(U == 0 || F, "the own block's piece placed among the units: the pieces first");
    __device__ __forceinline__ lab_stream_k_helpers(const lab_gemm_tc_args& g) {
        k_tiles(g);
        grid(g);
        const int tiles = columns * cluster_rows, b = blockIdx.x;
        whole = ktiles > 0 ? tiles - tiles % blocks : tiles;
        // The last wave's T tiles: block b < T keeps tile whole + b's first k-tiles, and the
        // blocks that wave leaves idle take its last e = ktiles / (h + 1) (h: the most tiles one
        // of them helps), pieces j0 = b - T, + idle, ... of theirs. e = 0: no split.
        const int tail = tiles - whole, idle = blocks - tail;
        e = tail > 0 ? ktiles / ((tail + idle - 1) / idle + 1) : 0;
        if (e == 0) whole = tiles;
        j0 = b - tail, k0 = idle;
        pieces = e == 0 ? 0 : b < tail ? 1 : j0 < tail ? (tail - 1 - j0) / idle + 1 : 0;
        split = 0;
        mine = b < whole ? (whole - 1 - b) / blocks + 1 : 0;
    }
    // Piece i of this block's: j0 < 0, its own last-wave tile's first k-tiles; else the last
    // k-tiles of tail tile j0 + i k0.
    __device__ __forceinline__ lab_unit piece(int i) const {
        const int b = blockIdx.x;
        if (j0 < 0) return lab_unit{whole + b, 0, ktiles - e, b, b};
        const int j = j0 + i * k0;
        return lab_unit{whole + j, ktiles - e, ktiles, j, j};
    }
    // With the pieces first, a last-wave tile's own block takes its one piece at unit U.
    __device__ __forceinline__ int pieces_at() const { return j0 < 0 && pieces == 1 ? min(U, mine) : 0; }
    __device__ __forceinline__ bool unit(int u, lab_unit& w) const { return walk<F>(*this, u, w); }
    // A helper's piece goes to its slot and raises the tile's flag (count); the tile's own block
    // waits for the flag, adds the slot and stores C. Only the helpers' slots cross L2.
    template <class K>
    __device__ __forceinline__ bool fixup(const lab_gemm_tma_args& p, const lab_unit& w, typename K::acc (&d)[K::MT][BN / 2], int wg, int tid) const {
        typedef typename K::acc4 acc4;
        constexpr int MT = K::MT, R = MT * BN / 2;  // registers a thread
        acc4* partials = lab_ptr<acc4>(p.partials);
        auto at = [&](int slot, int m, int q) { return partials + ((size_t)(K::TILE_PARTS * slot + LAB_WG_PART(K, wg)) * (R / 4) + m * (BN / 8) + q) * 128 + tid; };
        auto put = [&]() {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int q = 0; q < BN / 8; ++q) __stcg(at(w.slot, m, q), acc4{d[m][4 * q], d[m][4 * q + 1], d[m][4 * q + 2], d[m][4 * q + 3]});
            __threadfence();
            asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
        };
        auto add = [&](int slot) {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int q = 0; q < BN / 8; ++q) {
                    const acc4 v = __ldcg(at(slot, m, q));
                    d[m][4 * q] += v.x, d[m][4 * q + 1] += v.y, d[m][4 * q + 2] += v.z, d[m][4 * q + 3] += v.w;
                }
        };
        unsigned* count = lab_ptr<unsigned>(p.arrivals) + 2 * w.sk + LAB_WG_PART(K, wg);
        if (w.k0 > 0) {
            put();
            if (tid == 0) atomicAdd(count, 1u);
            return false;
        }
        if (tid == 0)
            while (atomicAdd(count, 0u) == 0) __nanosleep(64);
        asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
        __threadfence();
        add(w.slot);
        if (tid == 0) *count = 0;
        return true;
    }
};
