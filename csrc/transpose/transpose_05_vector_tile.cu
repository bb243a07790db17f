// Technique: vector accesses on both sides (rung 5): a TILE x TILE tile, TILE = BLOCK_X x VEC,
//   read as VEC-float rows and written as VEC-float rows of the output, each thread gathering
//   its VEC output floats from a column of the padded shared tile. All of a thread's loads are
//   issued before its first shared-memory store.
// Teaches: DRAM likes long runs. A 64-wide tile turns each row a warp touches into 256 bytes
//   instead of 128 on both the read and the write side, and VEC-wide accesses cut the memory
//   instructions by VEC. The gather costs two-way bank conflicts, which shared memory absorbs.
// Limits: rows and cols must be multiples of VEC (the manifest declares it), so every vector is
//   in or out of the matrix and 8- or 16-byte aligned; edge tiles check bounds per vector.
#include "lab_transpose.h"
#include "lab_device.cuh"

#define TILE (BLOCK_X * VEC)
static_assert(VEC == 2 || VEC == 4, "VEC floats per access");
// A square tile of TILE / BLOCK_Y rows a thread, in shared memory: the entry's constraints in
// variants.toml.

template <int V>
struct lab_vec;
template <>
struct lab_vec<2> {
    using type = float2;
};
template <>
struct lab_vec<4> {
    using type = float4;
};
using vec_t = lab_vec<VEC>::type;

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y) transpose_05_vector_tile(lab_transpose_args p) {
    __shared__ float tile[TILE][TILE + 1];
    const float* src = lab_ptr<const float>(p.src);
    float* dst = lab_ptr<float>(p.dst);
    constexpr int ROWS = TILE / BLOCK_Y;
    const int x = threadIdx.x * VEC;
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    vec_t v[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const int r = r0 + threadIdx.y + i * BLOCK_Y;
        if (r < p.rows && c0 + x < p.cols) v[i] = *reinterpret_cast<const vec_t*>(&src[(size_t)r * p.cols + c0 + x]);
    }
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const float* f = reinterpret_cast<const float*>(&v[i]);
#pragma unroll
        for (int k = 0; k < VEC; ++k) tile[threadIdx.y + i * BLOCK_Y][x + k] = f[k];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const int y = threadIdx.y + i * BLOCK_Y;  // output row c0 + y holds input column c0 + y
        if (c0 + y < p.cols && r0 + x < p.rows) {
            vec_t o;
            float* f = reinterpret_cast<float*>(&o);
#pragma unroll
            for (int k = 0; k < VEC; ++k) f[k] = tile[x + k][y];
            *reinterpret_cast<vec_t*>(&dst[(size_t)(c0 + y) * p.rows + r0 + x]) = o;
        }
    }
}
