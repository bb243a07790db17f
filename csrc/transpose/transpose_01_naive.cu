// Technique: one thread per element, reading a row of the input and writing a column of the
//   output (rung 1).
// Teaches: a transpose cannot be coalesced on both sides by indexing alone: the reads of a warp
//   are 32 consecutive floats, its writes are 32 floats `rows` apart, one transaction each.
// Limits: the strided writes waste most of every 32-byte sector written; rung 2 stages a tile
//   in shared memory so both sides are row-wise.
#include "lab_transpose.h"
#include "lab_device.cuh"

static_assert(BLOCK_X == TILE_X && BLOCK_Y == TILE_Y && BLOCK_Z == 1, "one element per thread");

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) transpose_01_naive(lab_transpose_args p) {
    const int c = blockIdx.x * TILE_X + threadIdx.x;
    const int r = blockIdx.y * TILE_Y + threadIdx.y;
    if (r < p.rows && c < p.cols)
        lab_ptr<float>(p.dst)[(size_t)c * p.rows + r] = lab_ptr<const float>(p.src)[(size_t)r * p.cols + c];
}
