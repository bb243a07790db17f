// Technique: a persistent pair of blocks on adjacent tile rows sharing B by TMA multicast (fp16_09)
//   in int8 (s8 inputs, s32 C; B K-major).
// Teaches: what fewer L2 reads of B buy this precision.
// Limits: as int8_05; each block of the pair loads half of B's rows and multicasts them to both.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && CLUSTER_Y == 2, "the persistent pair this rung measures");

// New at this rung: the persistent pair (CLUSTER_Y = 2), cooperative or ping-pong.
using Scheduler = lab_persistent<CLUSTER_Y>;
using Kernel = lab_if<PINGPONG, lab_pingpong<lab_int8, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>,
                      lab_cooperative<lab_int8, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) int8_09_multicast(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
