// Technique: bf16_09's pair with three consumer warpgroups: 192-row tiles (fp16_10).
// Teaches: the same tile shape in bf16, where the grid does not divide into whole waves of the
//   two-consumer tiles (4104^3: 192 x 176 tiles make 4 whole waves of pairs), bf16_07 and bf16_09
//   beside it in the same run.
// Limits: as fp16_10.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT, "the persistent three-consumer rung this file measures");

using Kernel = lab_three_consumers<lab_bf16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(512, 1) bf16_10_three_consumers(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
