// Technique: rung 7's ping-pong schedule (wgmma_gemm.cuh) with stream-K: the tiles that would make
//   a last, partial wave are split by k-tiles over all the blocks, and each block's consumers take
//   its pieces in turn like its whole tiles, first (STREAMK_FIRST), one's fixup running while the
//   other's wgmmas do.
// Teaches: what the tail wave costs the ping-pong schedule, whose tiles are at most 128 x 192
//   (704 of them at 4096^3 are 5.3 waves of 132; 726 at 4097^3, 5.5), rung 7 beside it. With the
//   pieces last, the last fixups end the kernel and cost what the balance gains, level with rung
//   7; with them first, about 8% ahead at 4096^3 and 4% at 4104^3. The balanced schedule pays in
//   its own k-loop: the stream-K code's registers can have the compiler build all of a k-tile's
//   descriptors before its first wgmma (5.5% more cycles an SM than rung 7, tensor pipe 88.6%
//   busy against 93.5%); 32-bit descriptor adds (wgmma.cuh's lab_desc_add) narrow that gap (90.6%
//   busy). Its _helpers entry (STREAMK_HELPERS) splits the tail another way: each last-wave tile
//   keeps its first k-tiles on its own block and the blocks that wave leaves idle take the rest,
//   so the blocks keep reading the same k-tiles at the same time; at 128 x 128, 4096^3, it runs
//   level with cuBLASLt's best.
// Limits: as rung 7; the partial sums go through global memory (two tiles a block); a helped
//   tile's block waits for its helper's piece, which a grid of resident blocks makes safe.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && STREAMK && PINGPONG, "the ping-pong stream-K rung");

// New at this rung: ping-pong with stream-K's even split, or (the _helpers entry) the helpers' split.
using Scheduler = lab_if<STREAMK_HELPERS, lab_stream_k_helpers<STREAMK_FIRST, OWNER_UNIT>, lab_stream_k<STREAMK_FIRST>>;
using Kernel = lab_pingpong<lab_fp16, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp16_08_pingpong_stream_k(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
