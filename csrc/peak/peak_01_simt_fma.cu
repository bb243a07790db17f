// Technique: the SIMT cores' FMA throughput (PREC: LAB_FP32, LAB_FP64, LAB_FP16 = HFMA2): CHAINS
//   independent accumulators per thread, ITERS dependent FMAs each per task, operands in
//   registers, a persistent grid of BLOCKS_PER_SM blocks per SM.
// Teaches: a peak needs enough independent work per warp scheduler to cover the FMA latency
//   (about 4 cycles: 4 warps x 1 chain, or 1 warp x 4 chains) and nothing else in the loop.
// Limits: every FMA is x = x * one + s with one = 1.0 read at run time (the compiler cannot turn
//   it into an add), s alternating +step, -step and one +step closing each task, so each
//   accumulator ends at its start + (tasks it ran) x step, exactly, and the host can check it.
#include "lab_peak.h"
#include "lab_device.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1 && BLOCK_X % 32 == 0, "whole warps");
static_assert(ITERS % 2 == 1 && CHAINS >= 1 && CHAINS <= 16, "ITERS odd: pairs of +step, -step and one +step");

#if PREC == LAB_FP32
typedef float acc_t;
__device__ __forceinline__ acc_t lab_load(uint64_t bits) { return __uint_as_float((unsigned)bits); }
__device__ __forceinline__ acc_t lab_fma(acc_t x, acc_t a, acc_t b) { return __fmaf_rn(x, a, b); }
__device__ __forceinline__ double lab_sum(acc_t x) { return x; }
#elif PREC == LAB_FP64
typedef double acc_t;
__device__ __forceinline__ acc_t lab_load(uint64_t bits) { return __longlong_as_double((long long)bits); }
__device__ __forceinline__ acc_t lab_fma(acc_t x, acc_t a, acc_t b) { return __fma_rn(x, a, b); }
__device__ __forceinline__ double lab_sum(acc_t x) { return x; }
#elif PREC == LAB_FP16
typedef unsigned acc_t;  // two fp16 values
__device__ __forceinline__ acc_t lab_load(uint64_t bits) { return (unsigned)bits; }
__device__ __forceinline__ acc_t lab_fma(acc_t x, acc_t a, acc_t b) {
    acc_t d;
    asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(x), "r"(a), "r"(b));
    return d;
}
__device__ __forceinline__ double lab_sum(acc_t x) {
    float lo, hi;
    asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}\n" : "=f"(lo), "=f"(hi) : "r"(x));
    return (double)lo + (double)hi;
}
#else
#error "PREC: LAB_FP32, LAB_FP64 or LAB_FP16"
#endif

// inputs: [0] one, [1] +step, [2] -step, [3 + j] the start of chain j.
extern "C" __global__ void __launch_bounds__(BLOCK_X) peak_01_simt_fma(lab_peak_args p) {
    const uint64_t* in = lab_ptr<const uint64_t>(p.inputs);
    const acc_t one = lab_load(in[0]), up = lab_load(in[1]), down = lab_load(in[2]);
    acc_t x[CHAINS];
#pragma unroll
    for (int j = 0; j < CHAINS; ++j) x[j] = lab_load(in[3 + j]);
    const uint64_t thread = (uint64_t)blockIdx.x * BLOCK_X + threadIdx.x;
    const uint64_t warps = (uint64_t)gridDim.x * BLOCK_X / 32;
    for (uint64_t t = thread / 32; t < p.tasks; t += warps) {
#pragma unroll 16
        for (int i = 0; i < ITERS / 2; ++i) {
#pragma unroll
            for (int j = 0; j < CHAINS; ++j) x[j] = lab_fma(x[j], one, up);
#pragma unroll
            for (int j = 0; j < CHAINS; ++j) x[j] = lab_fma(x[j], one, down);
        }
#pragma unroll
        for (int j = 0; j < CHAINS; ++j) x[j] = lab_fma(x[j], one, up);
    }
    double s = 0.0;
#pragma unroll
    for (int j = 0; j < CHAINS; ++j) s += lab_sum(x[j]);
    lab_ptr<float>(p.out)[thread] = (float)s;  // exact: the sums are small multiples of 1/32
}
