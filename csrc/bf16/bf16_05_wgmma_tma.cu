// Technique: the type-generic wgmma + TMA kernel of wgmma_gemm.cuh in bf16 (m64nBNk16, fp32
//   accumulators), the fp16 rung (fp16_05) with the other 16-bit type.
// Teaches: bf16 runs at fp16's rate on Hopper; only the inputs' range and precision differ.
// Limits: B is read MN-major (row-major, wgmma's transpose flag), as cuBLAS gets it; unaligned
//   rows get a padded pitch first (part of the timed work); persistent blocks (PERSISTENT, see the header).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(!PINGPONG && !STREAMK_HELPERS, "the cooperative rung");

// The cooperative schedule; persistent blocks and stream-K as the manifest and the tuning choose.
using Kernel = lab_cooperative<lab_bf16, lab_ring<STAGES>, lab_chosen_scheduler, lab_chosen_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) bf16_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
