// Technique: rung 5's kernel (wgmma_gemm.cuh) with persistent blocks and stream-K: one resident
//   block an SM walks the tiles, and the tiles of the last, partial wave are split by k-tiles
//   over all the blocks, the last piece of each to finish adding the others' partial sums.
// Teaches: what the schedule buys against the tail wave (Osama et al., PPoPP 2023), rung 5 beside
//   it in the same run: 4097³ makes 4.25 waves of 128 x 256 tiles on 132 SMs, 4096³ 3.9.
// Limits: as rung 5; the partial sums go through global memory (two tiles a block).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && STREAMK && !STREAMK_HELPERS && !PINGPONG && SLICED_C, "the cooperative stream-K rung");

// New at this rung: persistent blocks, the tail wave split by stream-K.
using Kernel = lab_cooperative<lab_fp16, lab_ring<STAGES>, lab_stream_k<STREAMK_FIRST>, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) fp16_06_stream_k(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
