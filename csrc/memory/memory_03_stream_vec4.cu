// Technique: grid-stride STREAM kernels with 16-byte (float4) accesses, UNROLL of them in flight
//   per thread and array.
// Teaches: bandwidth needs bytes in flight. A 16-byte access moves four times the data per
//   instruction, and issuing UNROLL independent loads before the first store hides DRAM latency.
//   The block size and the grid (BLOCKS_PER_SM) are the launch-shape sweep of the tuner.
// Limits: needs 16-byte aligned arrays (cudaMalloc gives 256); the n % 4 tail runs as scalars.
#include "lab_memory.h"
#include "stream_ops.cuh"

static_assert(VEC == 4, "16-byte accesses");  // a 1-D block: the entries' constraint
static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL loads in flight per thread");

extern "C" __global__ void __launch_bounds__(BLOCK_X) memory_03_stream_vec4(lab_stream_args p) {
    const float4* b = lab_ptr<const float4>(p.b);
    const float4* c = lab_ptr<const float4>(p.c);
    float4* a = lab_ptr<float4>(p.a);
    const uint64_t n4 = p.n / 4, threads = (uint64_t)gridDim.x * BLOCK_X;
    const uint64_t tid = (uint64_t)blockIdx.x * BLOCK_X + threadIdx.x;
    const uint64_t round = threads * UNROLL;
    uint64_t base = 0;
    for (; base + round <= n4; base += round) {
        float4 vb[UNROLL], vc[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            vb[u] = b[base + u * threads + tid];
            vc[u] = LAB_READS_C ? c[base + u * threads + tid] : vb[u];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) a[base + u * threads + tid] = lab_stream_op(vb[u], vc[u], p.scalar);
    }
    for (uint64_t i = base + tid; i < n4; i += threads) a[i] = lab_stream_op(b[i], LAB_READS_C ? c[i] : b[i], p.scalar);
    lab_stream_tail(p, n4 * 4, tid, threads);
}
