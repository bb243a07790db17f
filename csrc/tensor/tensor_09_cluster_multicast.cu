// Technique: rung 5's kernel (wgmma_gemm.cuh) persistent in clusters of two blocks on adjacent
//   tile rows: each block loads its own A and half of B, and TMA multicasts that half into both
//   blocks' shared memory; the pair walks the tiles together, one cluster for each that fits.
// Teaches: what a third fewer loads from L2 buy when the power cap, not the Tensor Cores, sets the
//   clock (rung 5's persistent configuration beside it, alone on its SM, in the same run).
// Limits: as rung 5; a stage is freed only when the consumers of both blocks are done with it,
//   so the slower block of a pair sets the pace; no stream-K (a piece belongs to one block).
#include "wgmma_gemm.cuh"

static_assert(PERSISTENT && CLUSTER_Y == 2, "the persistent pair this rung measures");

extern "C" __global__ void __launch_bounds__(384, 1) tensor_09_cluster_multicast(const __grid_constant__ lab_gemm_tma_args p) { lab_wgmma_gemm(p); }
