// Technique: the Tensor Cores' throughput through warp-wide mma.sync (sm_80 and later; fp8 on
//   sm_89 and later), one PREC (lab.h's LAB_*) per manifest entry: fp16 -> fp32, fp16 -> fp16 and
//   bf16 -> fp32 (m16n8k16), tf32 -> fp32 (m16n8k8), int8 -> int32 and fp8 e4m3 -> fp32
//   (m16n8k32), and fp64 (MMA_K = 4: m8n8k4, the DMMA of A100 and later; MMA_K = 16: m16n8k16,
//   sm_90 and later). CHAINS independent accumulators per warp, operands in registers, a
//   persistent grid; each chain reads B from registers of its own, loaded from memory one by one,
//   as a GEMM warp tile's mmas read different B fragments. With one B shared by every chain, ptxas
//   copies it into several registers again and again between the mmas (76 moves a 128 mmas), and
//   the fp16 loop runs 555-588 TFLOP/s on an H200 instead of 626-635.
// Teaches: what the warp-level MMA path delivers. On Ampere and Ada it is the Tensor Cores'
//   peak; on Hopper only wgmma (issued by a warpgroup) reaches it, and this kernel shows how far
//   the older path falls short there.
// Limits: A is filled with one value a and B with b (or -b), so every element of a product is
//   K x a x b whatever the fragment layout; each task is (ITERS - 1) / 2 pairs of D += A.B and
//   D += A.(-B) and one closing D += A.B, so each accumulator ends at c + (tasks it ran) x K x a x b,
//   exactly. The mma instructions are volatile, so NVVM keeps each; ptxas still computes once
//   what it can prove repeated (fp8 on sm_90, below), so there B differs, to ptxas, each iteration.
#include "lab_peak.h"
#include "mma_tiles.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1 && BLOCK_X % 32 == 0, "whole warps");
static_assert(ITERS % 2 == 1 && CHAINS >= 1 && CHAINS <= 8, "ITERS odd: pairs of +B, -B and one +B");

#if PREC == LAB_FP64_TENSOR
static_assert(MMA_K == 4 || MMA_K == 16, "fp64 mma.sync: m8n8k4 or m16n8k16");
#define LAB_ACC_REGS (MMA_K == 4 ? 2 : 4)  // fp64 accumulators per thread: 8x8 or 16x8 over 32
typedef double acc_t;
#elif PREC == LAB_FP16_F16ACC
#define LAB_ACC_REGS 2  // four fp16 accumulators, packed in pairs
typedef unsigned acc_t;
#elif PREC == LAB_INT8
#define LAB_ACC_REGS 4
typedef int acc_t;
#else
#define LAB_ACC_REGS 4
typedef float acc_t;
#endif

