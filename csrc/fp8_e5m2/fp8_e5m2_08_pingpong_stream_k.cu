// Technique: the ping-pong schedule with stream-K (fp16_08), A in e5m2 and B in e4m3: the tiles
//   that would make a partial last wave are split over every block.
// Teaches: the tail's cost at unaligned shapes for the mixed pair.
// Limits: as fp8_e5m2_07.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && STREAMK && PINGPONG, "the ping-pong stream-K rung");

// New at this rung: ping-pong with the last wave split by stream-K (or its helpers).
using Scheduler = lab_if<STREAMK_HELPERS, lab_stream_k_helpers<STREAMK_FIRST, OWNER_UNIT>, lab_stream_k<STREAMK_FIRST>>;
using Kernel = lab_pingpong<lab_fp8_e5m2<PROMOTE>, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp8_e5m2_08_pingpong_stream_k(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
