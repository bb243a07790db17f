// The Hopper GEMM's warp-specialised kernels, templates over the parts: a producer warpgroup whose
// one elected thread issues TMA copies of A (BM x BK) and B tiles into the ring, each stage
// completing on a "full" mbarrier, and consumer warpgroups that multiply with wgmma straight from
// shared memory, keep one k-tile of wgmmas in flight and release a stage on its "empty" mbarrier
// once the wgmmas that read it have completed; setmaxnreg moves registers from the producer to the
// consumers. A kernel is lab_<schedule><P, Ring, Scheduler, Epilogue>:
//   lab_cooperative        two consumers, each half of every tile's rows (MT blocks of 64)
//   lab_three_consumers    three, a 64-row block each of a 192-row tile (BLOCK_X = 512): at 4104^3
//                          the pair of 192 x 176 tiles makes 4 whole waves and runs 0.98x cuBLAS
//                          against 0.93x for the 128 x 192 ping-pong pair
//   lab_pingpong           two consumers that take alternate tiles whole, BM rows each (CUTLASS's
//                          ping-pong schedule): their main loops take turns, handed over by two
//                          named barriers, so one consumer's C leaves while the other's wgmmas run
//                          and the epilogue does not stop the Tensor Cores. The handover also keeps
//                          a consumer from waiting on a stage's barrier more than one phase ahead
//                          (its parity would alias). A tile is at most 128 x 192, which makes 5.3
//                          waves at 4096^3 and 5.5 at 4097^3: the tail that stream-K shares out.
// The main loop (hopper_consumer.cuh) and the producer (here) walk the scheduler's units; `run`
// is the block's whole GEMM, which the rung's kernel calls.
#pragma once
#include "hopper_consumer.cuh"

// B's k-tile t for the tile at column col0 into stage b. One block: MN-major B, whose 128-byte rows
// hold 64 columns, comes as one copy where the host made its map 3-D, of column chunks (p.b_chunks:
// the 128 x 128 ping-pong tile took 273k cycles and 11.0M L2 requests at 4096^3 so, against 283k
// and 12.7M with a copy a chunk; 128 x 192 is level). A pair (CY = 2): each
// block loads its share of B's 64-column chunks (at BN = 192 two and one) or rows and multicasts it
// to both (UTMALDG.MULTICAST).
template <class K>
__device__ __forceinline__ void lab_load_b(unsigned char* b, const lab_gemm_tma_args& p, int t, int col0, int rank, uint64_t* bar) {
    constexpr int CY = K::CY;
    if constexpr (CY == 1 && K::prec::b_kmajor) {
        lab_tma_load_2d(b, &p.b_map, t * BK, col0, bar);  // BK x BN
    } else if constexpr (CY == 1) {
        if (p.b_chunks) {
            lab_tma_load_3d(b, &p.b_map, 0, t * BK, col0 / 64, bar);  // 64 x BK x BN / 64 chunks
        } else {
#pragma unroll
            for (int c = 0; c < K::B_ROWS / 64; ++c) lab_tma_load_2d(b + c * K::CHUNK_B, &p.b_map, col0 + 64 * c, t * BK, bar);
        }
    } else if constexpr (K::prec::b_kmajor) {
        // This block's share of B's rows (the map's box is BK x BN / CY), to all.
        const int part = BN / CY;
        lab_tma_multicast_2d(b + rank * part * 128, &p.b_map, t * BK, col0 + rank * part, bar, (1 << CY) - 1);
    } else {
#pragma unroll
        for (int c = rank; c < K::B_ROWS / 64; c += CY) lab_tma_multicast_2d(b + c * K::CHUNK_B, &p.b_map, col0 + 64 * c, t * BK, bar, (1 << CY) - 1);
    }
}

// The whole GEMM for one block.
template <class K>
__device__ __forceinline__ void lab_gemm_run(const lab_gemm_tma_args& p) {
    constexpr int NSTAGES = K::NSTAGES, STAGE_A = K::STAGE_A, STAGE_B = K::STAGE_B;
    extern __shared__ unsigned char dyn[];
    __shared__ uint64_t full[NSTAGES], empty[NSTAGES];
    // 128-byte swizzling repeats every 1024 bytes: the ring starts on such a boundary.
    unsigned char* ring = dyn + ((1024 - (lab_smem_addr(dyn) & 1023)) & 1023);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const typename K::sched tiles(p.g);
    if (threadIdx.x == 0) {
        for (int s = 0; s < NSTAGES; ++s) {
            lab_mbar_init(&full[s], 1);
            lab_mbar_init(&empty[s], (K::ping_pong ? 1 : K::CONSUMERS) * K::CY);  // each consumer warpgroup (of the cluster) reading it
        }
        lab_mbar_init_fence();
    }
    if constexpr (K::CY > 1) {
        lab_cluster_sync();
    } else {
        __syncthreads();
    }

    if (wg == 0) {  // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            const int rank = tiles.rank;
            int it = 0;
            typename K::ring r;
            lab_unit w;
            for (int u = 0; tiles.unit(u, w); ++u) {
                int row0, col0;
                tiles.at(w.id, row0, col0);
                for (int t = w.k0; t < w.k1; ++t, ++it, r.next()) {
                    const int s = r.s();
                    if (it >= NSTAGES) lab_mbar_wait(&empty[s], r.ph() ^ 1);
                    unsigned char* a = ring + s * (STAGE_A + STAGE_B);
                    unsigned char* b = a + STAGE_A;
                    lab_mbar_expect_tx(&full[s], STAGE_A + STAGE_B);
                    lab_tma_load_2d(a, &p.a_map, t * BK, row0, &full[s]);  // BK x BM
                    lab_load_b<K>(b, p, t, col0, rank, &full[s]);
                }
            }
            (void)rank;
        }
    } else {
        lab_consume<K>(p, tiles, ring, full, empty, wg, tid);
    }
    if constexpr (K::CY > 1) lab_cluster_sync();
}

template <class P, class Ring, class Sched, class Epi>
struct lab_cooperative : lab_gemm_config<P, Ring, 2, false, Sched, Epi> {
    static __device__ __forceinline__ void run(const lab_gemm_tma_args& p) { lab_gemm_run<lab_cooperative>(p); }
};

template <class P, class Ring, class Sched, class Epi>
struct lab_three_consumers : lab_gemm_config<P, Ring, 3, false, Sched, Epi> {
    static __device__ __forceinline__ void run(const lab_gemm_tma_args& p) { lab_gemm_run<lab_three_consumers>(p); }
};

template <class P, class Ring, class Sched, class Epi>
struct lab_pingpong : lab_gemm_config<P, Ring, 2, true, Sched, Epi> {
    static __device__ __forceinline__ void run(const lab_gemm_tma_args& p) { lab_gemm_run<lab_pingpong>(p); }
};
