// Technique: fp16_05's cooperative kernel, persistent, with a linear layer's epilogue fused: each
//   consumer makes its half of the tile's C = GELU(alpha * A*B + beta * C_in + bias) in fp16 from
//   its accumulators (hopper_epilogue_fused.cuh).
// Teaches: what an epilogue that reads C_in and bias and computes an activation costs when both
//   consumers run it at once and the Tensor Cores wait (linear_fp16_07 beside it hides it).
// Limits: fp16; C's pairs of columns leave as 4-byte stores, not through shared memory and TMA.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"
#include "hopper_epilogue_fused.cuh"

static_assert(PERSISTENT && !STREAMK && !PINGPONG && !SLICED_C, "the persistent cooperative rung, C from the registers");

// New at this rung: the fused epilogue.
using Kernel = lab_cooperative<lab_fp16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_fused_epilogue<lab_gelu>>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) linear_fp16_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
