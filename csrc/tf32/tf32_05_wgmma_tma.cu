// Technique: the type-generic wgmma + TMA kernel of wgmma_gemm.cuh in tf32 (m64nBNk8, fp32
//   accumulators): fp32 inputs, which the Tensor Cores read as tf32.
// Teaches: tf32 halves the 16-bit types' rate for twice the bytes a tile; rung 4's mma.sync
//   reaches a fraction of it.
// Limits: B is read K-major (n x k): wgmma transposes only 16-bit operands, and cuBLAS gets that
//   layout too ("TN"); unaligned rows get a padded pitch first (part of the timed work); one tile
//   per block (see the header).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(!PINGPONG && !STREAMK_HELPERS, "the cooperative rung");

// The cooperative schedule; one tile a block, or persistent blocks and stream-K where the tuning sets them.
using Kernel = lab_cooperative<lab_tf32, lab_ring<STAGES>, lab_chosen_scheduler, lab_chosen_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) tf32_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
