// Hopper's warpgroup MMA fed by the tensor copy engine (sm_90a), over the input type: the body of
// the Tensor Core families' wgmma + TMA rungs, one kernel for every precision wgmma has. A rung's
// file names its kernel and calls lab_wgmma_gemm; its manifest entry sets PREC (lab.h's LAB_*):
//   LAB_FP16_F32ACC, LAB_BF16_F32ACC  m64nNk16, fp32 accumulators, B MN-major (row-major k x n,
//                                     wgmma's transpose flag: only 16-bit operands have one)
//   LAB_TF32                          m64nNk8, fp32 accumulators, B K-major (n x k)
//   LAB_FP8_F32ACC (e4m3)             m64nNk32, fp32 accumulators, B K-major, and PROMOTE
//   LAB_INT8                          m64nNk32, s32 accumulators, B K-major
// Every operand row of a stage is 128 bytes (BK elements), so the 128-byte swizzle, the
// descriptors' strides and the four wgmmas a k-tile are the same for every type.
//
// The pipeline: a producer warpgroup whose one elected thread issues TMA copies of A (BM x BK) and
// B tiles into a STAGES-deep ring, each stage completing on a "full" mbarrier. MN-major B, whose
// 128-byte rows hold 64 columns, comes as one copy of a 3-D map of its column chunks where n fills
// them (the 128 x 128 ping-pong tile: 273k cycles and 11.0M L2 requests at 4096^3, against 283k
// and 12.7M with a copy a chunk; 128 x 192 is level). Two consumer warpgroups each multiply half
// the tile's rows (MT blocks of 64) with wgmma straight from shared memory, or with BLOCK_X = 512
// three, a 64-row block each of a 192-row tile (at 4104^3 the pair of 192 x 176 tiles makes 4
// whole waves and runs 0.98x cuBLAS against 0.93x for the 128 x 192 ping-pong pair). MN-major B's
// stage holds whole 64-column chunks, so at BN = 176 the last one is partly the next tile's
// columns, and C's columns past the last whole 32-column box go out straight from the registers.
// BM = 256 (MT = 2) reads a fifth fewer bytes per flop at 256 x 192 than 128 x 256 does: it wins
// fp16 one tile a block at unaligned sizes and loses int8 in pairs, so it is a tunable constant.
// Each consumer keeps one k-tile of wgmmas in flight and releases a stage on its "empty" mbarrier
// once the wgmmas that read it have completed. setmaxnreg moves registers from the producer to the
// consumers, and blocks are rasterised in groups of GROUP_M tile rows so a wave's A and B stay
// in L2.
//
// PROMOTE (fp8): Hopper's fp8 wgmma adds into a window narrower than fp32 (the peak family sees an
// accumulator stall), so every PROMOTE k-tiles' products are summed by the Tensor Cores from zero
// and then added to fp32 registers by the consumer (DeepGEMM's promotion, which does it every
// k-tile of 128): twice the accumulator registers, and the wgmmas drained before each promotion.
// Both consumers read the same stages, so they drain together; ncu shows fp8's tensor pipe 78-80%
// busy against int8's 90%. Offsetting the second consumer's groups by a k-tile does not help (its
// best candidate: 0.813 ms against 0.793 ms without). Within a group each stage is released as
// soon as its wgmmas are done, as without promotion, so the ring never waits for a promotion and
// longer groups need no more stages.
//
// CLUSTER_Y = 2: two blocks on adjacent tile rows, each loading its share of B's 64-column chunks
// (at BN = 192 two and one) and multicasting it to both (UTMALDG.MULTICAST), a stage released by
// the consumers of both blocks: a pair's loads from L2 are a third fewer at 128 x 256 (A 2 x 128
// rows and B 256, against 2 x (128 + 256)). One tile a block, it runs behind CLUSTER_Y = 1 in pairs
// with cuBLAS on an H200, and a cluster-scope release on those arrivals would halve its rate.
// With PERSISTENT (fast.cu's kernel 12), the host launches as many clusters as fit at once,
// blockIdx.x the cluster and blockIdx.y its block, and the pair walks the tiles of cluster rows
// (2 BM x BN) together: both blocks have the same units, so every stage holds the same k-tile in
// both and each consumer's release frees it in both. Fewer L2 reads buy no time here: it runs
// level with single persistent blocks (tensor_09, bf16_04), and behind them in ping-pong at
// 128 x 128.
//
// PERSISTENT = 1: one resident block an SM walks the tiles in the grouped order; its producer runs
// on into the next tile (the ring's stage and phase counted over all its k-tiles) while the
// consumers store C, through slices of a buffer past the ring (SLICED_C, see lab_store_c): by TMA
// stores the warpgroup does not wait for where C's rows are 16-byte aligned. bf16 gains up to 6%
// on short-K shapes, with TMA stores or coalesced ones alike.
//
// STREAMK = 1 (with PERSISTENT): the tiles that would make a last, partial wave are not given
// out whole. Their k-tiles are split evenly over all the blocks (stream-K, Osama et al., PPoPP
// 2023), a block's share spanning at most two tiles. Each piece's accumulators go to a slot of
// p.partials and an arrival counter of the tile is incremented; the last of a tile's pieces to
// arrive adds the others' slots to its own registers, stores C and zeroes the counter for the next
// launch. Nothing waits for another block, so no order of the blocks can deadlock.
// Taken after a block's whole tiles, the pieces end together, and so do the last pieces' fixups
// (reading the other slots, storing C): under ncu at base clocks (128 x 192 ping-pong, 4096^3) the
// pieces alone end level with the even split, 280k cycles on the slowest SM; the partial stores
// and arrivals add 6k, the last pieces' reads and C stores 30k more, as much as stream-K saves
// over whole tiles. STREAMK_FIRST = 1 takes the pieces first: a fixup then overlaps the other
// consumer's main loop (ping-pong) or other blocks' tiles, and the blocks still end together; a
// tunable constant, as its gain depends on the shape.
//
// STREAMK_HELPERS = 1 (with STREAMK): the last wave's T tiles are split another way. Block b < T
// keeps tile b's first k-tiles; the blocks that wave leaves idle (the helpers) take its last e =
// ktiles / (h + 1), h the most tiles one helper takes a piece of. A helper's piece goes to a slot
// and raises the tile's flag; the tile's own block waits for the flag, adds the slot and stores C.
// So the T blocks read the same k-tiles of their tiles at the same time, as a whole wave does (the
// even split's pieces start at other k-tiles on every block, which loses the SMs their shared L2
// reads), and only the helpers' pieces cross L2. With STREAMK_FIRST the pieces come first: the
// wait overlaps the other consumer's tile, and all the blocks then walk their whole tiles in step.
// OWNER_UNIT = u takes a tile's own block's piece as its unit u instead (its whole tiles before
// and after it): a helper writes its slots in turn, the last of its three or four after all its
// pieces' main loops, so an own block that takes its piece first waits for the slot while its
// next unit is due. At 4096^3 the busiest SM runs 277.7k cycles with OWNER_UNIT 0, 271.0k with 1
// and 270.9k with 2 (ncu). The helpers wait for nothing, and every block of the persistent grid
// is resident, so a waiting block waits on one that runs. At 4096^3, 128 x 128, 6 stages (7.76
// waves, e = 12 of 64) it runs level with cuBLASLt's best (0.99x-1.00x) and 2-3% ahead of whole
// tiles (275k-278k cycles elapsed under ncu against 281k-283k). With the pieces last the blocks
// wait at the end for helpers slower than them (about 3.5% slower); e of 10, 14 or 16, or the
// helpers' k-tiles split evenly over them (two pieces for some tiles), are slower than e = 12.
//
// PINGPONG = 1 (with PERSISTENT): the consumers take alternate tiles whole, BM rows each (MT =
// BM / 64), instead of halves of every tile (CUTLASS's ping-pong schedule). Their main loops take
// turns, handed over by two named barriers, so one consumer's C leaves while the other's wgmmas
// run: the epilogue does not stop the Tensor Cores. The handover also keeps a consumer from
// waiting on a stage's barrier more than one phase ahead (its parity would alias). With STREAMK,
// the stream-K pieces are units like the others, taken in turn: a piece is a whole tile's rows
// over part of its k-tiles, so its slot and counter belong to one warpgroup (TILE_PARTS = 1), and
// one consumer's fixup runs while the other's wgmmas do. A ping-pong tile is at most 128 x 192,
// which makes 5.3 waves at 4096^3 and 5.5 at 4097^3: the tail that stream-K shares out.
//
// Limits: TMA needs 16-byte-aligned row strides, so the host gives unaligned inputs a padded pitch
// first with lab_pad_rows (pad_rows.cuh); the edges of m, n and k are zero-filled by TMA, and a
// last k-tile that is partly zeros multiplies only its k-steps that hold data. One tile
// a block stages C through the drained ring; a persistent block, whose ring holds the next tile,
// through a buffer of its own past the ring: TMA-store boxes where C's rows are 16-byte aligned
// (two slices a warpgroup where they fit, one where only that does, as for 6 stages of 128 x 128),
// else slices stored by coalesced writes. The consumers still write each slice into shared memory
// themselves, so only the global writes of C overlap the next tile's wgmmas. The ping-pong tiles
// (two 64-row blocks a warpgroup) store by TMA too: by coalesced writes their C store, which ends
// the kernel, takes 13.5k cycles, and tensor_07 runs 0.89x cuBLAS at 4096^3 against 0.92x.
#pragma once
#include "pad_rows.cuh"

