// The Hopper GEMM's epilogues, one type each: how a consumer warpgroup's accumulators leave for C
// (fp32, or s32 for int8). d[m][4j + e]: warp w of the warpgroup holds rows 64m + 16w + g (e = 0,
// 1) and 64m + 16w + g + 8 (e = 2, 3) of its band, columns 8j + 2t + (e & 1). With k = 0 no wgmma
// ran and d holds zeros. Each type gives store<K>(...) for a unit's accumulators and finish<K>(tid)
// once a warpgroup has no more units; `sliced` says whether it needs a buffer past the ring.
//   lab_ring_epilogue      one tile a block: C staged through the drained ring, then whole rows
//   lab_sliced_epilogue    persistent: TMA-store boxes where C's rows are 16-byte aligned, else
//                          slices of rows through a buffer of its own past the ring (the ring holds
//                          the next tile's stages by then), hopper_epilogue_sliced.cuh
//   lab_register_epilogue  persistent: straight from the registers
// The consumers write C themselves into shared memory, so only the global writes of C can overlap
// the next tile's wgmmas.
#pragma once
#include "hopper_sched.cuh"
#include "hopper_tma.cuh"

// C's columns 8 J0 .. 8 J1 - 1 of a warpgroup's band (its first row `top`, height x width inside
// C) straight from the registers: a warp's store covers 8 rows of 32 bytes, whole sectors where
// C's rows are 8-byte aligned, 4-byte pieces where they are odd.
template <class K, int J0, int J1>
__device__ __forceinline__ void lab_store_c_regs(const lab_gemm_tma_args& p, const typename K::acc (&d)[K::MT][BN / 2], int tid, int top, int col0,
                                                 int height, int width) {
    typedef typename K::acc acc;
    const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
    acc* out = lab_ptr<acc>(p.g.c);
#pragma unroll
    for (int m = 0; m < K::MT; ++m)
#pragma unroll
        for (int j = J0; j < J1; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = 64 * m + 16 * w + g + 8 * h, c = 8 * j + 2 * tq;
                if (r >= height || c >= width) continue;
                acc* at = out + (size_t)(top + r) * p.g.ldc + col0 + c;
                if ((p.g.ldc & 1) == 0 && c + 1 < width) {
                    *reinterpret_cast<typename K::acc2*>(at) = {d[m][4 * j + 2 * h], d[m][4 * j + 2 * h + 1]};
                } else {
                    at[0] = d[m][4 * j + 2 * h];
                    if (c + 1 < width) at[1] = d[m][4 * j + 2 * h + 1];
                }
            }
}

// Straight from the registers (a persistent block's tunable choice, SLICED_C = 0). fp8 at 8192^3
// runs 0.844x cuBLASLt this way against 0.866x sliced.
struct lab_register_epilogue {
    static constexpr bool sliced = false;
    template <class K>
    static __device__ __forceinline__ void store(const lab_gemm_tma_args& p, const typename K::acc (&d)[K::MT][BN / 2], unsigned char* ring, int wg,
                                                 int tid, int row0, int col0) {
        const int top = row0 + LAB_WG_ROW(K, wg), height = min(64 * K::MT, p.g.m - top), width = min(BN, p.g.n - col0);
        (void)ring;
        lab_store_c_regs<K, 0, BN / 8>(p, d, tid, top, col0, height, width);
    }
    template <class K>
    static __device__ __forceinline__ void finish(int) {}
};

// One tile a block: both consumers' wgmmas are done with the ring, so it stages C: each warp then
// stores runs of whole rows (coalesced; 16-byte vectors where C's rows allow, scalars on the edge
// tiles) instead of the accumulators' pieces, 8 rows of 32 bytes each, which odd rows split further.
struct lab_ring_epilogue {
    static constexpr bool sliced = false;
    template <class K>
    static __device__ __forceinline__ void store(const lab_gemm_tma_args& p, const typename K::acc (&d)[K::MT][BN / 2], unsigned char* ring, int wg,
                                                 int tid, int row0, int col0) {
        typedef typename K::acc acc;
        constexpr int MT = K::MT, CPITCH = K::CPITCH;
        const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
        const int top = row0 + LAB_WG_ROW(K, wg), height = min(64 * MT, p.g.m - top), width = min(BN, p.g.n - col0);
        asm volatile("bar.sync 1, %0;\n" ::"n"(K::CONSUMERS * 128) : "memory");
        acc* stage = reinterpret_cast<acc*>(ring) + (wg - 1) * 64 * MT * CPITCH;
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    *reinterpret_cast<typename K::acc2*>(stage + (64 * m + 16 * w + g + 8 * h) * CPITCH + 8 * j + 2 * tq) = {d[m][4 * j + 2 * h],
                                                                                                                           d[m][4 * j + 2 * h + 1]};
        asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory");  // this warpgroup's rows are staged

        acc* out = lab_ptr<acc>(p.g.c) + (size_t)max(top, 0) * p.g.ldc + col0;
        if ((p.g.ldc & 3) == 0 && width == BN) {
            for (int i = tid; i < height * (BN / 4); i += 128) {
                const int r = i / (BN / 4), c = i % (BN / 4) * 4;
                *reinterpret_cast<uint4*>(out + (size_t)r * p.g.ldc + c) = *reinterpret_cast<const uint4*>(stage + r * CPITCH + c);
            }
        } else {
            for (int i = tid; i < height * BN; i += 128) {
                const int r = i / BN, c = i % BN;
                if (c < width) out[(size_t)r * p.g.ldc + c] = stage[r * CPITCH + c];
            }
        }
    }
    template <class K>
    static __device__ __forceinline__ void finish(int) {}
};
