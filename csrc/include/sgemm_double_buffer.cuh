// The main loop of rung 8 (register-staged double buffering), kept here so rung 9 can put a
// different block order in front of the same loop. Two shared-memory buffers: while the warps
// compute on one, each thread's registers hold the next tile's global loads, which land in the
// other buffer after the math. One barrier per kBk step instead of two.
#pragma once
#include "sgemm_tiles.cuh"

template <int kThreads, int kBm, int kBn, int kBk, int kWm, int kWn, int kWNIter, int kTm, int kTn, bool kVec>
__device__ __forceinline__ void lab_sgemm_double_buffered_loop(const lab_gemm_f32_args& p, int tileRow, int tileCol,
                                                               float (&As)[2][kBk * kBm], float (&Bs)[2][kBk * kBn]) {
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    const int tid = threadIdx.x;
    const int row0 = tileRow * kBm, col0 = tileCol * kBn;

    ATile<kBm, kBk, kThreads> a;
    BTile<kBn, kBk, kThreads> b;
    WarpTile<kThreads, kBm, kBn, kBk, kWm, kWn, kWNIter, kTm, kTn> w(tid);
    int kBegin, kEnd;
    lab_k_slice<kBk>(p, kBegin, kEnd);
    a.template fetch<kVec>(A, p.lda, p.m, p.k, row0, kBegin, tid);
    b.template fetch<kVec>(B, p.ldb, p.k, p.n, kBegin, col0, tid);
    a.store(As[0], tid);
    b.store(Bs[0], tid);
    __syncthreads();
    int buf = 0;
    for (int k0 = kBegin; k0 < kEnd; k0 += kBk) {
        const bool next = k0 + kBk < kEnd;
        if (next) {  // issued now, used after the math: the loads' latency hides behind it
            a.template fetch<kVec>(A, p.lda, p.m, p.k, row0, k0 + kBk, tid);
            b.template fetch<kVec>(B, p.ldb, p.k, p.n, k0 + kBk, col0, tid);
        }
        w.mma(As[buf], Bs[buf]);
        if (next) {  // buf ^ 1 was last read before the previous barrier
            a.store(As[buf ^ 1], tid);
            b.store(Bs[buf ^ 1], tid);
        }
        __syncthreads();
        buf ^= 1;
    }
    w.template store<(SPLIT_K > 1)>(p, row0, col0);
}

// The loop compiled twice, on one pair of buffers: float4 moves where the launch allows them,
// element-wise ones elsewhere.
template <int kThreads, int kBm, int kBn, int kBk, int kWm, int kWn, int kWNIter, int kTm, int kTn>
__device__ __forceinline__ void lab_sgemm_double_buffered(const lab_gemm_f32_args& p, int tileRow, int tileCol) {
    __shared__ __align__(16) float As[2][kBk * kBm];
    __shared__ __align__(16) float Bs[2][kBk * kBn];
    if (lab_gemm_vec4(p))
        lab_sgemm_double_buffered_loop<kThreads, kBm, kBn, kBk, kWm, kWn, kWNIter, kTm, kTn, true>(p, tileRow, tileCol, As, Bs);
    else
        lab_sgemm_double_buffered_loop<kThreads, kBm, kBn, kBk, kWm, kWn, kWNIter, kTm, kTn, false>(p, tileRow, tileCol, As, Bs);
}
