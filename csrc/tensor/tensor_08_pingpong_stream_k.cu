// Technique: rung 7's ping-pong schedule (wgmma_gemm.cuh) with stream-K: the tiles that would make
//   a last, partial wave are split by k-tiles over all the blocks, and each block's consumers take
//   its pieces in turn like its whole tiles, first (STREAMK_FIRST), one's fixup running while the
//   other's wgmmas do.
// Teaches: what the tail wave costs the ping-pong schedule, whose tiles are at most 128 x 192
//   (704 of them at 4096^3 are 5.3 waves of 132; 726 at 4097^3, 5.5), rung 7 beside it. With the
//   pieces last it ran level with rung 7 (logs 2026-12-01-s16-1 to s16-4): the last fixups ended
//   the kernel and cost what the balance gained (log 2026-12-02-s22-1). With them first, 0.96x
//   cuBLAS at 4096^3 against rung 7's 0.89x, and 0.85x against 0.82x at 4104^3 (log s22-2). What
//   still cost it was its own k-loop: balanced (ncu at 4096^3: slowest SM 297.8k cycles, mean
//   295.9k), it ran 5.5% more cycles an SM than rung 7 (mean 280.4k, slowest 315.0k), its tensor
//   pipe 88.6% busy against 93.5%: the stream-K code's registers had the compiler build all of a
//   k-tile's descriptors before its first wgmma. With 32-bit descriptor adds (wgmma.cuh): mean
//   289.4k, 90.6% busy, 1.00x cuBLAS at 4096^3 (log 2026-12-02-s23-4). Its _helpers entry
//   (STREAMK_HELPERS) splits the tail another way: each last-wave tile keeps its first k-tiles
//   on its own block and the blocks that wave leaves idle take the rest, so the blocks keep
//   reading the same k-tiles at the same time; at 128 x 128, 4096^3, level with cuBLASLt's best
//   (0.989x-1.003x of it on the committed trees, logs 2026-12-04-s39-5, s39-6, s40-5).
// Limits: as rung 7; the partial sums go through global memory (two tiles a block); a helped
//   tile's block waits for its helper's piece, which a grid of resident blocks makes safe.
#include "wgmma_gemm.cuh"

extern "C" __global__ void __launch_bounds__(384, 1) tensor_08_pingpong_stream_k(const __grid_constant__ lab_gemm_tma_args p) { lab_wgmma_gemm(p); }
