// What the softmax rungs share: the exponential they all take and the online softmax's running
// (max, sum) pair; the reductions across a team of warps that shares a row are row_team.cuh's.
//
// Non-finite inputs follow PyTorch's torch.softmax: a row holding a NaN or a +inf, or whose
// every element is -inf, comes out all NaN; a -inf element among finite ones comes out exactly
// 0. The max is taken with fmaxf, which passes over NaN, and the NaN then reaches every output
// through the row's sum.
#pragma once
#include "lab_softmax.h"
#include "row_team.cuh"

// +inf without math.h's INFINITY, which NVRTC (the tuner's and Volta's compiler) lacks.
#define LAB_INF __int_as_float(0x7f800000)

// exp(x - m) with the fast exponential (ex2.approx after a multiply; relative error about 1e-7
// for the x - m <= 0 every rung feeds it), and exactly 0 for x = -inf even where m is -inf too,
// so a running sum that has seen only masked elements stays 0 instead of turning NaN.
__device__ __forceinline__ float lab_softmax_exp(float x, float m) {
    return x == -LAB_INF ? 0.0f : __expf(x - m);
}

// 1 / s for a row's sum of exp(x - max), which is at least 1 (the max's own term) unless the
// row is all -inf (0: inf, and the NaN PyTorch gives) or holds a NaN or +inf. The approximate
// reciprocal (one MUFU.RCP, within 1 ulp) instead of IEEE division, whose slow-path call made
// ptxas spill registers around it.
__device__ __forceinline__ float lab_softmax_inv(float s) { return __fdividef(1.0f, s); }

// The online softmax's state over the elements a thread has seen: their max m and the sum of
// exp(x - m). Folding in an element rescales the sum to the new max; a team then takes the max
// of its threads' m and sums their s rescaled to it (softmax_05).
struct lab_online {
    float m = -LAB_INF;
    float s = 0.0f;
    __device__ __forceinline__ void add(float x) {
        const float m2 = fmaxf(m, x);
        s = s * lab_softmax_exp(m, m2) + lab_softmax_exp(x, m2);
        m = m2;
    }
};
