// The Hopper GEMM's MMA traits, one type a precision: the wgmma instruction (m64nNkK from shared
// memory, N = 128, 176, 192 or 256), its accumulator type, the input's bytes and B's major order.
// Every operand row of a stage is 128 bytes (BK elements of the type), so the 128-byte swizzle,
// the descriptors' strides and the four wgmmas a k-tile are the same for every precision:
//   lab_fp16, lab_bf16   m64nNk16, fp32 accumulators, B MN-major (row-major k x n, wgmma's
//                        transpose flag: only 16-bit operands have one)
//   lab_tf32             m64nNk8, fp32 accumulators, B K-major (n x k)
//   lab_fp8<G>  (e4m3)   m64nNk32, fp32 accumulators, B K-major; every G k-tiles' products summed
//                        by the Tensor Cores from zero and promoted into fp32 registers (below)
//   lab_fp8_e5m2<G>      the same with A in e5m2 (B stays e4m3: the pair cuBLASLt takes)
//   lab_int8             m64nNk32, s32 accumulators, B K-major
// Promotion (fp8): Hopper's fp8 wgmma adds into a window narrower than fp32 (the peak family sees
// an accumulator stall), so the consumer adds each group's sums into fp32 registers itself
// (DeepGEMM's promotion, which does it every k-tile of 128): twice the accumulator registers, and
// the wgmmas drained before each promotion.
#pragma once
#include "wgmma.cuh"

// The four wgmma shapes of one precision, as static members of its traits: d = A * B + (accumulate
// ? d : 0), A and B from shared-memory descriptors; the accumulator array's length picks N.
// SHAPE: the instruction's k and types; TAIL: its scale and transpose operands; C: LAB_F or LAB_R.
#define LAB_WGMMA_SHAPES(SHAPE, TAIL, C)                                                                                                  \
    static __device__ __forceinline__ void mma(acc (&d)[64], uint64_t da, uint64_t db, int accumulate) {                                 \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\nwgmma.mma_async.sync.aligned.m64n128" SHAPE " " LAB_WGMMA_D64            \
                     ", %64, %65, " TAIL ";\n}\n"                                                                                        \
                     : LAB_WGMMA_OUT64(C, d)                                                                                             \
                     : "l"(da), "l"(db), "r"(accumulate));                                                                               \
    }                                                                                                                                    \
    static __device__ __forceinline__ void mma(acc (&d)[96], uint64_t da, uint64_t db, int accumulate) {                                 \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\nwgmma.mma_async.sync.aligned.m64n192" SHAPE " " LAB_WGMMA_D96            \
                     ", %96, %97, " TAIL ";\n}\n"                                                                                        \
                     : LAB_WGMMA_OUT96(C, d)                                                                                             \
                     : "l"(da), "l"(db), "r"(accumulate));                                                                               \
    }                                                                                                                                    \
    static __device__ __forceinline__ void mma(acc (&d)[88], uint64_t da, uint64_t db, int accumulate) {                                 \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\nwgmma.mma_async.sync.aligned.m64n176" SHAPE " " LAB_WGMMA_D88            \
                     ", %88, %89, " TAIL ";\n}\n"                                                                                        \
                     : LAB_WGMMA_OUT88(C, d)                                                                                             \
                     : "l"(da), "l"(db), "r"(accumulate));                                                                               \
    }                                                                                                                                    \
    static __device__ __forceinline__ void mma(acc (&d)[128], uint64_t da, uint64_t db, int accumulate) {                                \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\nwgmma.mma_async.sync.aligned.m64n256" SHAPE " " LAB_WGMMA_D128          \
                     ", %128, %129, " TAIL ";\n}\n"                                                                                      \
                     : LAB_WGMMA_OUT128(C, d)                                                                                            \
                     : "l"(da), "l"(db), "r"(accumulate));                                                                               \
    }

// The fields every precision's traits have: `kind` is lab.h's LAB_* (a rung checks it against the
// manifest's PREC), `promote` the k-tiles of a promotion group (0: the wgmmas accumulate).
#define LAB_FLOAT_ACC         \
    typedef float acc;        \
    typedef float2 acc2;      \
    typedef float4 acc4;

struct lab_fp16 {
    LAB_FLOAT_ACC
    static constexpr int kind = LAB_FP16_F32ACC, elem = 2, promote = 0;
    static constexpr bool b_kmajor = false;
    LAB_WGMMA_SHAPES("k16.f32.f16.f16", "p, 1, 1, 0, 1", LAB_F)  // scale-d, scale A and B by 1, A as stored, B transposed
};

