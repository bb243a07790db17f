// Technique: the type-generic wgmma + TMA kernel of wgmma_gemm.cuh in int8 (m64nBNk32, s32
//   accumulators).
// Teaches: integer Tensor Cores at twice the 16-bit types' rate, exact.
// Limits: B is read K-major (n x k): wgmma transposes only 16-bit operands, and cuBLAS gets that
//   layout too ("TN"); unaligned rows get a padded pitch first (part of the timed work); persistent
//   blocks on m128n192 tiles (PERSISTENT and BN by the tuning, see the header).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(!PINGPONG && !STREAMK_HELPERS, "the cooperative rung");

// The cooperative schedule; persistent blocks and stream-K as the manifest and the tuning choose.
using Kernel = lab_cooperative<lab_int8, lab_ring<STAGES>, lab_chosen_scheduler, lab_chosen_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) int8_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
