// Device-side helpers shared by the lab's kernels.
#pragma once
#include "lab_base.h"

template <typename T>
__device__ __forceinline__ T* lab_ptr(lab_dptr p) { return reinterpret_cast<T*>(p); }

// The epilogue every GEMM shares: beta == 0 must not read C (it may hold poison).
__device__ __forceinline__ float lab_axpby(float alpha, float acc, float beta, const float* c) {
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}
