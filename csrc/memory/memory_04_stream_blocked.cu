// Technique: one-shot STREAM kernels: each block moves one contiguous chunk of BLOCK_X x UNROLL
//   float4s and exits, with streaming cache hints (ld.global.cs / st.global.cs).
// Teaches: what the copy engine's rate takes. No loop-carried index arithmetic, every load of a
//   thread issued before its first store, and evict-first hints so the stream does not push
//   other data out of L2; the hardware block scheduler replaces the software grid-stride loop.
// Limits: one block per chunk means a large grid (and a launch that grows with n); the last
//   block checks bounds per vector and handles the n % 4 tail.
#include "lab_memory.h"
#include "stream_ops.cuh"

static_assert(VEC == 4, "16-byte accesses");  // a 1-D block: the entries' constraint
static_assert(UNROLL >= 1 && UNROLL <= 16, "UNROLL vectors per thread");

extern "C" __global__ void __launch_bounds__(BLOCK_X) memory_04_stream_blocked(lab_stream_args p) {
    const float4* b = lab_ptr<const float4>(p.b);
    const float4* c = lab_ptr<const float4>(p.c);
    float4* a = lab_ptr<float4>(p.a);
    const uint64_t n4 = p.n / 4;
    const uint64_t first = (uint64_t)blockIdx.x * BLOCK_X * UNROLL + threadIdx.x;
    float4 vb[UNROLL], vc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const uint64_t i = first + (uint64_t)u * BLOCK_X;
        if (i < n4) {
            vb[u] = __ldcs(&b[i]);
            vc[u] = LAB_READS_C ? __ldcs(&c[i]) : vb[u];
        }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const uint64_t i = first + (uint64_t)u * BLOCK_X;
        if (i < n4) __stcs(&a[i], lab_stream_op(vb[u], vc[u], p.scalar));
    }
    if (blockIdx.x == gridDim.x - 1) lab_stream_tail(p, n4 * 4, threadIdx.x, BLOCK_X);
}
