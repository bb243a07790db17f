// Technique: three consumer warpgroups on a 192-row tile (fp16_10) in tf32 (fp32 inputs, m64nNk8; B
//   K-major, its copy made by the host).
// Teaches: whether a third consumer's rows hide this precision's waits better than a second's.
// Limits: as tf32_05; BLOCK_X = 512.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT, "the persistent three-consumer rung this file measures");

// New at this rung: a third consumer warpgroup.
using Kernel = lab_three_consumers<lab_tf32, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(512, 1) tf32_10_three_consumers(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
