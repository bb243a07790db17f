// Technique: linear_fp16_07 in bf16: the ping-pong kernel, C = GELU(alpha * A*B + beta * C_in +
//   bias) in bf16 made from one consumer's accumulators while the other consumer's wgmmas run.
// Teaches: as linear_fp16_07, in the type mixed-precision training keeps most often.
// Limits: as linear_fp16_07.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"
#include "hopper_epilogue_fused.cuh"

static_assert(PERSISTENT && !STREAMK && PINGPONG && !SLICED_C, "the persistent ping-pong rung, C from the registers");

// New at this rung: the ping-pong schedule with the fused epilogue.
using Kernel = lab_pingpong<lab_bf16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_fused_epilogue<lab_gelu>>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) linear_bf16_07_pingpong(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