#include "hopper_mma.cuh"
#include "hopper_ring.cuh"
#include "hopper_tma.cuh"
#ifndef PROMOTE
#define PROMOTE 0
#endif
#if PREC == LAB_FP16_F32ACC
typedef lab_fp16 lab_prec;
#define LAB_B_KMAJOR 0
#define LAB_ELEM 2
#elif PREC == LAB_BF16_F32ACC
typedef lab_bf16 lab_prec;
#define LAB_B_KMAJOR 0
#define LAB_ELEM 2
#elif PREC == LAB_TF32
typedef lab_tf32 lab_prec;
#define LAB_B_KMAJOR 1
#define LAB_ELEM 4
#elif PREC == LAB_FP8_F32ACC
typedef lab_fp8<PROMOTE> lab_prec;
#define LAB_B_KMAJOR 1
#define LAB_ELEM 1
#elif PREC == LAB_INT8
typedef lab_int8 lab_prec;
#define LAB_B_KMAJOR 1
#define LAB_ELEM 1
#else
#error "PREC: a wgmma LAB_* precision of lab.h (fp16 -> fp32, bf16, tf32, fp8, int8)"
#endif
typedef lab_prec::acc lab_acc;
typedef lab_prec::acc2 lab_acc2;
typedef lab_prec::acc4 lab_acc4;
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
// A k-tile's wgmmas: M_OUTER 0 the k-steps outer, 1 each 64-row block's four k-steps in a row, 2 as
// 1 with the wait for the k-tile before between the two blocks (lab_wgmma_consume).
#ifndef M_OUTER
#define M_OUTER 0
#endif

