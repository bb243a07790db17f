// Technique: none: a stream-K GEMM whose fix-up adds one piece twice, for the test that every
//   element is checked.
// Teaches: what a sampled check misses. The schedule is the lab's (lab_sk_tiles of
//   sgemm_stream_k.cuh: whole tiles first, the last partial wave's k-steps split over one block
//   a slot, tiles in GROUP_M order); each thread computes one element from global memory; the
//   fix-up is lab_sk_fixup's, but the last piece of stream-K tile 0 to arrive adds the first
//   other piece's slot twice. That tile's 1,024 elements are each off by a piece's share of the
//   sum; at 4096³ on an H100 or H200 the tile is an interior one (rows 3840-3871, columns
//   4032-4063), and a sample of 4,096 random elements misses all of them three times in four.
// Limits: test-only; one thread an element (BLOCK_X = BM * BN), so slow; the sgemm protocol's
//   stream-K launch and scratch.
#include "lab_gemm.h"
#include "sgemm_stream_k.cuh"
#include "sgemm_tiles.cuh"

#define THREADS (BLOCK_X)
static_assert(BLOCK_X == BM * BN && BLOCK_Y == 1 && BLOCK_Z == 1, "one thread an element of the tile");

// lab_sk_fixup for one accumulator a thread, with the bug.
__device__ bool fixup_twice(const lab_gemm_f32_args& p, const lab_sk_tiles<BM, BN, BK>& t, const lab_sk_unit& w, float& acc) {
    __shared__ int last;
    const int tid = threadIdx.x;
    float* partials = lab_ptr<float>(p.partials);
    auto at = [&](int slot) { return partials + (size_t)slot * THREADS + tid; };
    __stcg(at(w.slot), acc);
    __threadfence();
    __syncthreads();
    const long long first = (long long)w.sk * t.ktiles, end = first + t.ktiles;
    int b0 = w.slot / 2, b1 = b0;
    while (t.share(b0) > first) --b0;
    while (t.share(b1 + 1) < end) ++b1;
    unsigned* count = lab_ptr<unsigned>(p.arrivals) + w.sk;
    if (tid == 0) {
        unsigned pieces = 0;
        for (int b = b0; b <= b1; ++b) pieces += t.share(b) < t.share(b + 1);
        last = atomicAdd(count, 1u) == pieces - 1;
    }
    __syncthreads();
    if (!last) return false;
    __threadfence();
    bool twice = w.sk == 0;
    for (int b = b0; b <= b1; ++b) {
        const int slot = 2 * b + (b == b0 && t.share(b0) < first);
        if (slot == w.slot || t.share(b) == t.share(b + 1)) continue;
        acc += __ldcg(at(slot));
        if (twice) acc += __ldcg(at(slot));  // the bug
        twice = false;
    }
    if (tid == 0) *count = 0;
    return true;
}

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_03_test_piece_twice(lab_gemm_f32_args p) {
    __shared__ lab_sk_tiles<BM, BN, BK> sched;
    __shared__ lab_sk_unit w;
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    const int tilesN = (p.n + BN - 1) / BN, tilesM = (p.m + BM - 1) / BM;
    for (int u = 0;; ++u) {
        if (threadIdx.x == 0) {
            if (u == 0) sched.init(p);
            if (!sched.unit(u, w)) w.id = -1;
        }
        __syncthreads();
        if (w.id < 0) break;
        int tileRow, tileCol;
        lab_grouped_tile<GROUP_M>(w.id, tilesN, tilesM, tileRow, tileCol);
        const int row = tileRow * BM + threadIdx.x / BN, col = tileCol * BN + threadIdx.x % BN;
        const bool inside = row < p.m && col < p.n;
        float acc = 0.0f;
        for (int q = w.k0 * BK; inside && q < min(p.k, w.k1 * BK); ++q) acc += A[(size_t)row * p.lda + q] * B[(size_t)q * p.ldb + col];
        const bool whole = !sched.piece(w) || fixup_twice(p, sched, w, acc);
        if (whole && inside) lab_ptr<float>(p.c)[(size_t)row * p.ldc + col] = acc;
        __syncthreads();  // every thread has read w
    }
}
