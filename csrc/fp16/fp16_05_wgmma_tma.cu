// Technique: Hopper's warpgroup MMA fed by the tensor copy engine (rung 5; sm_90a): the type-generic
//   wgmma + TMA kernel of wgmma_gemm.cuh in fp16 (m64nBNk16, fp32 accumulators): a TMA producer
//   warpgroup, a STAGES-deep ring of 128-byte-swizzled stages on mbarriers, two consumer
//   warpgroups issuing wgmma from shared-memory descriptors, setmaxnreg, grouped rasterisation.
// Teaches: the Hopper pipeline. Copies need one thread and no registers; the math is issued
//   asynchronously by 128 threads at a time; the two only meet at mbarriers.
// Limits: B is read MN-major (row-major, wgmma's transpose flag), as cuBLAS gets it; unaligned
//   rows get a padded pitch first (part of the timed work); one tile a block (see the header).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(!PINGPONG, "the cooperative rung");

// The cooperative schedule; one tile a block, or persistent blocks where the tuning sets PERSISTENT.
using Kernel = lab_cooperative<lab_fp16, lab_ring<STAGES>, lab_chosen_scheduler, lab_chosen_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp16_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
