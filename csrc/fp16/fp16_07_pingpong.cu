// Technique: rung 5's kernel (wgmma_gemm.cuh) persistent, with the ping-pong schedule: the two
//   consumer warpgroups take alternate tiles whole (128 x BN each) and take turns in the main
//   loop, so one stores its C while the other's wgmmas run.
// Teaches: what the epilogue costs when it stops the Tensor Cores (rung 6 beside it: persistent,
//   both consumers on every tile, so both store C at once).
// Limits: as rung 5; the accumulators of a 128-row tile in one warpgroup (BN <= 192); C leaves
//   by TMA stores where its rows are 16-byte aligned, else through slices by coalesced stores.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && !STREAMK && PINGPONG, "the persistent ping-pong rung");

// New at this rung: the ping-pong schedule.
using Kernel = lab_pingpong<lab_fp16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp16_07_pingpong(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
