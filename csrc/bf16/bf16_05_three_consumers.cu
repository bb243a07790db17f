// Technique: bf16_04's pair with three consumer warpgroups: 192-row tiles (tensor_10).
// Teaches: the same tile shape in bf16, where the grid does not divide into whole waves of the
//   two-consumer tiles (4104^3: 192 x 176 tiles make 4 whole waves of pairs), bf16_02 and bf16_04
//   beside it in the same run.
// Limits: as tensor_10.
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && CONSUMERS == 3, "the persistent three-consumer rung this file measures");

extern "C" __global__ void __launch_bounds__(512, 1) bf16_05_three_consumers(const __grid_constant__ lab_gemm_tma_args p) { lab_wgmma_gemm(p); }