#define CONSUMERS (BLOCK_X / 128 - 1)                    // consumer warpgroups: two, or three (BM = 192)
#define MT (BM / (PINGPONG ? 64 : 64 * CONSUMERS))        // 64-row blocks of a tile each consumer multiplies
#define WG_ROW(wg) (PINGPONG ? 0 : ((wg) - 1) * 64 * MT)  // its first row in the tile
#define TILE_PARTS (PINGPONG ? 1 : CONSUMERS)             // the warpgroups that share one tile
#define WG_PART(wg) (PINGPONG ? 0 : (wg) - 1)            // consumer wg's part of its tiles
#define STAGE_A (BM * 128)
#define B_ROWS (LAB_B_KMAJOR ? BN : (BN + 63) / 64 * 64)  // MN-major B: whole 64-column chunks, the last one
#define STAGE_B (B_ROWS * 128)                              // partly past the tile where BN is not a multiple of 64
#define CHUNK_B (BK * 128)  // MN-major B arrives in 64-column chunks: 128-byte rows for the swizzle
#define CPITCH (BN + 8)     // C staged in the ring: 32 bytes of padding keep 8-byte stores conflict-free
// A persistent block stages C in slices of SLICE columns in a buffer of its own past the ring
// (the ring holds the next tile's stages by then): 64 MT rows of SPITCH elements a warpgroup, or,
// for TMA stores, C_BUFS buffers of MT boxes (64 rows of 128 bytes each, C_BOX), two buffers
// where the ring leaves room, none where not even one fits beside it (then C goes the rows' way).
#define SLICE (32 / MT)
#define SPITCH (SLICE + 8)
#define C_BOX (64 * 128)
#define RING_BYTES (STAGES * (STAGE_A + STAGE_B))
#define SLICE_BYTES_ROWS (CONSUMERS * 64 * MT * SPITCH * 4)
#define LAB_MAX(a, b) ((a) > (b) ? (a) : (b))
#define C_FITS(bufs) (RING_BYTES + LAB_MAX(SLICE_BYTES_ROWS, CONSUMERS * (bufs) * MT * C_BOX) + 1024 <= LAB_DYN_SMEM)
// Two buffers only where a tile's whole boxes are even in number, so each tile starts on the first.
#define C_BUFS (C_FITS(2) && BN / LAB_TMA_C_COLS % 2 == 0 ? 2 : C_FITS(1) ? 1 : 0)
#define SLICE_BYTES_TMA (CONSUMERS * C_BUFS * MT * C_BOX)
#define SLICE_BYTES (PERSISTENT && SLICED_C ? LAB_MAX(SLICE_BYTES_ROWS, SLICE_BYTES_TMA) : 0)
static_assert((BLOCK_X == 384 || (BLOCK_X == 512 && !PINGPONG && !STREAMK)) && BLOCK_Y == 1 && BLOCK_Z == 1,
              "one producer and two consumer warpgroups, or three that share every tile");
static_assert(BM == 64 * MT * (PINGPONG ? 1 : CONSUMERS) && MT <= 2 && BK * LAB_ELEM == 128 && (BN == 128 || BN == 176 || BN == 192 || BN == 256),
              "consumers of MT m64nBN blocks, 128-byte rows for the swizzle");
// setmaxnreg: of the registers launched (65536 / BLOCK_X a thread, in eights), the producer keeps
// 40 and the consumers share the rest in eights: 232 each of two, 152 each of three.
#define LAUNCH_REGS (65536 / BLOCK_X / 8 * 8)
#define CONSUMER_REGS ((LAUNCH_REGS * (CONSUMERS + 1) - 40) / CONSUMERS / 8 * 8)
static_assert(MT * BN / 2 * (PROMOTE ? 2 : 1) <= CONSUMER_REGS - 40, "accumulators: 40 of a consumer's registers left for the rest");
static_assert(STAGES >= 2 && RING_BYTES + SLICE_BYTES + 1024 <= LAB_DYN_SMEM,
              "the ring (and a persistent block's C slices) fit the dynamic shared memory");
static_assert(GROUP_M >= 1, "tile rows per rasterisation group");
static_assert(M_OUTER < 2 || (MT == 2 && !PROMOTE), "M_OUTER = 2: the wait between two 64-row blocks");
static_assert(RING_BYTES >= BM * CPITCH * 4, "the ring holds the staged C tile");
static_assert(PROMOTE == 0 || PREC == LAB_FP8_F32ACC, "promotion is for fp8's narrow accumulation");
#if defined(CLUSTER_X) || defined(CLUSTER_Z)
#error "clusters of wgmma_gemm.cuh pair tile rows: CLUSTER_Y only"
#endif
static_assert(CLUSTER_Y == 1 || CLUSTER_Y == 2, "one block, or two on adjacent tile rows sharing B");
static_assert(STREAMK == 0 || CLUSTER_Y == 1, "stream-K's pieces belong to one block");
static_assert(STREAMK == 0 || PERSISTENT, "stream-K splits the last wave over persistent blocks");
static_assert(STREAMK_FIRST == 0 || STREAMK, "the stream-K pieces first: a stream-K rung's order");
static_assert(STREAMK_HELPERS == 0 || STREAMK, "the last wave's helpers: a stream-K rung's split");
static_assert(OWNER_UNIT == 0 || (STREAMK_HELPERS && STREAMK_FIRST), "the own block's piece placed among the units: the helpers' split, pieces first");
static_assert(PINGPONG == 0 || (PERSISTENT && SLICED_C), "ping-pong alternates a persistent block's whole tiles, C sliced");


