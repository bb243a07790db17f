// Technique: the ping-pong schedule (fp16_07) with A in e5m2 and B in e4m3: the consumers take
//   alternate tiles whole and take turns in the main loop.
// Teaches: the epilogue's share of the mixed pair's GEMM, fp8_e5m2_05 beside it in the same run.
// Limits: as fp8_e5m2_05; a consumer's tile is 64 rows (BM = 64), so that its promoted sums,
//   twice the accumulators, fit its registers.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && !STREAMK && PINGPONG, "the persistent ping-pong rung");

// New at this rung: the ping-pong schedule.
using Kernel = lab_pingpong<lab_fp8_e5m2<PROMOTE>, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp8_e5m2_07_pingpong(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
