// What the mma.sync rungs share: their stages' swizzle, ldmatrix, the fp16, tf32 and int8 mmas,
// zeroing a warp's grid of m16n8 accumulators and storing it.
#pragma once
#include "lab_device.cuh"

// Element offset of 16-byte chunk c of row r in a stage whose rows hold W halves, swizzled so
// the eight rows an 8x8 ldmatrix reads fall in eight different bank groups: 32-half rows hold 4
// chunks (64 B), so rows 2 apart share banks and the chunk is XORed with (r / 2) % 4; rows of 8
// or more chunks (128 B and up) all share banks, and the chunk is XORed with r % 8.
template <int W>
__device__ __forceinline__ int lab_swizzle16(int r, int c) {
    static_assert(W == 32 || W % 64 == 0, "rows of 64 bytes or of whole 128-byte lines");
    return r * W + ((c ^ (W == 32 ? (r >> 1) & 3 : r & 7)) << 3);
}

// Four 8x8 b16 matrices from shared memory, one row address a lane (lanes 8i-8i+7: matrix i).
__device__ __forceinline__ void lab_ldmatrix_x4(unsigned (&d)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"((unsigned)__cvta_generic_to_shared(p)));
}

// The same, each matrix transposed on the way (row-major k x n B into mma's column fragments).
__device__ __forceinline__ void lab_ldmatrix_x4_trans(unsigned (&d)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"((unsigned)__cvta_generic_to_shared(p)));
}

// c += a.b for one m16n8k16 tile, fp16 in, fp32 accumulate.
__device__ __forceinline__ void lab_mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One row of a warp's grid of m16n8k16 mmas: row i's A fragment times the NT column fragments
// (b[j / 2] holds columns j and j + 1), right to left where `reverse`. The warp tile goes row by
// row, every other row reversed (a serpentine), so each mma shares an operand with the one before:
// A's along a row, B's at a turn. Every row left to right runs the mma.sync rung 0.4%-1.0% slower
// (0.7% mean) at 8192^3; column by column, 9% (A read by every mma).
template <int NT>
__device__ __forceinline__ void lab_mma_row(float (&c)[NT][4], const unsigned (&a)[4], const unsigned (&b)[NT / 2][4], bool reverse) {
#pragma unroll
    for (int jj = 0; jj < NT; ++jj) {
        const int j = reverse ? NT - 1 - jj : jj;
        lab_mma_16816(c[j], a, b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]);
    }
}

// c += a.b for one m16n8k8 tile, tf32 in (32-bit registers), fp32 accumulate.
__device__ __forceinline__ void lab_mma_1688_tf32(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += a.b for one m16n8k32 tile, int8 in, int32 accumulate.
__device__ __forceinline__ void lab_mma_16832_s8(int (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <typename T, int MT, int NT>
__device__ __forceinline__ void lab_zero(T (&acc)[MT][NT][4]) {
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = T(0);
}

// Stores a warp's MT x NT grid of m16n8 accumulators whose top-left is (row0, col0) of C
// (m x n, row stride ldc), skipping what lies outside C. Accumulator (i, j): the lane holds rows
// g and g + 8, columns 2t and 2t + 1 of its 16 x 8 tile (g = lane / 4, t = lane % 4). A warp
// tile inside C whose rows keep the pairs aligned stores each pair as one 8-byte store, with no
// checks: scalar stores, twice as many, hold the mma.sync rung's epilogue on the store queue (4%
// of its warp stall samples at 8192^3).
template <typename T, int MT, int NT>
__device__ __forceinline__ void lab_store_m16n8(T* C, int ldc, int m, int n, int row0, int col0, const T (&acc)[MT][NT][4]) {
    struct alignas(2 * sizeof(T)) Pair { T x, y; };
    const int lane = threadIdx.x % 32, g = lane >> 2, tq = lane & 3;
    if (ldc % 2 == 0 && reinterpret_cast<size_t>(C) % alignof(Pair) == 0 && row0 + 16 * MT <= m && col0 + 8 * NT <= n) {
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    *reinterpret_cast<Pair*>(C + (size_t)(row0 + 16 * i + g + 8 * h) * ldc + col0 + 8 * j + 2 * tq) = Pair{acc[i][j][2 * h], acc[i][j][2 * h + 1]};
        return;
    }
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + 16 * i + g + 8 * h, c = col0 + 8 * j + 2 * tq;
                if (r >= m) continue;
                if (c < n) C[(size_t)r * ldc + c] = acc[i][j][2 * h];
                if (c + 1 < n) C[(size_t)r * ldc + c + 1] = acc[i][j][2 * h + 1];
            }
}
