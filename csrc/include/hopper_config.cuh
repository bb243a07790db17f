// The sizes every part of a Hopper GEMM kernel derives from its choices: the precision P, the ring
// of STAGES stages, CONSUMERS consumer warpgroups that share each tile or (PINGPONG) take whole
// tiles in turn, the tile scheduler and the epilogue. The tile (BM x BN x BK), GROUP_M, M_OUTER and
// LAB_DYN_SMEM stay the manifests' defines: sizes a tuner may change. A kernel template of
// hopper_kernel.cuh is this configuration with its run().
#pragma once
#include "hopper_epilogue_sliced.cuh"
#include "hopper_mma.cuh"
#include "hopper_ring.cuh"
#include "hopper_stream_k.cuh"

// A k-tile's wgmmas: M_OUTER 0 the k-steps outer, 1 each 64-row block's four k-steps in a row, 2 as
// 1 with the wait for the k-tile before between the two blocks (the consumer's main loop).
#ifndef M_OUTER
#define M_OUTER 0
#endif

template <class P, class Ring, int CONSUMERS_, bool PINGPONG_, class Sched, class Epi>
struct lab_gemm_config {
    typedef P prec;
    typedef typename P::acc acc;
    typedef typename P::acc2 acc2;
    typedef typename P::acc4 acc4;
    typedef Ring ring;
    typedef Sched sched;
    typedef Epi epilogue;
    static constexpr int NSTAGES = Ring::stages, CONSUMERS = CONSUMERS_, CY = Sched::cluster;
    static constexpr bool ping_pong = PINGPONG_;
    static constexpr int MT = BM / (ping_pong ? 64 : 64 * CONSUMERS);  // 64-row blocks of a tile each consumer multiplies
    static constexpr int TILE_PARTS = ping_pong ? 1 : CONSUMERS;       // the warpgroups that share one tile
    static constexpr int STAGE_A = BM * 128;
    // MN-major B: whole 64-column chunks, the last one partly past the tile where BN is not a
    // multiple of 64; it arrives in 64-column chunks of 128-byte rows for the swizzle.
    static constexpr int B_ROWS = P::b_kmajor ? BN : (BN + 63) / 64 * 64, STAGE_B = B_ROWS * 128, CHUNK_B = BK * 128;
    static constexpr int CPITCH = BN + 8;  // C staged in the ring: 32 bytes of padding keep 8-byte stores conflict-free
    static constexpr int RING_BYTES = NSTAGES * (STAGE_A + STAGE_B);
    // A persistent block stages C in slices of SLICE columns in a buffer of its own past the ring:
    // 64 MT rows of SPITCH elements a warpgroup, or, for TMA stores, C_BUFS buffers of MT boxes
    // (64 rows of 128 bytes each, C_BOX). How many buffers, and whether ring and buffers fit
    // LAB_DYN_SMEM, is the build's plan (crates/facts/src/hopper.rs: LAB_RING_BYTES,
    // LAB_SLICE_BYTES past the ring, LAB_C_BUFS), which this kernel takes and holds to what it
    // addresses, so a plan made for another composition fails its build.
    static constexpr int SLICE = 32 / MT, SPITCH = SLICE + 8, C_BOX = 64 * 128;
    static constexpr int C_BUFS = LAB_C_BUFS;
    static constexpr int SLICE_BYTES_ROWS = CONSUMERS * 64 * MT * SPITCH * 4, SLICE_BYTES_TMA = CONSUMERS * C_BUFS * MT * C_BOX;
    static constexpr int SLICE_BYTES = Epi::sliced ? (SLICE_BYTES_ROWS > SLICE_BYTES_TMA ? SLICE_BYTES_ROWS : SLICE_BYTES_TMA) : 0;
    // setmaxnreg: of the registers launched (65536 / BLOCK_X a thread, in eights), the producer
    // keeps 40 and the consumers share the rest in eights: 232 each of two, 152 each of three.
    static constexpr int LAUNCH_REGS = 65536 / BLOCK_X / 8 * 8;
    static constexpr int CONSUMER_REGS = (LAUNCH_REGS * (CONSUMERS + 1) - 40) / CONSUMERS / 8 * 8;

    static_assert(BLOCK_X == 128 * (CONSUMERS + 1) && BLOCK_Y == 1 && BLOCK_Z == 1, "one producer warpgroup and the consumers: the manifest's block");
    static_assert(CONSUMERS == 2 || (CONSUMERS == 3 && !ping_pong && !Sched::stream_k), "two consumer warpgroups, or three that share every tile");
    static_assert(BM == 64 * MT * (ping_pong ? 1 : CONSUMERS) && MT <= 2 && BK * P::elem == 128 && (BN == 128 || BN == 176 || BN == 192 || BN == 256),
                  "consumers of MT m64nBN blocks, 128-byte rows for the swizzle");
    static_assert(MT * BN / 2 * (P::promote ? 2 : 1) <= CONSUMER_REGS - 40, "accumulators: 40 of a consumer's registers left for the rest");
    static_assert(RING_BYTES == LAB_RING_BYTES && SLICE_BYTES == LAB_SLICE_BYTES, "the ring and the C slices this kernel addresses are the build's plan");
    static_assert(LAB_RING_BYTES + LAB_SLICE_BYTES + 1024 <= LAB_DYN_SMEM, "the plan fits the dynamic shared memory");
    static_assert(C_BUFS <= 2 && (C_BUFS < 2 || BN / LAB_TMA_C_COLS % 2 == 0), "two C buffers only where a tile's boxes are even in number");
    static_assert(GROUP_M >= 1, "tile rows per rasterisation group");
    static_assert(M_OUTER < 2 || (MT == 2 && !P::promote), "M_OUTER = 2: the wait between two 64-row blocks");
    static_assert(RING_BYTES >= BM * CPITCH * 4, "the C tile staged in the drained ring fits it");
    static_assert(Sched::persistent == Epi::sliced || Sched::persistent, "one tile a block stages C through the drained ring");
    static_assert(!ping_pong || Sched::persistent, "ping-pong alternates a persistent block's whole tiles");
};
