// STREAM's four operations, chosen at compile time by OP (0 copy, 1 scale, 2 add, 3 triad).
// The _rn intrinsics forbid fusing b + s * c into one FMA, so the host computes the same bits.
#pragma once
#include "lab_memory.h"
#include "lab_device.cuh"

static_assert(OP >= 0 && OP <= 3, "OP: 0 copy, 1 scale, 2 add, 3 triad");
#define LAB_READS_C (OP >= 2)

__device__ __forceinline__ float lab_stream_op(float b, float c, float s) {
    if (OP == 0) return b;
    if (OP == 1) return __fmul_rn(s, b);
    if (OP == 2) return __fadd_rn(b, c);
    return __fadd_rn(b, __fmul_rn(s, c));
}

__device__ __forceinline__ float2 lab_stream_op(float2 b, float2 c, float s) {
    return make_float2(lab_stream_op(b.x, c.x, s), lab_stream_op(b.y, c.y, s));
}

__device__ __forceinline__ float4 lab_stream_op(float4 b, float4 c, float s) {
    return make_float4(lab_stream_op(b.x, c.x, s), lab_stream_op(b.y, c.y, s), lab_stream_op(b.z, c.z, s),
                       lab_stream_op(b.w, c.w, s));
}

// The n % VEC tail, one float per thread, for the vector rungs.
__device__ __forceinline__ void lab_stream_tail(const lab_stream_args& p, uint64_t from, uint64_t tid, uint64_t threads) {
    const float* b = lab_ptr<const float>(p.b);
    const float* c = lab_ptr<const float>(p.c);
    float* a = lab_ptr<float>(p.a);
    for (uint64_t i = from + tid; i < p.n; i += threads) a[i] = lab_stream_op(b[i], LAB_READS_C ? c[i] : 0.0f, p.scalar);
}
