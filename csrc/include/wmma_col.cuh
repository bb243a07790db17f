// WMMA with B column-major (sm_70 and later), through PTX like wmma_ptx.cuh: where B's columns
// are contiguous in memory, as a convolution's filters are (each output channel's taps a row of
// KRSC), a tile of them lands in shared memory by plain 16-byte copies, with no transpose.
#pragma once
#include "wmma_ptx.cuh"

// The fragment of B whose column j starts at p + j * ld (a shared-window address), 16 deep.
__device__ __forceinline__ void lab_load_b_col_shared(lab_frag_b& f, const void* p, int ld) {
    asm volatile("wmma.load.b.sync.aligned.col.m16n16k16.shared.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8], %9;\n"
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3]), "=r"(f.x[4]), "=r"(f.x[5]), "=r"(f.x[6]), "=r"(f.x[7])
                 : "r"((unsigned)__cvta_generic_to_shared(p)), "r"(ld));
}

// c += a * b, a row-major and b column-major.
__device__ __forceinline__ void lab_wmma_row_col(lab_frag_c& c, const lab_frag_a& a, const lab_frag_b& b) {
    asm volatile(
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11,%12,%13,%14,%15}, "
        "{%16,%17,%18,%19,%20,%21,%22,%23}, {%0,%1,%2,%3,%4,%5,%6,%7};\n"
        : "+f"(c.x[0]), "+f"(c.x[1]), "+f"(c.x[2]), "+f"(c.x[3]), "+f"(c.x[4]), "+f"(c.x[5]), "+f"(c.x[6]), "+f"(c.x[7])
        : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(a.x[4]), "r"(a.x[5]), "r"(a.x[6]), "r"(a.x[7]), "r"(b.x[0]),
          "r"(b.x[1]), "r"(b.x[2]), "r"(b.x[3]), "r"(b.x[4]), "r"(b.x[5]), "r"(b.x[6]), "r"(b.x[7]));
}
