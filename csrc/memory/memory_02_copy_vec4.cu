// Technique: grid-stride copy with 16-byte (float4) accesses, UNROLL of them in flight per thread.
// Teaches: bandwidth needs bytes in flight. A 16-byte access moves four times the data per
//   instruction, and issuing UNROLL independent loads before the first store hides DRAM latency.
// Limits: needs 16-byte aligned arrays (cudaMalloc gives 256); the n % 4 tail is copied by scalar
//   accesses of the first threads.
#include "lab_device.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");
static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL loads in flight per thread");

extern "C" __global__ void __launch_bounds__(BLOCK_X) memory_02_copy_vec4(lab_copy_args p) {
    const float4* __restrict__ src = lab_ptr<const float4>(p.src);
    float4* __restrict__ dst = lab_ptr<float4>(p.dst);
    const uint64_t n4 = p.n / 4;
    const uint64_t threads = (uint64_t)gridDim.x * BLOCK_X;
    const uint64_t tid = (uint64_t)blockIdx.x * BLOCK_X + threadIdx.x;

    // Whole rounds: every thread has UNROLL loads in flight, each a warp-contiguous 512 bytes.
    const uint64_t round = threads * UNROLL;
    uint64_t base = 0;
    for (; base + round <= n4; base += round) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = src[base + u * threads + tid];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) dst[base + u * threads + tid] = v[u];
    }
    for (uint64_t i = base + tid; i < n4; i += threads) dst[i] = src[i];

    const float* s = lab_ptr<const float>(p.src);
    float* d = lab_ptr<float>(p.dst);
    for (uint64_t i = n4 * 4 + tid; i < p.n; i += threads) d[i] = s[i];
}
