// Technique: tf32_05's kernel with the ping-pong schedule (fp16_07) in tf32 (fp32 inputs, m64nNk8;
//   B K-major, its copy made by the host): the consumers take alternate tiles whole and take turns
//   in the main loop.
// Teaches: the epilogue's share of this precision's GEMM, tf32_05 beside it in the same run.
// Limits: as tf32_05; BN <= 192 (a 128-row tile's accumulators in one warpgroup).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && !STREAMK && PINGPONG, "the persistent ping-pong rung");

// New at this rung: the ping-pong schedule.
using Kernel = lab_pingpong<lab_tf32, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) tf32_07_pingpong(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
