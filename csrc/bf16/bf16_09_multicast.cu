// Technique: bf16_05's kernel persistent in clusters of two blocks that share B by TMA multicast
//   (fp16_09).
// Teaches: the same trade in bf16, bf16_05 beside it in the same run.
// Limits: as fp16_09 (level with bf16_05 on an H200: 0.99-1.00x cuBLAS at 4096^3, 1.02x at
//   8192^3).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && CLUSTER_Y == 2, "the persistent pair this rung measures");

using Kernel = lab_cooperative<lab_bf16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) bf16_09_multicast(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