#if PREC == LAB_FP64_TENSOR
// Every element of A is a and of B is b, so one register each fills every fragment slot: the
// 32-bit operand arrays are not used.
__device__ __forceinline__ void lab_mma(acc_t (&d)[LAB_ACC_REGS], double a, double b) {
#if MMA_K == 4
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%4,%4,%4,%4,%4,%4,%4}, {%5,%5,%5,%5}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a), "d"(b));
#endif
}
#else
__device__ __forceinline__ void lab_mma(acc_t (&d)[LAB_ACC_REGS], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if PREC == LAB_FP16_F32ACC
    lab_mma_16816(d, a, b0, b1);
#elif PREC == LAB_FP16_F16ACC
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"
                 : "+r"(d[0]), "+r"(d[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif PREC == LAB_BF16_F32ACC
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#elif PREC == LAB_TF32
    lab_mma_1688_tf32(d, a, b0, b1);
#elif PREC == LAB_INT8
    lab_mma_16832_s8(d, a, b0, b1);
#elif PREC == LAB_FP8_F32ACC
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
#error "PREC: a Tensor Core LAB_* precision of lab.h"
#endif
}
#endif

__device__ __forceinline__ double lab_sum(acc_t x) {
#if PREC == LAB_FP16_F16ACC
    float lo, hi;
    asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}\n" : "=f"(lo), "=f"(hi) : "r"(x));
    return (double)lo + (double)hi;
#else
    return (double)x;
#endif
}

// inputs (register images, 32-bit but 64-bit for fp64): [0] A (a in every element), [1] B (b),
// [2] -B, [3] one accumulator register holding c in every element.
extern "C" __global__ void __launch_bounds__(BLOCK_X) peak_02_mma_sync(lab_peak_args p) {
    const uint64_t* in = lab_ptr<const uint64_t>(p.inputs);
#if PREC == LAB_FP64_TENSOR
    const double a = __longlong_as_double(in[0]), up = __longlong_as_double(in[1]), down = __longlong_as_double(in[2]);
#define LAB_B(b) ((void)i, b)
    const acc_t c = __longlong_as_double(in[3]);
#else
    const unsigned a[4] = {(unsigned)in[0], (unsigned)in[0], (unsigned)in[0], (unsigned)in[0]};
    // Volatile loads: ptxas may not merge them, so no two chains share a B register.
    unsigned up[CHAINS][2], down[CHAINS][2];
#pragma unroll
    for (int j = 0; j < CHAINS; ++j)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            asm volatile("ld.volatile.global.u32 %0, [%1];\n" : "=r"(up[j][r]) : "l"(in + 1));
            asm volatile("ld.volatile.global.u32 %0, [%1];\n" : "=r"(down[j][r]) : "l"(in + 2));
        }
    // sm_90 runs fp8 mma.sync as conversions, mmas into zero and fp32 adds (SASS): with the same B
    // in every iteration ptxas would compute the products once and leave a loop of adds (a false
    // 1434 TOPS). Here B changes with the iteration, XORed with a zero ptxas cannot see.
    unsigned zero = 0;
    if (PREC == LAB_FP8_F32ACC) {
        unsigned x, y;
        asm volatile("ld.volatile.global.u32 %0, [%1];\n" : "=r"(x) : "l"(in));
        asm volatile("ld.volatile.global.u32 %0, [%1];\n" : "=r"(y) : "l"(in));
        zero = x ^ y;
    }
#define LAB_B(b) b[j][0] ^ (zero & i), b[j][1] ^ (zero & i)  // chain j's
    const unsigned c_image = (unsigned)in[3];
    const acc_t c = *reinterpret_cast<const acc_t*>(&c_image);
#endif
    acc_t d[CHAINS][LAB_ACC_REGS];
#pragma unroll
    for (int j = 0; j < CHAINS; ++j)
#pragma unroll
        for (int r = 0; r < LAB_ACC_REGS; ++r) d[j][r] = c;
    const uint64_t thread = (uint64_t)blockIdx.x * BLOCK_X + threadIdx.x;
    const uint64_t warps = (uint64_t)gridDim.x * BLOCK_X / 32;
    for (uint64_t t = thread / 32; t < p.tasks; t += warps) {
#pragma unroll 8
        for (int i = 0; i < ITERS / 2; ++i) {
#pragma unroll
            for (int j = 0; j < CHAINS; ++j) lab_mma(d[j], a, LAB_B(up));
#pragma unroll
            for (int j = 0; j < CHAINS; ++j) lab_mma(d[j], a, LAB_B(down));
        }
        const int i = ITERS / 2;
#pragma unroll
        for (int j = 0; j < CHAINS; ++j) lab_mma(d[j], a, LAB_B(up));
    }
    double s = 0.0;
#pragma unroll
    for (int j = 0; j < CHAINS; ++j)
#pragma unroll
        for (int r = 0; r < LAB_ACC_REGS; ++r) s += lab_sum(d[j][r]);
    lab_ptr<float>(p.out)[thread] = (float)s;  // exact: the sums are small multiples of 1/32
}
