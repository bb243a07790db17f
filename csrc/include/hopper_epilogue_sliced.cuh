// The persistent blocks' epilogue (lab_sliced_epilogue): the ring already holds the next tile's
// stages, so C goes through a buffer of the block's own past the ring. Where C's rows are 16-byte
// aligned (p.c_tma), by TMA-store boxes the warpgroup does not wait for (K::C_BUFS buffers of MT
// boxes of 64 rows x 128 bytes: two where the ring leaves room, one where only that does, as for
// 6 stages of 128 x 128, none where not even one fits); else SLICE columns at a time by coalesced
// stores. The ping-pong tiles (two 64-row blocks a warpgroup) store by TMA too: by coalesced writes
// their C store, which ends the kernel, takes 13.5k cycles, and fp16_07 runs 0.89x cuBLAS at
// 4096^3 against 0.92x. bf16 gains up to 6% on short-K shapes, with TMA stores or coalesced ones alike.
#pragma once
#include "hopper_epilogue.cuh"

struct lab_sliced_epilogue {
    static constexpr bool sliced = true;

    // Each box of 64 rows x 32 columns goes out by a TMA store, a bulk group of its own, which the
    // warpgroup does not wait for (only, before refilling one of its C_BUFS x MT box slots, for
    // the group that last used it to have read it), so C's writes overlap the next tile's wgmmas
    // and one box's store overlaps the next box's writes. (With a bulk group for each slice of MT
    // boxes, a lone slice buffer, as at 6 stages of 128 x 128, would make every slice wait for the
    // one before to be read: the block's last tile, whose C nothing overlaps, pays about 5.5k
    // cycles at 4096x4224x4096. A group a box: 273.0k cycles against 277.4k, and the _helpers
    // entries 0.2%-1.8% faster at 4096^3.) A box holds its 64 rows as the map's 128-byte swizzle
    // lays them out: 16-byte chunk c of row r at chunk c ^ (r % 8). The accumulators' 8-byte stores
    // meet a 2-way bank conflict there (a half-warp's rows g and g ^ 1 share chunks); storing them
    // without it saves no cycles. A box wholly below m is not stored (an edge tile's empty 64-row
    // block).
    template <class K>
    static __device__ __forceinline__ void boxes(const lab_gemm_tma_args& p, const typename K::acc (&d)[K::MT][BN / 2], unsigned char* ring, int wg,
                                                 int tid, int top, int col0, int height, int width) {
        constexpr int MT = K::MT, TS = LAB_TMA_C_COLS, C_BOX = K::C_BOX;
        const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
        static_assert(TS * 4 == 128 && LAB_TMA_C_ROWS == 64, "the host's C map boxes: 64 rows of 128 bytes");
        constexpr int WHOLE = BN / TS * TS;  // columns that fill boxes; the rest go straight from the registers
        constexpr int SLOTS = K::C_BUFS * MT;
        unsigned char* slots = ring + K::RING_BYTES + (wg - 1) * SLOTS * C_BOX;
#pragma unroll
        for (int c0 = 0; c0 < WHOLE; c0 += TS)
#pragma unroll
            for (int m = 0; m < MT; ++m) {
                unsigned char* box = slots + ((c0 / TS * MT + m) % SLOTS) * C_BOX;
                if (tid == 0) lab_bulk_wait_read<SLOTS - 1>();
                asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");  // the slot is free
#pragma unroll
                for (int j = c0 / 8; j < (c0 + TS) / 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int r = 16 * w + g + 8 * h, byte = 4 * (8 * j - c0 + 2 * tq);
                        *reinterpret_cast<typename K::acc2*>(box + r * 128 + ((byte / 16) ^ (r % 8)) * 16 + byte % 16) = {d[m][4 * j + 2 * h],
                                                                                                                       d[m][4 * j + 2 * h + 1]};
                    }
                asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // visible to the TMA unit
                asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
                if (tid == 0) {
                    if (top + 64 * m < p.g.m) lab_tma_store_2d(&p.c_map, box, col0 + c0, top + 64 * m);
                    lab_bulk_commit();
                }
            }
        // A box would spill into the next tile's columns: the last BN - WHOLE go from the registers.
        if (WHOLE < BN) lab_store_c_regs<K, WHOLE / 8, BN / 8>(p, d, tid, top, col0, height, width);
    }

    // SLICE columns at a time: the accumulators' pieces in, then whole rows out (coalesced; 16-byte
    // vectors where C's rows allow). Straight from the registers, odd rows (4097) make 4-byte
    // stores of 16-byte pieces and cost the persistent rungs 15%.
    template <class K>
    static __device__ __forceinline__ void rows(const lab_gemm_tma_args& p, const typename K::acc (&d)[K::MT][BN / 2], unsigned char* ring, int wg,
                                                int tid, int top, int col0, int height, int width) {
        typedef typename K::acc acc;
        constexpr int MT = K::MT, SLICE = K::SLICE, SPITCH = K::SPITCH;
        const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
        acc* stage = reinterpret_cast<acc*>(ring + K::RING_BYTES) + (wg - 1) * 64 * MT * SPITCH;
        acc* out = lab_ptr<acc>(p.g.c) + (size_t)max(top, 0) * p.g.ldc + col0;
#pragma unroll
        for (int c0 = 0; c0 < BN; c0 += SLICE) {
            asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");  // the last slice is out
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int j = c0 / 8; j < min(c0 + SLICE, BN) / 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        *reinterpret_cast<typename K::acc2*>(stage + (64 * m + 16 * w + g + 8 * h) * SPITCH + 8 * j - c0 + 2 * tq) = {
                            d[m][4 * j + 2 * h], d[m][4 * j + 2 * h + 1]};
            asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
            if ((p.g.ldc & 3) == 0 && c0 + SLICE <= width) {
                for (int i = tid; i < height * (SLICE / 4); i += 128) {
                    const int r = i / (SLICE / 4), c = i % (SLICE / 4) * 4;
                    *reinterpret_cast<uint4*>(out + (size_t)r * p.g.ldc + c0 + c) = *reinterpret_cast<const uint4*>(stage + r * SPITCH + c);
                }
            } else {
                for (int i = tid; i < height * SLICE; i += 128) {
                    const int r = i / SLICE, c = i % SLICE;
                    if (c0 + c < width) out[(size_t)r * p.g.ldc + c0 + c] = stage[r * SPITCH + c];
                }
            }
        }
    }

    template <class K>
    static __device__ __forceinline__ void store(const lab_gemm_tma_args& p, const typename K::acc (&d)[K::MT][BN / 2], unsigned char* ring, int wg,
                                                 int tid, int row0, int col0) {
        const int top = row0 + LAB_WG_ROW(K, wg), height = min(64 * K::MT, p.g.m - top), width = min(BN, p.g.n - col0);
        if constexpr (K::C_BUFS > 0) {
            if (p.c_tma) {
                boxes<K>(p, d, ring, wg, tid, top, col0, height, width);
                return;
            }
        }
        rows<K>(p, d, ring, wg, tid, top, col0, height, width);
    }

    // The block's shared memory must outlive its stores' reads of it; their writes complete with
    // the grid, as after CUTLASS's tma_store_wait. Waiting for the writes too costs the last tile
    // 0.5% of the kernel's cycles at 4096^3.
    template <class K>
    static __device__ __forceinline__ void finish(int tid) {
        if (tid == 0) lab_bulk_wait_read<0>();
    }
};
