// Technique: the type-generic wgmma + TMA kernel of wgmma_gemm.cuh in fp8 e4m3 (m64n192k32), each
//   k-tile's products summed by the Tensor Cores from zero and promoted into fp32 registers
//   (PROMOTE, DeepGEMM's way).
// Teaches: fp8 doubles the 16-bit types' rate, but its wgmma accumulates in a window narrower than
//   fp32: exact sums need the consumer's fp32 adds.
// Limits: B is read K-major (n x k): wgmma transposes only 16-bit operands, and cuBLASLt's fp8
//   kernels take that layout too ("TN"); no scale factors (the inputs are exact e4m3 values);
//   unaligned rows get a padded pitch first (part of the timed work); persistent blocks (see the
//   header).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(!PINGPONG && !STREAMK, "the cooperative rung");

// fp8 with every PROMOTE k-tiles promoted; cooperative, persistent blocks as the tuning chooses.
using Kernel = lab_cooperative<lab_fp8<PROMOTE>, lab_ring<STAGES>, lab_chosen_scheduler, lab_chosen_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp8_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
