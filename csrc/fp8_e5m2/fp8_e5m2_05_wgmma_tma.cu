// Technique: fp8_05's kernel (cooperative; persistent blocks as the tuning chooses) with A in
//   e5m2 and B in e4m3 (m64nNk32.e5m2.e4m3), every PROMOTE k-tiles promoted into fp32 registers.
// Teaches: a mixed fp8 pair costs the Tensor Cores nothing: the rate is e4m3's, so this family
//   beside fp8 in one run isolates the formats' effect (the same shapes, the same schedule).
// Limits: as fp8_05: B K-major (n x k), no scale factors (the inputs are exact values of their
//   formats), unaligned rows copied to a padded pitch first (part of the timed work).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(!PINGPONG && !STREAMK, "the cooperative rung");

// fp8 with every PROMOTE k-tiles promoted; cooperative, persistent blocks as the tuning chooses.
using Kernel = lab_cooperative<lab_fp8_e5m2<PROMOTE>, lab_ring<STAGES>, lab_chosen_scheduler, lab_chosen_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp8_e5m2_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
