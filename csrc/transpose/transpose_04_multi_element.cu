// Technique: several elements per thread (rung 4): a block of TILE x BLOCK_Y threads moves a
//   padded TILE x TILE tile, each thread TILE / BLOCK_Y elements on each side.
// Teaches: amortising the index math and the barrier. Fewer threads per tile means several
//   independent loads in flight per thread and more tiles resident per SM.
// Limits: 4-byte accesses on both sides; the tile is square and TILE wide, so shapes that are not
//   multiples of TILE run the bounds checks on their edge tiles.
#include "lab_transpose.h"
#include "lab_device.cuh"

// A TILE-wide block of TILE / BLOCK_Y rows a thread: the entry's constraint in variants.toml.

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) transpose_04_multi_element(lab_transpose_args p) {
    __shared__ float tile[TILE][TILE + 1];
    const float* src = lab_ptr<const float>(p.src);
    float* dst = lab_ptr<float>(p.dst);
    const int x = threadIdx.x;
    const int c = blockIdx.x * TILE + x;
#pragma unroll
    for (int y = threadIdx.y; y < TILE; y += BLOCK_Y) {
        const int r = blockIdx.y * TILE + y;
        if (r < p.rows && c < p.cols) tile[y][x] = src[(size_t)r * p.cols + c];
    }
    __syncthreads();
    const int oc = blockIdx.y * TILE + x;
#pragma unroll
    for (int y = threadIdx.y; y < TILE; y += BLOCK_Y) {
        const int orow = blockIdx.x * TILE + y;
        if (orow < p.cols && oc < p.rows) dst[(size_t)orow * p.rows + oc] = tile[x][y];
    }
}
