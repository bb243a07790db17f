// Technique: a persistent pair of blocks on adjacent tile rows sharing B by TMA multicast
//   (fp16_09), A in e5m2 and B in e4m3.
// Teaches: what fewer L2 reads of B buy the mixed pair.
// Limits: as fp8_e5m2_05; each block of the pair loads half of B's rows and multicasts them to both.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && CLUSTER_Y == 2, "the persistent pair this rung measures");

// New at this rung: the persistent pair (CLUSTER_Y = 2), cooperative or ping-pong.
using Scheduler = lab_persistent<CLUSTER_Y>;
using Kernel = lab_if<PINGPONG, lab_pingpong<lab_fp8_e5m2<PROMOTE>, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>,
                      lab_cooperative<lab_fp8_e5m2<PROMOTE>, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp8_e5m2_09_multicast(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
