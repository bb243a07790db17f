// Technique: grid-stride STREAM kernels with 8-byte (float2) accesses.
// Teaches: access width. Twice the bytes per load instruction and per request in flight, with
//   the same coalescing; the step between memory_01's 4 bytes and memory_03's 16.
// Limits: still one load per array per thread in flight; the n % 2 tail runs as scalars.
#include "lab_memory.h"
#include "stream_ops.cuh"

static_assert(VEC == 2, "8-byte accesses");  // a 1-D block: the entries' constraint

extern "C" __global__ void __launch_bounds__(BLOCK_X) memory_02_stream_vec2(lab_stream_args p) {
    const float2* b = lab_ptr<const float2>(p.b);
    const float2* c = lab_ptr<const float2>(p.c);
    float2* a = lab_ptr<float2>(p.a);
    const uint64_t n2 = p.n / 2, threads = (uint64_t)gridDim.x * BLOCK_X;
    const uint64_t tid = (uint64_t)blockIdx.x * BLOCK_X + threadIdx.x;
    for (uint64_t i = tid; i < n2; i += threads) a[i] = lab_stream_op(b[i], LAB_READS_C ? c[i] : b[i], p.scalar);
    lab_stream_tail(p, n2 * 2, tid, threads);
}
