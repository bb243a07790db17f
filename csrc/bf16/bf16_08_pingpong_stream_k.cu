// Technique: bf16_07's ping-pong schedule with stream-K for the tail wave (fp16_08): the last,
//   partial wave's tiles split by k-tiles over all the blocks, the pieces taken in turn, first.
// Teaches: the tail wave's share of a bf16 GEMM at 128 x 192 tiles, bf16_07 beside it. With the
//   pieces last it runs level with bf16_07 at 4096^3, 4097^3 and 4111^3 and 4% behind at 8192^3
//   on an H200; with them first, 0.96x cuBLAS at 4096^3 against bf16_07's 0.89x. Its _helpers
//   entry splits the tail as fp16_08's does.
// Limits: as bf16_07; the partial sums go through global memory (two tiles a block).
#include "lab_gemm.h"
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && STREAMK && PINGPONG, "the ping-pong stream-K rung");

using Scheduler = lab_if<STREAMK_HELPERS, lab_stream_k_helpers<STREAMK_FIRST, OWNER_UNIT>, lab_stream_k<STREAMK_FIRST>>;
using Kernel = lab_pingpong<lab_bf16, lab_ring<STAGES>, Scheduler, lab_sliced_epilogue>;
static_assert(Kernel::prec::kind == PREC, "the manifest's PREC is the precision this rung composes");

extern "C" __global__ void __launch_bounds__(384, 1) bf16_08_pingpong_stream_k(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }
