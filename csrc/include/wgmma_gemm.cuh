// Hopper's warpgroup MMA fed by the tensor copy engine (sm_90a): the Tensor Core families' wgmma +
// TMA rungs, every precision wgmma has, composed from parts that each live in a header of their own:
//   hopper_tma.cuh              TMA loads (multicast in a cluster), TMA stores, cluster barriers
//   hopper_mma.cuh              per-precision MMA traits: lab_fp16, lab_bf16, lab_tf32,
//                               lab_fp8<G> (promoted accumulation), lab_fp8_e5m2<G>, lab_int8
//   hopper_ring.cuh             the stage ring, lab_ring<STAGES>
//   hopper_sched.cuh            tile schedulers: lab_data_parallel<CY>, lab_persistent<CY>
//   hopper_stream_k.cuh         lab_stream_k<F>, lab_stream_k_helpers<F, U>
//   hopper_epilogue*.cuh        lab_ring_epilogue, lab_sliced_epilogue, lab_register_epilogue;
//                               lab_fused_epilogue<Act> (hopper_epilogue_fused.cuh, which the
//                               linear rungs include themselves)
//   hopper_config.cuh           the sizes a kernel derives from its parts
//   hopper_consumer.cuh         the consumers' main loop
//   hopper_kernel.cuh           lab_cooperative, lab_three_consumers, lab_pingpong
// A rung's file composes its kernel from them, e.g.
//   using Kernel = lab_pingpong<lab_fp16, lab_ring<STAGES>, lab_stream_k<STREAMK_FIRST>, lab_sliced_epilogue>;
// and its manifest entry sets the sizes (BM, BN, BK, STAGES, GROUP_M, M_OUTER, LAB_DYN_SMEM) and,
// where an entry or the tuning chooses a part, the define the rung picks it by (PERSISTENT,
// STREAMK, STREAMK_HELPERS, STREAMK_FIRST, OWNER_UNIT, PINGPONG, SLICED_C, CLUSTER_Y, PROMOTE).
// This header gives those defines their defaults and checks them.
//
// BM = 256 (MT = 2) reads a fifth fewer bytes per flop at 256 x 192 than 128 x 256 does: it wins
// fp16 one tile a block at unaligned sizes and loses int8 in pairs, so it is a tunable constant.
// CLUSTER_Y = 2 (a pair of blocks on adjacent tile rows sharing B by multicast, a stage released by
// the consumers of both blocks): a pair's loads from L2 are a third fewer at 128 x 256 (A 2 x 128
// rows and B 256, against 2 x (128 + 256)). One tile a block, it runs behind CLUSTER_Y = 1 in pairs
// with cuBLAS on an H200, and a cluster-scope release on those arrivals would halve its rate.
// Persistent, fewer L2 reads buy no time here: it runs level with single persistent blocks
// (fp16_09, bf16_09), and behind them in ping-pong at 128 x 128.
//
// Limits: TMA needs 16-byte-aligned row strides, so the host gives unaligned inputs a padded pitch
// first with lab_pad_rows (pad_rows.cuh); the edges of m, n and k are zero-filled by TMA, and a
// last k-tile that is partly zeros multiplies only its k-steps that hold data. MN-major B's stage
// holds whole 64-column chunks, so at BN = 176 the last one is partly the next tile's columns, and
// C's columns past the last whole 32-column box go out straight from the registers.
#pragma once
#include "pad_rows.cuh"

#include "hopper_kernel.cuh"
#ifndef PROMOTE
#define PROMOTE 0
#endif
#ifndef CLUSTER_Y
#define CLUSTER_Y 1
#endif
#ifndef PERSISTENT
#define PERSISTENT 0
#endif
#ifndef STREAMK
#define STREAMK 0
#endif
#ifndef PINGPONG
#define PINGPONG 0
#endif
#ifndef STREAMK_FIRST
#define STREAMK_FIRST 0
#endif
#ifndef STREAMK_HELPERS
#define STREAMK_HELPERS 0
#endif
#ifndef OWNER_UNIT  // STREAMK_HELPERS with STREAMK_FIRST: the unit at which a last-wave tile's own block takes its piece
#define OWNER_UNIT 0
#endif
#ifndef SLICED_C  // a persistent block's C: 1 through shared-memory slices, 0 straight from registers
#define SLICED_C 1
#endif
static_assert(CLUSTER_Y == 1 || CLUSTER_Y == 2, "one block, or two on adjacent tile rows sharing B");
static_assert(STREAMK == 0 || CLUSTER_Y == 1, "stream-K's pieces belong to one block");
static_assert(STREAMK == 0 || PERSISTENT, "stream-K splits the last wave over persistent blocks");
static_assert(STREAMK_FIRST == 0 || STREAMK, "the stream-K pieces first: a stream-K rung's order");
static_assert(STREAMK_HELPERS == 0 || STREAMK, "the last wave's helpers: a stream-K rung's split");
static_assert(OWNER_UNIT == 0 || (STREAMK_HELPERS && STREAMK_FIRST), "the own block's piece placed among the units: the helpers' split, pieces first");
static_assert(PINGPONG == 0 || PERSISTENT, "ping-pong alternates a persistent block's whole tiles");

// The scheduler and epilogue of the cooperative rungs whose manifest entries or tuning choose them
// by PERSISTENT, STREAMK and SLICED_C: one tile a block staged through the ring, or persistent
// blocks (the tail wave by stream-K's even split) with C sliced or from the registers.
using lab_chosen_scheduler =
    lab_if<PERSISTENT, lab_if<STREAMK, lab_stream_k<STREAMK_FIRST>, lab_persistent<CLUSTER_Y>>, lab_data_parallel<CLUSTER_Y>>;
using lab_chosen_epilogue = lab_if<PERSISTENT, lab_if<SLICED_C, lab_sliced_epilogue, lab_register_epilogue>, lab_ring_epilogue>;
