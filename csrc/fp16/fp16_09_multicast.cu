// Technique: rung 5's kernel (wgmma_gemm.cuh) persistent in clusters of two blocks on adjacent
//   tile rows: each block loads its own A and half of B, and TMA multicasts that half into both
//   blocks' shared memory; the pair walks the tiles together, one cluster for each that fits.
// Teaches: what a third fewer loads from L2 buy when the power cap, not the Tensor Cores, sets the
//   clock (rung 5's persistent configuration beside it, alone on its SM, in the same run).
// Limits: as rung 5; a stage is freed only when the consumers of both blocks are done with it,
//   so the slower block of a pair sets the pace; no stream-K (a piece belongs to one block).
//   On an H200 it runs level with rung 5's persistent configuration, not past it: 0.98-0.99x
//   cuBLAS at 4096^3 and 1.02x at 8192^3 in pairs; under ncu at 4096^3 its tensor pipe is busy
//   90.2% of the cycles against 90.9% alone (bf16), what cuBLAS's cooperative kernel reaches too.
//   Fewer loads from L2 do not buy time where the cooperative schedule's epilogue, not the
//   loads, leaves the Tensor Cores idle. Its ping-pong entry (128 x 192, PINGPONG) reads rows
//   that are 16-byte but not 32-byte aligned in place, which a lone block cannot do well: at
//   4104^3 0.92x cuBLAS against fp16_08's 0.87x on padded copies.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && CLUSTER_Y == 2, "the persistent pair this rung measures");

// New at this rung: the persistent pair (CLUSTER_Y = 2), cooperative or (the _pingpong entry) ping-pong.
using Scheduler = lab_persistent<CLUSTER_Y>;
using Kernel = lab_if<PINGPONG, lab_pingpong<lab_fp16, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>,
                      lab_cooperative<lab_fp16, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp16_09_multicast(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
