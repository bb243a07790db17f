// Technique: repeated passes over a working set, each block over its own slice, with loads that
//   skip L1 (ld.global.cg), so every pass is served by L2 while the set fits and by DRAM after.
// Teaches: where the L2 ends. Bandwidth against working-set size is a plateau (L2), a knee, and
//   a floor (DRAM); the lab infers the L2 size from the knee. Slices are private to a block so no
//   line is shared between SMs, which would let a partitioned L2 keep two copies of it.
// Limits: reads only; the set is a multiple of 16 bytes; per-thread partial sums are written
//   once (not counted as work).
#include "lab_device.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");

extern "C" __global__ void __launch_bounds__(BLOCK_X) l2_01_working_set(lab_l2_args p) {
    const float4* src = lab_ptr<const float4>(p.src);
    const uint64_t n4 = p.n / 4;
    const uint64_t slice = (n4 + gridDim.x - 1) / gridDim.x;
    const uint64_t begin = (uint64_t)blockIdx.x * slice;
    const uint64_t end = min(n4, begin + slice);
    float4 acc[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) acc[u] = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int pass = 0; pass < p.passes; ++pass) {
        uint64_t i = begin + threadIdx.x;
        for (; i + 3 * BLOCK_X < end; i += 4 * BLOCK_X) {  // four independent loads in flight
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                const float4 v = __ldcg(&src[i + u * BLOCK_X]);
                acc[u].x += v.x; acc[u].y += v.y; acc[u].z += v.z; acc[u].w += v.w;
            }
        }
        for (; i < end; i += BLOCK_X) {
            const float4 v = __ldcg(&src[i]);
            acc[0].x += v.x; acc[0].y += v.y; acc[0].z += v.z; acc[0].w += v.w;
        }
    }
    float s = 0.0f;
#pragma unroll
    for (int u = 0; u < 4; ++u) s += acc[u].x + acc[u].y + acc[u].z + acc[u].w;
    lab_ptr<float>(p.out)[(uint64_t)blockIdx.x * BLOCK_X + threadIdx.x] = s;
}