// C's columns 8 J0 .. 8 J1 - 1 of a warpgroup's band (its first row `top`, height x width inside
// C) straight from the registers: a warp's store covers 8 rows of 32 bytes, whole sectors where
// C's rows are 8-byte aligned, 4-byte pieces where they are odd.
template <int J0, int J1>
__device__ __forceinline__ void lab_store_c_regs(const lab_gemm_tma_args& p, const lab_acc (&d)[MT][BN / 2], int tid, int top, int col0, int height,
                                                 int width) {
    const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
    lab_acc* out = lab_ptr<lab_acc>(p.g.c);
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int j = J0; j < J1; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = 64 * m + 16 * w + g + 8 * h, c = 8 * j + 2 * tq;
                if (r >= height || c >= width) continue;
                lab_acc* at = out + (size_t)(top + r) * p.g.ldc + col0 + c;
                if ((p.g.ldc & 1) == 0 && c + 1 < width) {
                    *reinterpret_cast<lab_acc2*>(at) = {d[m][4 * j + 2 * h], d[m][4 * j + 2 * h + 1]};
                } else {
                    at[0] = d[m][4 * j + 2 * h];
                    if (c + 1 < width) at[1] = d[m][4 * j + 2 * h + 1];
                }
            }
}

// d[m][4j + e]: warp w of the warpgroup holds rows 64m + 16w + g (e = 0, 1) and 64m + 16w + g + 8
// (e = 2, 3) of its band, columns 8j + 2t + (e & 1). With k = 0 no wgmma ran and d holds zeros.
__device__ __forceinline__ void lab_store_c(const lab_gemm_tma_args& p, const lab_acc (&d)[MT][BN / 2], unsigned char* ring, int wg, int tid,
                                            int row0, int col0) {
    const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
    const int top = row0 + WG_ROW(wg), height = min(64 * MT, p.g.m - top), width = min(BN, p.g.n - col0);
#if PERSISTENT && SLICED_C
#if C_BUFS > 0
    if (p.c_tma) {
        // C's rows are 16-byte aligned: each box of 64 rows x 32 columns goes out by a TMA store,
        // a bulk group of its own, which the warpgroup does not wait for (only, before refilling
        // one of its C_BUFS x MT box slots, for the group that last used it to have read it), so
        // C's writes overlap the next tile's wgmmas and one box's store overlaps the next box's
        // writes. (With a bulk group for each slice of MT boxes, a lone slice buffer, as at 6
        // stages of 128 x 128, would make every slice wait for the one before to be read: the
        // block's last tile, whose C nothing overlaps, pays about 5.5k cycles at 4096x4224x4096.
        // A group a box: 273.0k cycles against 277.4k, and the _helpers entries 0.2%-1.8% faster
        // at 4096^3.) A box holds its 64 rows as the map's 128-byte swizzle lays them out: 16-byte
        // chunk c of row r at chunk c ^ (r % 8). The accumulators' 8-byte stores meet a 2-way bank
        // conflict there (a half-warp's rows g and g ^ 1 share chunks); storing them without it
        // saves no cycles. A box wholly below m is not stored (an edge tile's empty 64-row block).
        constexpr int TS = LAB_TMA_C_COLS;
        static_assert(TS * 4 == 128 && LAB_TMA_C_ROWS == 64, "the host's C map boxes: 64 rows of 128 bytes");
        constexpr int WHOLE = BN / TS * TS;  // columns that fill boxes; the rest go straight from the registers
        constexpr int SLOTS = C_BUFS * MT;
        unsigned char* slots = ring + RING_BYTES + (wg - 1) * SLOTS * C_BOX;
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
                        *reinterpret_cast<lab_acc2*>(box + r * 128 + ((byte / 16) ^ (r % 8)) * 16 + byte % 16) = {d[m][4 * j + 2 * h],
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
        if (WHOLE < BN) lab_store_c_regs<WHOLE / 8, BN / 8>(p, d, tid, top, col0, height, width);
        return;
    }
#endif
    // The ring already holds the next tile's stages, so C goes through a buffer past it, SLICE
    // columns at a time: the accumulators' pieces in, then whole rows out (coalesced; 16-byte
    // vectors where C's rows allow). Straight from the registers, odd rows (4097) make 4-byte
    // stores of 16-byte pieces and cost the persistent rungs 15%.
    lab_acc* stage = reinterpret_cast<lab_acc*>(ring + RING_BYTES) + (wg - 1) * 64 * MT * SPITCH;
    lab_acc* out = lab_ptr<lab_acc>(p.g.c) + (size_t)max(top, 0) * p.g.ldc + col0;
#pragma unroll
    for (int c0 = 0; c0 < BN; c0 += SLICE) {
        asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");  // the last slice is out
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int j = c0 / 8; j < min(c0 + SLICE, BN) / 8; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    *reinterpret_cast<lab_acc2*>(stage + (64 * m + 16 * w + g + 8 * h) * SPITCH + 8 * j - c0 + 2 * tq) = {d[m][4 * j + 2 * h],
                                                                                                                     d[m][4 * j + 2 * h + 1]};
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
#elif PERSISTENT
    // Straight from the registers (SLICED_C = 0, a tunable constant). fp8 at 8192³ runs 0.844x
    // cuBLASLt this way against 0.866x sliced.
    (void)ring, (void)w, (void)g, (void)tq;
    lab_store_c_regs<0, BN / 8>(p, d, tid, top, col0, height, width);
#else
    // Both consumers' wgmmas are done with the ring, so it stages C: each warp then stores runs of
    // whole rows (coalesced; 16-byte vectors where C's rows allow, scalars on the edge tiles)
    // instead of the accumulators' pieces, 8 rows of 32 bytes each, which odd rows split further.
    asm volatile("bar.sync 1, %0;\n" ::"n"(CONSUMERS * 128) : "memory");
    lab_acc* stage = reinterpret_cast<lab_acc*>(ring) + (wg - 1) * 64 * MT * CPITCH;
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                *reinterpret_cast<lab_acc2*>(stage + (64 * m + 16 * w + g + 8 * h) * CPITCH + 8 * j + 2 * tq) = {d[m][4 * j + 2 * h],
                                                                                                              d[m][4 * j + 2 * h + 1]};
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory");  // this warpgroup's rows are staged

    lab_acc* out = lab_ptr<lab_acc>(p.g.c) + (size_t)max(top, 0) * p.g.ldc + col0;
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
#endif
}

// A block's share of work: k-tiles k0 .. k1 - 1 of tile `id`; a stream-K piece has `slot`, its
// place in p.partials (two a block), and the number of the stream-K tile, `sk`.
struct lab_unit {
    int id, k0, k1, slot, sk;
};

// The tiles a block computes: its own (by its grid position) or, PERSISTENT, every gridDim.x-th
// of the first `whole` tiles (with a cluster, of its cluster's rows, at its rank's tile row) and
// (STREAMK) its pieces of the rest, after its tiles or, STREAMK_FIRST, before. Tile ids are rasterised in
// groups: consecutive ids walk GROUP_M cluster rows down one tile column, the blocks of a cluster
// taking adjacent tile rows.
struct lab_tiles {
    int columns, cluster_rows, rank, ktiles, whole, blocks;
    int last_steps;  // the k-steps (BK / 4 elements each) of the last k-tile that hold data
    long long split;  // k-tiles of the stream-K tiles, shared by all the blocks
    // This block's units, worked out once: `mine` whole tiles and `pieces` stream-K pieces, the
    // first of stream-K tile j0 from k-tile k0, its share ending e k-tiles past j0's first (past
    // ktiles, the second piece: the next tile's first e - ktiles). Worked out per unit, a
    // division would stand between a ping-pong consumer's main loop and its handover of the turn,
    // and the other consumer would wait on it every unit: 32 bits for whole tiles, and for
    // stream-K three calls of the 64-bit division routine. Without them, the 128 x 128 ping-pong
    // runs 1-2% closer to cuBLAS at 4096^3 and its stream-K form 2%.
    int mine, pieces, j0, k0, e;
    __device__ __forceinline__ lab_tiles(const lab_gemm_tc_args& g) {
        ktiles = (g.k + BK - 1) / BK;
        last_steps = (g.k - (ktiles - 1) * BK + BK / 4 - 1) / (BK / 4);
        pieces = 0, j0 = 0, k0 = 0, e = 0;
#if PERSISTENT
        // gridDim.x clusters of gridDim.y = CLUSTER_Y blocks.
        columns = (g.n + BN - 1) / BN, cluster_rows = (g.m + BM * CLUSTER_Y - 1) / (BM * CLUSTER_Y), rank = blockIdx.y, blocks = gridDim.x;
        const int tiles = columns * cluster_rows, b = blockIdx.x;
        whole = STREAMK && ktiles > 0 ? tiles - tiles % blocks : tiles;
#if STREAMK_HELPERS
        // The last wave's T tiles: block b < T keeps tile whole + b's first k-tiles, and the
        // blocks that wave leaves idle take its last e = ktiles / (h + 1) (h: the most tiles one
        // of them helps), pieces j0 = b - T, + idle, ... of theirs. e = 0: no split.
        const int tail = tiles - whole, idle = blocks - tail;
        e = tail > 0 ? ktiles / ((tail + idle - 1) / idle + 1) : 0;
        if (e == 0) whole = tiles;
        j0 = b - tail, k0 = idle;
        pieces = e == 0 ? 0 : b < tail ? 1 : j0 < tail ? (tail - 1 - j0) / idle + 1 : 0;
        split = 0;
#else
        split = (long long)(tiles - whole) * ktiles;
#endif
        mine = b < whole ? (whole - 1 - b) / blocks + 1 : 0;
#if !STREAMK_HELPERS
        const long long s = STREAMK ? share(b) : 0, end = STREAMK ? share(b + 1) : 0;
        if (s < end) {  // a share is shorter than a tile, so it spans one tile or two
            j0 = (int)(s / ktiles), k0 = (int)(s - (long long)j0 * ktiles), e = (int)(end - (long long)j0 * ktiles);
            pieces = e > ktiles ? 2 : 1;
        }
#endif
#else
        // The host rounds the grid up to whole clusters.
        columns = gridDim.x, cluster_rows = gridDim.y / CLUSTER_Y, rank = blockIdx.y % CLUSTER_Y;
        whole = 1, blocks = 1, split = 0, mine = 1;
#endif
    }
    // The first k-tile of the stream-K work of block b (its share runs to that of b + 1).
    __device__ __forceinline__ long long share(int b) const { return b * split / blocks; }
    // Stream-K piece i (0 or 1) of this block's share.
    __device__ __forceinline__ lab_unit piece(int i) const {
        const int b = blockIdx.x;
#if STREAMK_HELPERS
        // j0 < 0: this block's own last-wave tile, its first k-tiles; else tail tile j0 + i k0's last.
        if (j0 < 0) return lab_unit{whole + b, 0, ktiles - e, b, b};
        const int j = j0 + i * k0;
        return lab_unit{whole + j, ktiles - e, ktiles, j, j};
#else
        return i == 0 ? lab_unit{whole + j0, k0, min(ktiles, e), 2 * b, j0} : lab_unit{whole + j0 + 1, 0, e - ktiles, 2 * b + 1, j0 + 1};
#endif
    }
    __device__ __forceinline__ int units() const { return mine + pieces; }
    // The u-th unit of this block's work; false when it has no more.
    __device__ __forceinline__ bool unit(int u, lab_unit& w) const {
        if (u >= units()) return false;
#if PERSISTENT
        // The unit at which the pieces start: after the whole tiles (which then all come before
        // them), or first, or, for a last-wave tile's own block (the helpers' split), at OWNER_UNIT.
        const int at = !STREAMK_FIRST ? mine : STREAMK_HELPERS && j0 < 0 && pieces == 1 ? min(OWNER_UNIT, mine) : 0;
        const int p = u - at;  // the piece this unit is, if 0 or 1
        if (p >= 0 && p < pieces) {
            w = piece(p);
        } else {
            w = {(int)blockIdx.x + (!STREAMK_FIRST || u < at ? u : u - pieces) * blocks, 0, ktiles, 0, 0};
        }
#else
        w = {(int)(blockIdx.y / CLUSTER_Y * gridDim.x + blockIdx.x), 0, ktiles, 0, 0};
#endif
        return true;
    }
    // The first row and column of C of tile `id`.
    __device__ __forceinline__ void at(int id, int& row0, int& col0) const {
        const int per_group = GROUP_M * columns, group = id / per_group * GROUP_M;
        const int rows = min(cluster_rows - group, GROUP_M);
        row0 = ((group + id % per_group % rows) * CLUSTER_Y + rank) * BM, col0 = id % per_group / rows * BN;
    }
};

#if STREAMK
// A stream-K piece's end (consumer warpgroup wg - 1): its accumulators to its slot, one arrival
// on the counter of its part of the tile; the last piece to arrive adds the others' slots into d
// and returns true (it stores C). A slot holds each thread's registers in fours, i-major, so every
// access is a 16-byte one and coalesced: a quarter of the instructions of one access a register
// (16-byte reads time within noise of 4-byte ones). The host
// gives each slot a tile of C's type (TILE_PARTS parts of R registers of 128 threads).
__device__ __forceinline__ bool lab_stream_k_fixup(const lab_gemm_tma_args& p, const lab_tiles& tiles, const lab_unit& w, lab_acc (&d)[MT][BN / 2],
                                                   int wg, int tid) {
    constexpr int R = MT * BN / 2;  // registers a thread
    static_assert(BN / 2 % 4 == 0, "a thread's registers in fours");
    lab_acc4* partials = lab_ptr<lab_acc4>(p.partials);
    auto at = [&](int slot, int m, int q) { return partials + ((size_t)(TILE_PARTS * slot + WG_PART(wg)) * (R / 4) + m * (BN / 8) + q) * 128 + tid; };
    // This piece's accumulators to its slot, seen by any block that reads the slot after this
    // warpgroup's arrival; and another slot added into d.
    auto put = [&]() {
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int q = 0; q < BN / 8; ++q) __stcg(at(w.slot, m, q), lab_acc4{d[m][4 * q], d[m][4 * q + 1], d[m][4 * q + 2], d[m][4 * q + 3]});
        __threadfence();
        asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
    };
    auto add = [&](int slot) {
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int q = 0; q < BN / 8; ++q) {
                const lab_acc4 v = __ldcg(at(slot, m, q));
                d[m][4 * q] += v.x, d[m][4 * q + 1] += v.y, d[m][4 * q + 2] += v.z, d[m][4 * q + 3] += v.w;
            }
    };
    unsigned* count = lab_ptr<unsigned>(p.arrivals) + 2 * w.sk + WG_PART(wg);
#if STREAMK_HELPERS
    // A helper's piece goes to its slot and raises the tile's flag (count); the tile's own block
    // waits for the flag (the helpers wait for nothing, and every block of the persistent grid is
    // resident), adds the slot and stores C. Only the helpers' slots cross L2.
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
    (void)tiles;
#else
    __shared__ int last[2];
    put();
    // The tile's pieces: the blocks whose shares hold its first and last k-tile, and those between
    // whose shares are not empty (with fewer stream-K k-tiles than blocks, some are).
    const long long first = (long long)w.sk * tiles.ktiles, end = first + tiles.ktiles;
    const int b0 = (int)(((first + 1) * tiles.blocks - 1) / tiles.split), b1 = (int)((end * tiles.blocks - 1) / tiles.split);
    if (tid == 0) {
        unsigned pieces = 0;
        for (int b = b0; b <= b1; ++b) pieces += tiles.share(b) < tiles.share(b + 1);
        last[wg - 1] = atomicAdd(count, 1u) == pieces - 1;
    }
    asm volatile("bar.sync %0, 128;\n" ::"r"(3 + wg) : "memory");
    if (!last[wg - 1]) return false;
    __threadfence();
    for (int b = b0; b <= b1; ++b) {
        const int slot = 2 * b + (tiles.share(b) / tiles.ktiles == w.sk ? 0 : 1);
        if (slot == w.slot || tiles.share(b) == tiles.share(b + 1)) continue;
        add(slot);
    }
#endif
    if (tid == 0) *count = 0;
    return true;
}
#endif

