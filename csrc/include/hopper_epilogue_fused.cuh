// The Hopper GEMM's fused epilogue: a linear layer's output made from the accumulators in
// registers, C = Act(alpha * A*B + beta * c_in + bias) in fp16 or bf16, what cuBLASLt's GELU_BIAS
// epilogue computes (lab_gemm_tma_args' c_in, bias, alpha and beta; beta = 0 reads no c_in, as
// BLAS's beta does). A persistent block's epilogue, as lab_register_epilogue: a thread holds two
// adjacent columns of a row, reads the two c_in elements and the two of bias beside them, and
// writes the pair as one 4-byte store, a row's JB groups of columns at a time. No shared memory:
// the ring keeps every byte for stages.
//   lab_gelu                  GELU's tanh form, cuBLASLt's (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))))
//   lab_c16<P>                a 16-bit C's conversions, for lab_fp16 and lab_bf16
//   lab_fused_epilogue<Act>   the epilogue, of an activation type
// The conversions are PTX's cvt (no cuda_fp16.h), so NVRTC builds them as nvcc does.
#pragma once
#include "hopper_sched.cuh"

struct lab_gelu {
    static __device__ __forceinline__ float apply(float x) {
        // tanh.approx (sm_75+): a relative error of 2^-11, below the fp16 output's rounding.
        float t;
        asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(0.7978845608f * (x + 0.044715f * x * x * x)));
        return 0.5f * x * (1.0f + t);
    }
};

// A 16-bit C's conversions, one type a precision's trait: from its bits to float, and a float
// (or two, packed lo in the low half, the lower address) rounded to it.
template <class P>
struct lab_c16;
template <>
struct lab_c16<lab_fp16> {
    static __device__ __forceinline__ float widen(unsigned short h) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
        return f;
    }
    static __device__ __forceinline__ unsigned short narrow(float f) {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
        return h;
    }
    static __device__ __forceinline__ unsigned narrow2(float lo, float hi) {
        unsigned r;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
};
template <>
struct lab_c16<lab_bf16> {
    static __device__ __forceinline__ float widen(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
    static __device__ __forceinline__ unsigned short narrow(float f) {
        unsigned short h;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
        return h;
    }
    static __device__ __forceinline__ unsigned narrow2(float lo, float hi) {
        unsigned r;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
        return r;
    }
};

template <class Act>
struct lab_fused_epilogue {
    static constexpr bool sliced = false;
    // Columns of C (in groups of 8, a j) whose C_in is loaded before any of them is stored: the
    // loads are then in flight together. One at a time, each waited for its load before the next
    // (C may alias C_in as far as the compiler knows): at 16384 x 3072 x 768 the epilogue took
    // five times the main loop's time.
    static constexpr int JB = 8;
    template <class K>
    static __device__ __forceinline__ void store(const lab_gemm_tma_args& p, const typename K::acc (&d)[K::MT][BN / 2], unsigned char* ring, int wg,
                                                 int tid, int row0, int col0) {
        static_assert(BN % (8 * JB) == 0, "whole groups of columns");
        typedef lab_c16<typename K::prec> C;  // C in the inputs' 16-bit type
        const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
        const int top = row0 + LAB_WG_ROW(K, wg), height = min(64 * K::MT, p.g.m - top), width = min(BN, p.g.n - col0);
        (void)ring;
        unsigned short* out = lab_ptr<unsigned short>(p.g.c);
        const unsigned short* __restrict__ c_in = lab_ptr<const unsigned short>(p.c_in);
        const unsigned short* __restrict__ bias = lab_ptr<const unsigned short>(p.bias) + col0;
        const float alpha = p.alpha, beta = p.beta;
        // A pair of columns starts 4-byte aligned, and every pair of the tile is whole.
        const bool pairs = (p.g.ldc & 1) == 0 && width == BN;
#pragma unroll
        for (int m = 0; m < K::MT; ++m)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = 64 * m + 16 * w + g + 8 * h;
                if (r >= height) continue;
                const size_t row = (size_t)(top + r) * p.g.ldc + col0;
#pragma unroll
                for (int j0 = 0; j0 < BN / 8; j0 += JB) {
                    if (pairs) {
                        unsigned in[JB], b[JB];
#pragma unroll
                        for (int jj = 0; jj < JB; ++jj) {
                            const int c = 8 * (j0 + jj) + 2 * tq;
                            in[jj] = beta != 0.0f ? __ldg(reinterpret_cast<const unsigned*>(c_in + row + c)) : 0u;
                            b[jj] = __ldg(reinterpret_cast<const unsigned*>(bias + c));
                        }
#pragma unroll
                        for (int jj = 0; jj < JB; ++jj) {
                            const int c = 8 * (j0 + jj) + 2 * tq, i = 4 * (j0 + jj) + 2 * h;
                            const float x0 = alpha * d[m][i] + beta * C::widen(in[jj] & 0xffff) + C::widen(b[jj] & 0xffff);
                            const float x1 = alpha * d[m][i + 1] + beta * C::widen(in[jj] >> 16) + C::widen(b[jj] >> 16);
                            *reinterpret_cast<unsigned*>(out + row + c) = C::narrow2(Act::apply(x0), Act::apply(x1));
                        }
                    } else {  // an edge tile, or odd rows: element by element
#pragma unroll
                        for (int jj = 0; jj < JB; ++jj)
#pragma unroll
                            for (int e = 0; e < 2; ++e) {
                                const int c = 8 * (j0 + jj) + 2 * tq + e;
                                if (c >= width) continue;
                                float x = alpha * d[m][4 * (j0 + jj) + 2 * h + e] + C::widen(bias[c]);
                                if (beta != 0.0f) x += beta * C::widen(c_in[row + c]);
                                out[row + c] = C::narrow(Act::apply(x));
                            }
                    }
                }
            }
    }
    template <class K>
    static __device__ __forceinline__ void finish(int) {}
};
