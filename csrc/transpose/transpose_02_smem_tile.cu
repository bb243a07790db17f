// Technique: a TILE x TILE tile through shared memory (rung 2): read rows of the input tile,
//   write rows of the output tile, with the transposition done by the shared-memory indices.
// Teaches: coalescing both sides. Global reads and writes are now 32 consecutive floats per warp.
// Limits: the write side reads a column of the shared tile: 32 words TILE apart, all in one bank,
//   so each warp's read is a 32-way bank conflict. Rung 3 pads the tile.
#include "lab_transpose.h"
#include "lab_device.cuh"

static_assert(BLOCK_X == TILE && BLOCK_Y == TILE && TILE_X == TILE && TILE_Y == TILE && BLOCK_Z == 1, "one element per thread");

extern "C" __global__ void __launch_bounds__(TILE * TILE) transpose_02_smem_tile(lab_transpose_args p) {
    __shared__ float tile[TILE][TILE];
    const int x = threadIdx.x, y = threadIdx.y;
    const int c = blockIdx.x * TILE + x, r = blockIdx.y * TILE + y;
    if (r < p.rows && c < p.cols) tile[y][x] = lab_ptr<const float>(p.src)[(size_t)r * p.cols + c];
    __syncthreads();
    const int oc = blockIdx.y * TILE + x, orow = blockIdx.x * TILE + y;  // output row = input column
    if (orow < p.cols && oc < p.rows) lab_ptr<float>(p.dst)[(size_t)orow * p.rows + oc] = tile[x][y];
}