// Consumer warpgroup wg - 1 of a block: rows (wg - 1) * 64 MT .. + 64 MT - 1 of each of its units,
// then C (or, for a stream-K piece, the fixup).
// `it` walks the ring over all the block's units, a k-tile at a time.
__device__ __forceinline__ void lab_wgmma_consume(const lab_gemm_tma_args& p, const lab_tiles& tiles, unsigned char* ring, uint64_t* full,
                                                  uint64_t* empty, int wg, int tid) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
    // Stage 0's descriptors of this warpgroup's A rows and of B; stage s is s * (STAGE_A + STAGE_B) on.
    // (Opaque values, so the compiler keeps them rather than recomputing them every k-tile.)
    uint64_t da0 = lab_desc(ring + WG_ROW(wg) * 128, 16, 1024, LAB_SWIZZLE_128B);
    uint64_t db0 = lab_desc(ring + STAGE_A, LAB_B_KMAJOR ? 16 : CHUNK_B, 1024, LAB_SWIZZLE_128B);
    asm volatile("" : "+l"(da0), "+l"(db0));
    lab_ring<STAGES> it;
    lab_unit w;
    for (int u = 0; tiles.unit(u, w); ++u) {
        int row0, col0;
        tiles.at(w.id, row0, col0);
        const int n = w.k1 - w.k0;  // k-tiles of this unit
#if PINGPONG
        // Consumer 1 takes the even units, 2 the odd ones, each after the other's main loop of
        // the unit before (named barrier 5 + wg, arrived on by the other consumer).
        if (u % 2 != wg - 1) {
            it.skip(n);
            continue;
        }
        if (u > 0) asm volatile("bar.sync %0, 256;\n" ::"r"(5 + wg) : "memory");
#endif
        lab_acc d[MT][BN / 2];
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[m][i] = 0;
#if PROMOTE
        float sum[MT][BN / 2];
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) sum[m][i] = 0.0f;
#endif
        // The last k-tile of an unaligned k is multiplied by the loop after this one, only its
        // k-steps that hold data (4097: 1 of 4; the align suite's 4104 and 4112 gain 1.5%). A
        // loop, so no wgmma is behind a branch: ptxas serialises every wgmma of a kernel that has
        // one there. (Skipping an edge tile's empty 64-row block too, by a second copy of this
        // main loop, makes the ping-pong rungs 2-3% slower at every size of the align suite.)
        const int tail = PROMOTE == 0 && n > 0 && w.k1 == tiles.ktiles ? tiles.last_steps % 4 : 0;
        for (int t = 0; t < n - (tail > 0); ++t, it.next()) {
            uint64_t a, b;
            const int s = lab_stage_full<STAGE_A + STAGE_B>(full, it, da0, db0, a, b);
            lab_wgmma_fence();
#if PROMOTE
            // PROMOTE k-tiles summed by the Tensor Cores from zero (g: the k-tile's place in its
            // group), then added to fp32 registers. The previous k-tile's stage is released once
            // its wgmmas are done; a group's last drains all and releases its own too.
            const int g = t % PROMOTE;
            lab_wgmma_tile<lab_prec, M_OUTER>(d, a, b, g == 0);
            lab_wgmma_commit();
            if (g == PROMOTE - 1 || t == n - 1) {
                lab_wgmma_wait<0>();
                if (tid == 0) {
                    if (g > 0) lab_mbar_arrive_cluster<CLUSTER_Y>(&empty[it.back(1)]);
                    lab_mbar_arrive_cluster<CLUSTER_Y>(&empty[s]);
                }
#pragma unroll
                for (int m = 0; m < MT; ++m)
#pragma unroll
                    for (int i = 0; i < BN / 2; ++i) sum[m][i] += d[m][i];
            } else {
                lab_wgmma_wait<1>();
                if (g > 0 && tid == 0) lab_mbar_arrive_cluster<CLUSTER_Y>(&empty[it.back(1)]);
            }
#elif M_OUTER == 2
            // cuBLAS's order: the first 64-row block's wgmmas, the wait for the k-tile before, its
            // stage released, then the other block's, so the producer may refill it sooner. Each
            // half is a group of its own: left out of any group, ptxas closes the first half as
            // one and waits for it too. 128 x 128, 5 stages, 4096^3, paired: fp16 1.023x-1.030x
            // against M_OUTER 0's 1.019x-1.025x, bf16 level.
            lab_wgmma_rows<lab_prec>(d, a, b, 0, t == 0);
            lab_wgmma_commit();
            lab_wgmma_wait<1>();
            if (t > 0 && tid == 0) lab_mbar_arrive_cluster<CLUSTER_Y>(&empty[it.back(1)]);
            lab_wgmma_rows<lab_prec>(d, a, b, 1, t == 0);
            lab_wgmma_commit();
#else
            lab_wgmma_tile<lab_prec, M_OUTER>(d, a, b, t == 0);
            lab_wgmma_commit();
            // This k-tile's wgmmas stay in flight; the previous one's have finished reading its stage.
            lab_wgmma_wait<1>();
            if (t > 0 && tid == 0) lab_mbar_arrive_cluster<CLUSTER_Y>(&empty[it.back(1)]);
#endif
        }
        uint64_t a = 0, b = 0;
        for (int kk = 0; kk < tail; ++kk) {
            if (kk == 0) lab_stage_full<STAGE_A + STAGE_B>(full, it, da0, db0, a, b), it.next();
            lab_wgmma_fence();
            lab_wgmma_step<lab_prec>(d, a, b, kk, n > 1 || kk > 0);
            lab_wgmma_commit();
        }