struct lab_bf16 {
    LAB_FLOAT_ACC
    static constexpr int kind = LAB_BF16_F32ACC, elem = 2, promote = 0;
    static constexpr bool b_kmajor = false;
    LAB_WGMMA_SHAPES("k16.f32.bf16.bf16", "p, 1, 1, 0, 1", LAB_F)
};

struct lab_tf32 {
    LAB_FLOAT_ACC
    static constexpr int kind = LAB_TF32, elem = 4, promote = 0;
    static constexpr bool b_kmajor = true;
    LAB_WGMMA_SHAPES("k8.f32.tf32.tf32", "p, 1, 1", LAB_F)
};

// e4m3 x e4m3, each G k-tiles' products promoted into fp32 registers by the consumer (G = 0:
// the wgmmas accumulate, in their narrow window).
template <int G>
struct lab_fp8 {
    LAB_FLOAT_ACC
    static constexpr int kind = LAB_FP8_F32ACC, elem = 1, promote = G;
    static constexpr bool b_kmajor = true;
    LAB_WGMMA_SHAPES("k32.f32.e4m3.e4m3", "p, 1, 1", LAB_F)
};

// e5m2 x e4m3, promoted as lab_fp8. The sheet rates the pair as e4m3's, so PREC is the same.
template <int G>
struct lab_fp8_e5m2 {
    LAB_FLOAT_ACC
    static constexpr int kind = LAB_FP8_F32ACC, elem = 1, promote = G;
    static constexpr bool b_kmajor = true;
    LAB_WGMMA_SHAPES("k32.f32.e5m2.e4m3", "p, 1, 1", LAB_F)
};

struct lab_int8 {
    typedef int acc;
    typedef int2 acc2;
    typedef int4 acc4;
    static constexpr int kind = LAB_INT8, elem = 1, promote = 0;
    static constexpr bool b_kmajor = true;
    LAB_WGMMA_SHAPES("k32.s32.s8.s8", "p", LAB_R)
};

// The wgmma of 64-row block m and k-step kk from one stage, given the descriptors of its first A
// and B rows: A K-major (8-row groups 1024 B apart, 32 B a k-step, 64-row blocks 8 KiB apart); B
// K-major likewise, or MN-major in 64-column chunks CHUNK_B apart (LBO) with 8-row k groups 1024 B
// apart (SBO), a k-step two groups on. A descriptor's low field is the address / 16, so a byte
// offset inside shared memory is added to it as offset / 16: no address arithmetic between the
// wgmmas.
template <class P, int MT, int N>
__device__ __forceinline__ void lab_wgmma_at(typename P::acc (&d)[MT][N], uint64_t da, uint64_t db, int m, int kk, bool accumulate) {
    P::mma(d[m], lab_desc_add(da, (64 * 128 * m + 32 * kk) / 16), lab_desc_add(db, (P::b_kmajor ? 32 * kk : 2048 * kk) / 16), accumulate);
}

// One k-step's MT wgmmas.
template <class P, int MT, int N>
__device__ __forceinline__ void lab_wgmma_step(typename P::acc (&d)[MT][N], uint64_t da, uint64_t db, int kk, bool accumulate) {
#pragma unroll
    for (int m = 0; m < MT; ++m) lab_wgmma_at<P>(d, da, db, m, kk, accumulate);
}

// 64-row block m's four k-steps of a k-tile, one after another.
template <class P, int MT, int N>
__device__ __forceinline__ void lab_wgmma_rows(typename P::acc (&d)[MT][N], uint64_t da, uint64_t db, int m, bool first) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) lab_wgmma_at<P>(d, da, db, m, kk, !(first && kk == 0));
}

// A k-tile's wgmmas, in the order M_ORDER chooses (a tunable constant, the manifests' M_OUTER):
// with M_ORDER > 0 each 64-row block's four k-steps follow each other, as cuBLAS's 128 x 128
// kernel issues them. At 128 x 128 (ping-pong, 5 stages, 4096^3) that takes 1.2-1.4% fewer cycles
// under ncu and runs 1% closer to cuBLAS; 128 x 192 is level.
template <class P, int M_ORDER, int MT, int N>
__device__ __forceinline__ void lab_wgmma_tile(typename P::acc (&d)[MT][N], uint64_t da, uint64_t db, bool first) {
    if constexpr (M_ORDER != 0) {
#pragma unroll
        for (int m = 0; m < MT; ++m) lab_wgmma_rows<P>(d, da, db, m, first);
    } else {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) lab_wgmma_step<P>(d, da, db, kk, !(first && kk == 0));
    }
}
