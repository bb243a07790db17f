// Technique: repeated passes over a working set, each block over one slice per pass, with loads
//   that skip L1 (ld.global.cg), so every pass is served by L2 while the set fits and by DRAM
//   after. The words are summed as integers, so the check is exact whatever the data.
// Teaches: where the L2 ends. Bandwidth against working-set size is a plateau (L2), a knee, and
//   a floor (DRAM); the lab infers the L2 size from the knee. ROTATE = 0 keeps each slice on one
//   block; ROTATE = 1 hands it to the next block every pass, so lines move between SMs (and
//   between the L2's partitions). DATA (host side) picks random bits or compressible floats.
// Limits: the host launches only the blocks that fit at once (at most BLOCKS_PER_SM per SM): a
//   second wave would re-read only its own part of the set. Reads only; the set is a multiple of
//   16 bytes; per-thread partial sums are written once (not counted as work).
#include "lab_l2.h"
#include "lab_device.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");
static_assert(ROTATE == 0 || ROTATE == 1, "ROTATE: 0 private slices, 1 slices rotate between blocks");
static_assert(DATA == 0 || DATA == 1, "DATA: 0 random bits, 1 floats in [0, 1)");

__device__ __forceinline__ void lab_add(uint4& acc, const uint4& v) {
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
}

extern "C" __global__ void __launch_bounds__(BLOCK_X) l2_01_working_set(lab_l2_args p) {
    const uint4* src = lab_ptr<const uint4>(p.src);
    const uint64_t n4 = p.n / 4;
    const uint64_t slice = (n4 + gridDim.x - 1) / gridDim.x;
    uint4 acc[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) acc[u] = make_uint4(0, 0, 0, 0);
    for (int pass = 0; pass < p.passes; ++pass) {
        const uint64_t owner = ROTATE ? (blockIdx.x + (uint64_t)pass) % gridDim.x : blockIdx.x;
        const uint64_t begin = owner * slice;
        const uint64_t end = min(n4, begin + slice);
        uint64_t i = begin + threadIdx.x;
        for (; i + 3 * BLOCK_X < end; i += 4 * BLOCK_X) {  // four independent loads in flight
#pragma unroll
            for (int u = 0; u < 4; ++u) lab_add(acc[u], __ldcg(&src[i + u * BLOCK_X]));
        }
        for (; i < end; i += BLOCK_X) lab_add(acc[0], __ldcg(&src[i]));
    }
    unsigned s = 0;
#pragma unroll
    for (int u = 0; u < 4; ++u) s += acc[u].x + acc[u].y + acc[u].z + acc[u].w;
    lab_ptr<unsigned>(p.out)[(uint64_t)blockIdx.x * BLOCK_X + threadIdx.x] = s;
}
