// WMMA (sm_70 and later) through PTX rather than <mma.h>, so NVRTC needs no toolkit headers:
// fp16 A (row-major) and B (row-major) fragments of 16x16x16, fp32 accumulators.
#pragma once
#include "lab_device.cuh"

struct lab_frag_a {
    unsigned x[8];
};
struct lab_frag_b {
    unsigned x[8];
};
struct lab_frag_c {
    float x[8];
};

// `p` is the tile's first element (a generic address for global memory, a shared-window address
// for shared memory); `ld` the row stride in elements.
#define LAB_WMMA_LOAD(kind)                                                                                                    \
    asm volatile("wmma.load." #kind ".sync.aligned.row.m16n16k16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;\n"                 \
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3]), "=r"(f.x[4]), "=r"(f.x[5]), "=r"(f.x[6]), "=r"(f.x[7]) \
                 : "l"(p), "r"(ld))

__device__ __forceinline__ void lab_load_a_global(lab_frag_a& f, const void* p, int ld) { LAB_WMMA_LOAD(a); }
__device__ __forceinline__ void lab_load_b_global(lab_frag_b& f, const void* p, int ld) { LAB_WMMA_LOAD(b); }
#undef LAB_WMMA_LOAD

#define LAB_WMMA_LOAD_SHARED(kind)                                                                                             \
    asm volatile("wmma.load." #kind ".sync.aligned.row.m16n16k16.shared.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;\n"           \
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3]), "=r"(f.x[4]), "=r"(f.x[5]), "=r"(f.x[6]), "=r"(f.x[7]) \
                 : "r"((unsigned)__cvta_generic_to_shared(p)), "r"(ld))

__device__ __forceinline__ void lab_load_a_shared(lab_frag_a& f, const void* p, int ld) { LAB_WMMA_LOAD_SHARED(a); }
__device__ __forceinline__ void lab_load_b_shared(lab_frag_b& f, const void* p, int ld) { LAB_WMMA_LOAD_SHARED(b); }
#undef LAB_WMMA_LOAD_SHARED

__device__ __forceinline__ void lab_fill(lab_frag_c& c, float v) {
#pragma unroll
    for (int i = 0; i < 8; ++i) c.x[i] = v;
}

// c += a * b
__device__ __forceinline__ void lab_wmma(lab_frag_c& c, const lab_frag_a& a, const lab_frag_b& b) {
    asm volatile(
        "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11,%12,%13,%14,%15}, "
        "{%16,%17,%18,%19,%20,%21,%22,%23}, {%0,%1,%2,%3,%4,%5,%6,%7};\n"
        : "+f"(c.x[0]), "+f"(c.x[1]), "+f"(c.x[2]), "+f"(c.x[3]), "+f"(c.x[4]), "+f"(c.x[5]), "+f"(c.x[6]), "+f"(c.x[7])
        : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(a.x[4]), "r"(a.x[5]), "r"(a.x[6]), "r"(a.x[7]), "r"(b.x[0]),
          "r"(b.x[1]), "r"(b.x[2]), "r"(b.x[3]), "r"(b.x[4]), "r"(b.x[5]), "r"(b.x[6]), "r"(b.x[7]));
}

__device__ __forceinline__ void lab_store_c_global(float* p, const lab_frag_c& c, int ld) {
    asm volatile("wmma.store.d.sync.aligned.row.m16n16k16.f32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;\n" ::"l"(p), "f"(c.x[0]),
                 "f"(c.x[1]), "f"(c.x[2]), "f"(c.x[3]), "f"(c.x[4]), "f"(c.x[5]), "f"(c.x[6]), "f"(c.x[7]), "r"(ld)
                 : "memory");
}

__device__ __forceinline__ void lab_store_c_shared(float* p, const lab_frag_c& c, int ld) {
    asm volatile("wmma.store.d.sync.aligned.row.m16n16k16.shared.f32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(p)),
                 "f"(c.x[0]), "f"(c.x[1]), "f"(c.x[2]), "f"(c.x[3]), "f"(c.x[4]), "f"(c.x[5]), "f"(c.x[6]), "f"(c.x[7]), "r"(ld)
                 : "memory");
}

// Stores fragment `c` at row r0, column c0 of C (m x n, row stride ldc) through `stage`, a warp's
// 16 x 20 float tile in shared memory, writing only the elements inside C.
__device__ __forceinline__ void lab_store_c_checked(float* C, int ldc, int m, int n, int r0, int c0, const lab_frag_c& c, float* stage) {
    lab_store_c_shared(stage, c, 16 + 4);
    __syncwarp();
    for (int e = threadIdx.x % 32; e < 256; e += 32) {
        const int r = r0 + e / 16, col = c0 + e % 16;
        if (r < m && col < n) C[(size_t)r * ldc + col] = stage[(e / 16) * (16 + 4) + e % 16];
    }
    __syncwarp();
}
