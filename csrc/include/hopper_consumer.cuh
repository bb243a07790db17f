// The Hopper GEMM's main loop: consumer warpgroup wg - 1 of a block multiplies rows wg_row(wg) ..
// + 64 MT - 1 of each of its units (every unit, or with ping-pong every other one), then hands its
// accumulators to the scheduler's fixup (a stream-K piece) and the epilogue. `it` walks the ring
// over all the block's units, a k-tile at a time. Each consumer keeps one k-tile of wgmmas in
// flight and releases a stage on its "empty" mbarrier (in every block of a cluster) once the
// wgmmas that read it have completed.
#pragma once
#include "hopper_config.cuh"

template <class K>
__device__ __forceinline__ void lab_consume(const lab_gemm_tma_args& p, const typename K::sched& tiles, unsigned char* ring, uint64_t* full,
                                            uint64_t* empty, int wg, int tid) {
    typedef typename K::prec P;
    constexpr int MT = K::MT, CY = K::CY, STAGE_BYTES = K::STAGE_A + K::STAGE_B, G = P::promote;
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(K::CONSUMER_REGS));
    // Stage 0's descriptors of this warpgroup's A rows and of B; stage s is s * (STAGE_A + STAGE_B) on.
    // (Opaque values, so the compiler keeps them rather than recomputing them every k-tile.)
    uint64_t da0 = lab_desc(ring + LAB_WG_ROW(K, wg) * 128, 16, 1024, LAB_SWIZZLE_128B);
    uint64_t db0 = lab_desc(ring + K::STAGE_A, P::b_kmajor ? 16 : K::CHUNK_B, 1024, LAB_SWIZZLE_128B);
    asm volatile("" : "+l"(da0), "+l"(db0));
    typename K::ring it;
    lab_unit w;
    for (int u = 0; tiles.unit(u, w); ++u) {
        int row0, col0;
        tiles.at(w.id, row0, col0);
        const int n = w.k1 - w.k0;  // k-tiles of this unit
        if constexpr (K::ping_pong) {
            // Consumer 1 takes the even units, 2 the odd ones, each after the other's main loop of
            // the unit before (named barrier 5 + wg, arrived on by the other consumer).
            if (u % 2 != wg - 1) {
                it.skip(n);
                continue;
            }
            if (u > 0) asm volatile("bar.sync %0, 256;\n" ::"r"(5 + wg) : "memory");
        }
        typename K::acc d[MT][BN / 2];
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[m][i] = 0;
        float sum[MT][BN / 2];  // promotion's fp32 sums
        if constexpr (P::promote != 0) {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int i = 0; i < BN / 2; ++i) sum[m][i] = 0.0f;
        }
        // The last k-tile of an unaligned k is multiplied by the loop after this one, only its
        // k-steps that hold data (4097: 1 of 4; the align suite's 4104 and 4112 gain 1.5%). A
        // loop, so no wgmma is behind a branch: ptxas serialises every wgmma of a kernel that has
        // one there. (Skipping an edge tile's empty 64-row block too, by a second copy of this
        // main loop, makes the ping-pong rungs 2-3% slower at every size of the align suite.)
        const int tail = G == 0 && n > 0 && w.k1 == tiles.ktiles ? tiles.last_steps % 4 : 0;
        for (int t = 0; t < n - (tail > 0); ++t, it.next()) {
            uint64_t a, b;
            const int s = lab_stage_full<STAGE_BYTES>(full, it, da0, db0, a, b);
            lab_wgmma_fence();
            if constexpr (P::promote != 0) {
                // G k-tiles summed by the Tensor Cores from zero (g: the k-tile's place in
                // its group), then added to fp32 registers. The previous k-tile's stage is released
                // once its wgmmas are done, as without promotion, so the ring never waits for a
                // promotion and longer groups need no more stages; a group's last drains all and
                // releases its own too. Both consumers read the same stages, so they drain together:
                // ncu shows fp8's tensor pipe 78-80% busy against int8's 90%. Offsetting the second
                // consumer's groups by a k-tile does not help (0.813 ms against 0.793 ms without).
                const int g = t % G;
                lab_wgmma_tile<P, M_OUTER>(d, a, b, g == 0);
                lab_wgmma_commit();
                if (g == G - 1 || t == n - 1) {
                    lab_wgmma_wait<0>();
                    if (tid == 0) {
                        if (g > 0) lab_mbar_arrive_cluster<CY>(&empty[it.back(1)]);
                        lab_mbar_arrive_cluster<CY>(&empty[s]);
                    }
#pragma unroll
                    for (int m = 0; m < MT; ++m)
#pragma unroll
                        for (int i = 0; i < BN / 2; ++i) sum[m][i] += d[m][i];
                } else {
                    lab_wgmma_wait<1>();
                    if (g > 0 && tid == 0) lab_mbar_arrive_cluster<CY>(&empty[it.back(1)]);
                }
            } else if constexpr (M_OUTER == 2) {
                // cuBLAS's order: the first 64-row block's wgmmas, the wait for the k-tile before, its
                // stage released, then the other block's, so the producer may refill it sooner. Each
                // half is a group of its own: left out of any group, ptxas closes the first half as
                // one and waits for it too. 128 x 128, 5 stages, 4096^3, paired: fp16 1.023x-1.030x
                // against M_OUTER 0's 1.019x-1.025x, bf16 level.
                lab_wgmma_rows<P>(d, a, b, 0, t == 0);
                lab_wgmma_commit();
                lab_wgmma_wait<1>();
                if (t > 0 && tid == 0) lab_mbar_arrive_cluster<CY>(&empty[it.back(1)]);
                lab_wgmma_rows<P>(d, a, b, 1, t == 0);
                lab_wgmma_commit();
            } else {
                lab_wgmma_tile<P, M_OUTER>(d, a, b, t == 0);
                lab_wgmma_commit();
                // This k-tile's wgmmas stay in flight; the previous one's have finished reading its stage.
                lab_wgmma_wait<1>();
                if (t > 0 && tid == 0) lab_mbar_arrive_cluster<CY>(&empty[it.back(1)]);
            }
        }
        uint64_t a = 0, b = 0;
        for (int kk = 0; kk < tail; ++kk) {
            if (kk == 0) lab_stage_full<STAGE_BYTES>(full, it, da0, db0, a, b), it.next();
            lab_wgmma_fence();
            lab_wgmma_step<P>(d, a, b, kk, n > 1 || kk > 0);
            lab_wgmma_commit();
        }
        if constexpr (K::ping_pong) {
            // Every full barrier of this unit has been waited on: the other consumer may start its
            // main loop of the next unit while these wgmmas finish and C leaves.
            if (u + 1 < tiles.units()) asm volatile("bar.arrive %0, 256;\n" ::"r"(8 - wg) : "memory");
        }
        lab_wgmma_wait<0>();
        if constexpr (P::promote != 0) {
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int i = 0; i < BN / 2; ++i) d[m][i] = sum[m][i];
        } else {
            if (tail > 0 && n > 1 && tid == 0) lab_mbar_arrive_cluster<CY>(&empty[it.back(2)]);
            if (n > 0 && tid == 0) lab_mbar_arrive_cluster<CY>(&empty[it.back(1)]);
        }
        if constexpr (K::sched::stream_k) {
            if (n < tiles.ktiles && !tiles.template fixup<K>(p, w, d, wg, tid)) continue;
        }
        K::epilogue::template store<K>(p, d, ring, wg, tid, row0, col0);
    }
    K::epilogue::template finish<K>(tid);
}
