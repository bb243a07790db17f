// Technique: rung 5's kernel (wgmma_gemm.cuh) with persistent blocks and stream-K: one resident
//   block an SM walks the tiles, and the tiles of the last, partial wave are split by k-tiles
//   over all the blocks, the last piece of each to finish adding the others' partial sums.
// Teaches: what the schedule buys against the tail wave (Osama et al., PPoPP 2023), rung 5 beside
//   it in the same run: 4097³ makes 4.25 waves of 128 x 256 tiles on 132 SMs, 4096³ 3.9.
// Limits: as rung 5; the partial sums go through global memory (two tiles a block).
#include "wgmma_gemm.cuh"

extern "C" __global__ void __launch_bounds__(384, 1) tensor_06_stream_k(const __grid_constant__ lab_gemm_tma_args p) { lab_wgmma_gemm(p); }