#if PINGPONG
        // Every full barrier of this unit has been waited on: the other consumer may start its
        // main loop of the next unit while these wgmmas finish and C leaves.
        if (u + 1 < tiles.units()) asm volatile("bar.arrive %0, 256;\n" ::"r"(8 - wg) : "memory");
#endif
        lab_wgmma_wait<0>();
#if PROMOTE
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[m][i] = sum[m][i];
#else
        if (tail > 0 && n > 1 && tid == 0) lab_mbar_arrive_cluster<CLUSTER_Y>(&empty[it.back(2)]);
        if (n > 0 && tid == 0) lab_mbar_arrive_cluster<CLUSTER_Y>(&empty[it.back(1)]);
#endif
#if STREAMK
        if (n < tiles.ktiles && !lab_stream_k_fixup(p, tiles, w, d, wg, tid)) continue;
#endif
        lab_store_c(p, d, ring, wg, tid, row0, col0);
    }
#if PERSISTENT && SLICED_C
    // The block's shared memory must outlive its stores' reads of it; their writes complete with
    // the grid, as after CUTLASS's tma_store_wait. Waiting for the writes too costs the last tile
    // 0.5% of the kernel's cycles at 4096^3.
    if (tid == 0) lab_bulk_wait_read<0>();
#endif
}

