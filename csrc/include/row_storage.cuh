// The element type the row-wise rungs keep their rows in: fp32, or fp16 / bf16 with fp32
// arithmetic and statistics. The build names it in LAB_ELEM from the family (softmax_fp16's
// kernels get lab_fp16; fp32 families get no define and float). A rung reads through lab_load,
// which widens to float, and writes through lab_store, which rounds to the nearest even, so its
// arithmetic reads the same in every storage; for float they are the plain load and store, and
// an fp32 rung's machine code is what it was before it went through them.
// The conversions are PTX's cvt, so no cuda_fp16.h is needed and NVRTC (the tuner's and Volta's
// compiler) builds them as nvcc does. Rounding to bf16 takes sm_80's cvt.rn.bf16.f32; before
// sm_80 (Volta, Turing) integer instructions round the same way.
#pragma once
#include "lab_device.cuh"

struct lab_fp16 {
    unsigned short bits;
};
struct lab_bf16 {
    unsigned short bits;
};

#ifndef LAB_ELEM
#define LAB_ELEM float
#endif

// Four 16-bit elements, moved as one 8-byte access.
template <typename E>
struct lab_x4 {
    uint2 raw;
};
template <typename E>
struct lab_four {
    using type = lab_x4<E>;
};
template <>
struct lab_four<float> {
    using type = float4;
};

// One element in memory, and four of them (a float4's worth of a row's floats).
using lab_elem = LAB_ELEM;
using lab_elem4 = typename lab_four<lab_elem>::type;

// The memory type of a register type: float is held in memory as lab_elem, float4 as lab_elem4.
template <typename V>
struct lab_stored;
template <>
struct lab_stored<float> {
    using type = lab_elem;
};
template <>
struct lab_stored<float4> {
    using type = lab_elem4;
};
template <typename V>
using lab_mem = typename lab_stored<V>::type;

__device__ __forceinline__ float lab_widen(lab_fp16 h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
__device__ __forceinline__ float lab_widen(lab_bf16 h) { return __uint_as_float((unsigned)h.bits << 16); }

template <typename E>
__device__ __forceinline__ E lab_narrow(float f);
template <>
__device__ __forceinline__ lab_fp16 lab_narrow<lab_fp16>(float f) {
    lab_fp16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
    return h;
}
template <>
__device__ __forceinline__ lab_bf16 lab_narrow<lab_bf16>(float f) {
    lab_bf16 h;
#if __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
#else
    const unsigned u = __float_as_uint(f);
    // A NaN stays a NaN (quiet, its sign kept); else round the dropped 16 bits to nearest even.
    h.bits = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u) : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
    return h;
}

__device__ __forceinline__ float lab_load(const float* p) { return *p; }
__device__ __forceinline__ float4 lab_load(const float4* p) { return *p; }
__device__ __forceinline__ void lab_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void lab_store(float4* p, float4 v) { *p = v; }

template <typename E>
__device__ __forceinline__ float lab_load(const E* p) {
    return lab_widen(*p);
}
template <typename E>
__device__ __forceinline__ void lab_store(E* p, float v) {
    *p = lab_narrow<E>(v);
}
template <typename E>
__device__ __forceinline__ float4 lab_load(const lab_x4<E>* p) {
    const uint2 r = p->raw;
    const E a{(unsigned short)(r.x & 0xffffu)}, b{(unsigned short)(r.x >> 16)}, c{(unsigned short)(r.y & 0xffffu)}, d{(unsigned short)(r.y >> 16)};
    return make_float4(lab_widen(a), lab_widen(b), lab_widen(c), lab_widen(d));
}
template <typename E>
__device__ __forceinline__ void lab_store(lab_x4<E>* p, float4 v) {
    const auto pair = [](float lo, float hi) { return (unsigned)lab_narrow<E>(lo).bits | (unsigned)lab_narrow<E>(hi).bits << 16; };
    p->raw = make_uint2(pair(v.x, v.y), pair(v.z, v.w));
}
