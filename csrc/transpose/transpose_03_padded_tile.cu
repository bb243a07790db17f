// Technique: the shared tile padded by one column (rung 3): TILE x (TILE + 1).
// Teaches: bank conflicts. With a row length of TILE + 1 words, the column a warp reads on the
//   write side walks across all 32 banks instead of hitting one, at the cost of one word a row.
// Limits: one element per thread: TILE x TILE = 1024 threads per block, each doing one load and
//   one store, with index arithmetic and a barrier per element. Rung 4 gives threads more work.
#include "lab_transpose.h"
#include "lab_device.cuh"

static_assert(BLOCK_X == TILE && BLOCK_Y == TILE && TILE_X == TILE && TILE_Y == TILE && BLOCK_Z == 1, "one element per thread");

extern "C" __global__ void __launch_bounds__(TILE * TILE) transpose_03_padded_tile(lab_transpose_args p) {
    __shared__ float tile[TILE][TILE + 1];
    const int x = threadIdx.x, y = threadIdx.y;
    const int c = blockIdx.x * TILE + x, r = blockIdx.y * TILE + y;
    if (r < p.rows && c < p.cols) tile[y][x] = lab_ptr<const float>(p.src)[(size_t)r * p.cols + c];
    __syncthreads();
    const int oc = blockIdx.y * TILE + x, orow = blockIdx.x * TILE + y;
    if (orow < p.cols && oc < p.rows) lab_ptr<float>(p.dst)[(size_t)orow * p.rows + oc] = tile[x][y];
}
