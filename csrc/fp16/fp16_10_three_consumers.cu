// Technique: rung 9's persistent pair with three consumer warpgroups instead of two, so a block's
//   tile is 192 rows (a 64-row block each) and the producer feeds 1.5 times the rows per stage.
// Teaches: what the tile's shape buys where the grid does not divide into whole waves. At 4104^3
//   the two-consumer pair's 128 x 192 tiles make 374 pair units for 66 pairs, 5.67 waves, so the
//   busiest SM multiplies 6 units; 192 x 176 tiles make 11 x 24 = 264 units, 4 whole waves, the
//   tile cuBLAS's kernel takes at that size (with the operands' roles swapped).
// Limits: as rung 9 (cooperative, so the epilogue stops the Tensor Cores); 512 threads leave each
//   consumer 152 registers, so a 64-row block's accumulators are at most 112 of them (BN <= 224);
//   no ping-pong and no stream-K with three consumers.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT, "the persistent three-consumer rung this file measures");

// New at this rung: three consumer warpgroups.
using Kernel = lab_three_consumers<lab_fp16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(512, 1) fp16_10_three_consumers(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
