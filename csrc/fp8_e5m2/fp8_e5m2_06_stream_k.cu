// Technique: fp8_e5m2_05's cooperative kernel persistent, the tail wave split by stream-K
//   (fp16_06), A in e5m2 and B in e4m3.
// Teaches: what stream-K buys the mixed pair at shapes whose tiles make a partial last wave.
// Limits: as fp8_e5m2_05; the partial tiles' sums pass through scratch in C's type.
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && STREAMK && !STREAMK_HELPERS && !PINGPONG && SLICED_C, "the cooperative stream-K rung");

// New at this rung: persistent blocks, the tail wave split by stream-K.
using Kernel = lab_cooperative<lab_fp8_e5m2<PROMOTE>, lab_ring<STAGES>, lab_stream_k<STREAMK_FIRST>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp8_e5m2_06_stream_k(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
