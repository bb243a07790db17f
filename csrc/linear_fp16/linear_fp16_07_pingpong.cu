// Technique: fp16_07's ping-pong kernel with a linear layer's epilogue fused: C = GELU(alpha * A*B
//   + beta * C_in + bias) in fp16, made from one consumer's accumulators while the other
//   consumer's wgmmas run (hopper_epilogue_fused.cuh).
// Teaches: the ping-pong schedule's point: an epilogue with work in it, hidden behind the other
//   consumer's main loop (linear_fp16_05 beside it, both consumers storing at once).
// Limits: fp16; C's pairs of columns leave as 4-byte stores, not through shared memory and TMA.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"
#include "hopper_epilogue_fused.cuh"

static_assert(PERSISTENT && !STREAMK && PINGPONG && !SLICED_C, "the persistent ping-pong rung, C from the registers");

// New at this rung: the ping-pong schedule with the fused epilogue.
using Kernel = lab_pingpong<lab_fp16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_fused_epilogue<lab_gelu>>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) linear_fp16_07_pingpong(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