// The whole GEMM for one block; the rung's kernel (384 threads, one block an SM) calls it.
__device__ __forceinline__ void lab_wgmma_gemm(const lab_gemm_tma_args& p) {
    extern __shared__ unsigned char dyn[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    // 128-byte swizzling repeats every 1024 bytes: the ring starts on such a boundary.
    unsigned char* ring = dyn + ((1024 - (lab_smem_addr(dyn) & 1023)) & 1023);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const lab_tiles tiles(p.g);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            lab_mbar_init(&full[s], 1);
            lab_mbar_init(&empty[s], (PINGPONG ? 1 : CONSUMERS) * CLUSTER_Y);  // each consumer warpgroup (of the cluster) reading it
        }
        lab_mbar_init_fence();
    }
#if CLUSTER_Y > 1
    lab_cluster_sync();
#else
    __syncthreads();
#endif

    if (wg == 0) {  // producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            const int rank = tiles.rank;
#if CLUSTER_Y == 1 && !LAB_B_KMAJOR
            // The host's rule for B's map (MN-major, one block): its 128-byte column chunks as a
            // third dimension, all BN / 64 of a k-tile one copy, where n fills whole chunks and
            // every tile starts on one (BN a multiple of 64).
            const bool b_chunks = BN % 64 == 0 && (p.g.n * LAB_ELEM) % 128 == 0;
#endif
            int it = 0;
            lab_ring<STAGES> r;
            lab_unit w;
            for (int u = 0; tiles.unit(u, w); ++u) {
                int row0, col0;
                tiles.at(w.id, row0, col0);
                for (int t = w.k0; t < w.k1; ++t, ++it, r.next()) {
                    const int s = r.s();
                    if (it >= STAGES) lab_mbar_wait(&empty[s], r.ph() ^ 1);
                    unsigned char* a = ring + s * (STAGE_A + STAGE_B);
                    unsigned char* b = a + STAGE_A;
                    lab_mbar_expect_tx(&full[s], STAGE_A + STAGE_B);
                    lab_tma_load_2d(a, &p.a_map, t * BK, row0, &full[s]);  // BK x BM
#if CLUSTER_Y == 1 && LAB_B_KMAJOR
                    lab_tma_load_2d(b, &p.b_map, t * BK, col0, &full[s]);  // BK x BN
#elif CLUSTER_Y == 1
                    if (b_chunks) {
                        lab_tma_load_3d(b, &p.b_map, 0, t * BK, col0 / 64, &full[s]);  // 64 x BK x BN / 64 chunks
                    } else {
#pragma unroll
                        for (int c = 0; c < B_ROWS / 64; ++c) lab_tma_load_2d(b + c * CHUNK_B, &p.b_map, col0 + 64 * c, t * BK, &full[s]);
                    }
#elif LAB_B_KMAJOR
                    // This block's share of B's rows (the map's box is BK x BN / CLUSTER_Y), to all.
                    const int part = BN / CLUSTER_Y;
                    lab_tma_multicast_2d(b + rank * part * 128, &p.b_map, t * BK, col0 + rank * part, &full[s], (1 << CLUSTER_Y) - 1);
#else
#pragma unroll
                    for (int c = rank; c < B_ROWS / 64; c += CLUSTER_Y)
                        lab_tma_multicast_2d(b + c * CHUNK_B, &p.b_map, col0 + 64 * c, t * BK, &full[s], (1 << CLUSTER_Y) - 1);
#endif
                }
            }
            (void)rank;
        }
    } else {
        lab_wgmma_consume(p, tiles, ring, full, empty, wg, tid);
    }
#if CLUSTER_Y > 1
    lab_cluster_sync();
#endif
}
