// Technique: linear_fp16_05 in bf16: the cooperative kernel, persistent, each consumer making its
//   half of the tile's C = GELU(alpha * A*B + beta * C_in + bias) in bf16 from its accumulators.
// Teaches: the fused epilogue is the same part in either 16-bit type; only its conversions differ
//   (hopper_epilogue_fused.cuh's lab_c16).
// Limits: as linear_fp16_05.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"
#include "hopper_epilogue_fused.cuh"

static_assert(PERSISTENT && !STREAMK && !PINGPONG && !SLICED_C, "the persistent cooperative rung, C from the registers");

// New at this rung: the fused epilogue.
using Kernel = lab_cooperative<lab_bf16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_fused_epilogue<lab_gelu>>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) linear_bf16_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
