// Pieces shared by the warp-tiled SGEMM rungs (07 and later): the tile loads and the epilogue.
// Each rung's .cu file keeps its own main loop, which is the technique it teaches.
#pragma once
#include "lab_gemm.h"
#include "lab_device.cuh"

// PAD_ROWS = 1 (the sgemm protocol): the host hands over A and B with every row padded with
// zeros to a pitch of whole float4s (copied by the module's lab_pad_rows, inside the timed work,
// where the rows themselves are not), so the float4 loop runs at any k and n; the last float4 of
// a row may reach past its end, into the zeros.
#ifndef PAD_ROWS
#define PAD_ROWS 0
#endif
#if PAD_ROWS
#include "pad_rows.cuh"
#endif

// SPLIT_K (the sgemm protocol): blockIdx.z picks one of SPLIT_K slices of K, whole kBk steps
// each, and the tile's slices add into C (zeroed by the host), for shapes whose tiles alone
// leave SMs idle or a last wave nearly empty.
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
static_assert(SPLIT_K >= 1, "K slices per tile");

// This block's slice of K, [kBegin, kEnd): all of K unless SPLIT_K > 1.
template <int kBk>
__device__ __forceinline__ void lab_k_slice(const lab_gemm_f32_args& p, int& kBegin, int& kEnd) {
    const int slice = (p.k + SPLIT_K * kBk - 1) / (SPLIT_K * kBk) * kBk;  // K per slice, whole steps
    kBegin = SPLIT_K > 1 ? blockIdx.z * slice : 0;
    kEnd = SPLIT_K > 1 ? min(p.k, kBegin + slice) : p.k;
}

// The tile a block computes, in L2-friendly order (rung 9): the grid's blocks taken in groups of
// kGroupM tile rows, column by column inside a group, so a group's rows of A and a few columns of
// B stay in L2 while the blocks that need them run.
// Tile `id` of tilesM x tilesN in that order; the second form takes the id from the block's place
// in a 2-D grid of tiles.
template <int kGroupM>
__device__ __forceinline__ void lab_grouped_tile(int id, int tilesN, int tilesM, int& tileRow, int& tileCol) {
    const int perGroup = kGroupM * tilesN;
    const int firstRow = (id / perGroup) * kGroupM, rows = min(tilesM - firstRow, kGroupM);
    tileRow = firstRow + (id % perGroup) % rows;
    tileCol = (id % perGroup) / rows;
}

template <int kGroupM>
__device__ __forceinline__ void lab_grouped_tile(int& tileRow, int& tileCol) {
    lab_grouped_tile<kGroupM>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y, tileRow, tileCol);
}

// Whether the rows of a row-major matrix can be read and written as float4: every row starts
// 16-byte aligned (ld % 4 == 0 and an aligned base) and holds whole float4s (cols % 4 == 0). The
// same for every thread of a launch: a kernel branches on it once, into a main loop compiled
// with float4 moves (kVec) or one that moves element by element, so any m, n, k and leading
// dimension work and the aligned loop carries no per-element code.
__device__ __forceinline__ bool lab_rows_vec4(const float* base, int ld, int cols) {
    return ld % 4 == 0 && cols % 4 == 0 && (reinterpret_cast<unsigned long long>(base) & 15) == 0;
}

// Four consecutive elements of a row of `cols` (the row itself only where `rowOk`), zeros past
// the end: one float4 load where kVec, its whole condition one predicate (a branch around a load
// in the main loop costs the aligned rungs 5% on the H200).
template <bool kVec>
__device__ __forceinline__ float4 lab_load4(const float* M, size_t ld, int row, bool rowOk, int col, int cols) {
    if (kVec)
        return rowOk && col < cols ? *reinterpret_cast<const float4*>(&M[row * ld + col]) : make_float4(0.f, 0.f, 0.f, 0.f);
    const float* r = &M[row * ld];
    return make_float4(rowOk && col < cols ? r[col] : 0.f, rowOk && col + 1 < cols ? r[col + 1] : 0.f,
                       rowOk && col + 2 < cols ? r[col + 2] : 0.f, rowOk && col + 3 < cols ? r[col + 3] : 0.f);
}

// A kBm x kBk tile of row-major A, fetched into registers with float4 loads, then stored into
// shared memory transposed (As[k][m]) so a thread's column of A is contiguous there; element by
// element where `vec` is false (lab_rows_vec4). Rows past m and columns past k load as zeros.
// Split in two so a pipelined rung can fetch the next tile while it computes on this one.
template <int kBm, int kBk, int kThreads>
struct ATile {
    static constexpr int PER_ROW = kBk / 4;
    static constexpr int ROW_STRIDE = kThreads / PER_ROW;
    static_assert(kThreads % PER_ROW == 0 && kBm % ROW_STRIDE == 0, "A tile loads in whole passes");
    float4 v[kBm / ROW_STRIDE];

    template <bool kVec>
    __device__ __forceinline__ void fetch(const float* A, int lda, int m, int k, int row0, int k0, int tid) {
        const int r = tid / PER_ROW, c = (tid % PER_ROW) * 4;
#pragma unroll
        for (int i = 0; i < kBm / ROW_STRIDE; ++i) {
            const int gr = row0 + r + i * ROW_STRIDE;
            v[i] = lab_load4<kVec>(A, lda, gr, gr < m, k0 + c, k);
        }
    }

    __device__ __forceinline__ void store(float* As, int tid) const {
        const int r = tid / PER_ROW, c = (tid % PER_ROW) * 4;
#pragma unroll
        for (int i = 0; i < kBm / ROW_STRIDE; ++i) {
            const int rr = r + i * ROW_STRIDE;
            As[(c + 0) * kBm + rr] = v[i].x;
            As[(c + 1) * kBm + rr] = v[i].y;
            As[(c + 2) * kBm + rr] = v[i].z;
            As[(c + 3) * kBm + rr] = v[i].w;
        }
    }
};

// A kBk x kBn tile of row-major B into shared memory as it is (Bs[k][n]), float4 at a time
// (element by element unless kVec); out-of-range elements load as zeros.
template <int kBn, int kBk, int kThreads>
struct BTile {
    static constexpr int PER_ROW = kBn / 4;
    static constexpr int ROW_STRIDE = kThreads / PER_ROW;
    static_assert(kThreads % PER_ROW == 0 && kBk % ROW_STRIDE == 0, "B tile loads in whole passes");
    float4 v[kBk / ROW_STRIDE];

    template <bool kVec>
    __device__ __forceinline__ void fetch(const float* B, int ldb, int k, int n, int k0, int col0, int tid) {
        const int r = tid / PER_ROW, c = (tid % PER_ROW) * 4;
#pragma unroll
        for (int i = 0; i < kBk / ROW_STRIDE; ++i) {
            const int gr = k0 + r + i * ROW_STRIDE;
            v[i] = lab_load4<kVec>(B, ldb, gr, gr < k, col0 + c, n);
        }
    }

    __device__ __forceinline__ void store(float* Bs, int tid) const {
        const int r = tid / PER_ROW, c = (tid % PER_ROW) * 4;
#pragma unroll
        for (int i = 0; i < kBk / ROW_STRIDE; ++i) *reinterpret_cast<float4*>(&Bs[(r + i * ROW_STRIDE) * kBn + c]) = v[i];
    }
};

// Four consecutive outputs of one row: C[row][col..col+3] = alpha * v + beta * C, those inside the
// matrix. With kVec (lab_rows_vec4) the four are all inside it or all outside, one float4.
template <bool kVec>
__device__ __forceinline__ void lab_store4(float* C, int ldc, int m, int n, int row, int col, float4 v, float alpha,
                                           float beta) {
    if (row >= m || col >= n) return;
    if (!kVec) {
        float* c = &C[(size_t)row * ldc + col];
        const float o[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int e = 0; e < 4; ++e)
            if (col + e < n) c[e] = beta == 0.0f ? alpha * o[e] : alpha * o[e] + beta * c[e];
        return;
    }
    float4* c = reinterpret_cast<float4*>(&C[(size_t)row * ldc + col]);
    if (beta == 0.0f) {
        v.x *= alpha; v.y *= alpha; v.z *= alpha; v.w *= alpha;
    } else {
        const float4 o = *c;
        v.x = alpha * v.x + beta * o.x; v.y = alpha * v.y + beta * o.y;
        v.z = alpha * v.z + beta * o.z; v.w = alpha * v.w + beta * o.w;
    }
    *c = v;
}

// C += alpha * v for the four outputs of one row inside the matrix, atomically: split-K, where the
// K slices of a tile each add their share into C, which the host zeroes first (so beta is 0, as in
// every product the lab runs). One float4 reduction where kVec on sm_90+ (RED.128), else one per
// element.
template <bool kVec>
__device__ __forceinline__ void lab_add4(float* C, int ldc, int m, int n, int row, int col, float4 v, float alpha) {
    if (row >= m || col >= n) return;
    v.x *= alpha; v.y *= alpha; v.z *= alpha; v.w *= alpha;
    float* c = &C[(size_t)row * ldc + col];
#if __CUDA_ARCH__ >= 900
    if (kVec) {
        atomicAdd(reinterpret_cast<float4*>(c), v);
        return;
    }
#endif
    const float o[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 4; ++e)
        if (col + e < n) atomicAdd(c + e, o[e]);
}

// Whether the tiles of A and B of a launch move as float4s: the one branch an any-shape rung's
// main loop takes. With PAD_ROWS the rows' lengths do not matter (zeros follow each row).
__device__ __forceinline__ bool lab_gemm_vec4(const lab_gemm_f32_args& p) {
    const int k4 = PAD_ROWS ? 4 : p.k, n4 = PAD_ROWS ? 4 : p.n;
    return lab_rows_vec4(lab_ptr<const float>(p.a), p.lda, k4) && lab_rows_vec4(lab_ptr<const float>(p.b), p.ldb, n4);
}

// Whether C's rows take float4 stores: the epilogue's own branch, so a C of odd rows leaves the
// main loop vectorized.
__device__ __forceinline__ bool lab_gemm_c_vec4(const lab_gemm_f32_args& p) {
    return lab_rows_vec4(lab_ptr<const float>(p.c), p.ldc, p.n);
}

// C = alpha * acc + beta * C for one lane's kTm x kTn outputs (C += alpha * acc, atomically, where
// kAdd: split-K): its rows kRowStep apart from `row`, its float4s of columns kColStep apart from
// `col` (the epilogue of the rungs with a 2-D lane tile, 11 to 13). C's own alignment picks float4
// or element-wise stores.
template <bool kVec, bool kAdd, int kTm, int kTn, int kRowStep, int kColStep>
__device__ __forceinline__ void lab_store_lane(const lab_gemm_f32_args& p, const float (&acc)[kTm][kTn], int row, int col) {
    float* C = lab_ptr<float>(p.c);
#pragma unroll
    for (int i = 0; i < kTm; ++i)
#pragma unroll
        for (int j = 0; j < kTn; j += 4) {
            const float4 v = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
            const int r = row + kRowStep * i, c = col + (j / 4) * kColStep;
            if (kAdd)
                lab_add4<kVec>(C, p.ldc, p.m, p.n, r, c, v, p.alpha);
            else
                lab_store4<kVec>(C, p.ldc, p.m, p.n, r, c, v, p.alpha, p.beta);
        }
}

template <int kTm, int kTn, int kRowStep, int kColStep, bool kAdd = false>
__device__ __forceinline__ void lab_store_lane(const lab_gemm_f32_args& p, const float (&acc)[kTm][kTn], int row, int col) {
    if (lab_gemm_c_vec4(p))
        lab_store_lane<true, kAdd, kTm, kTn, kRowStep, kColStep>(p, acc, row, col);
    else
        lab_store_lane<false, kAdd, kTm, kTn, kRowStep, kColStep>(p, acc, row, col);
}

// The warp tiling every rung from 07 on shares: a block of kThreads computes a kBm x kBn tile; each
// warp a kWm x kWn warp tile, walked as WMITER x kWNIter sub-tiles of WSUBM x WSUBN, in which each
// lane owns kTm x kTn outputs. Keeping a warp's outputs together makes its shared-memory reads of
// A and B hit few distinct addresses (broadcasts) and keeps its registers on one warp tile.
template <int kThreads, int kBm, int kBn, int kBk, int kWm, int kWn, int kWNIter, int kTm, int kTn>
struct WarpTile {
    static constexpr int WMITER = (kWm * kWn) / (32 * kTm * kTn * kWNIter);
    static constexpr int WSUBM = kWm / WMITER, WSUBN = kWn / kWNIter;
    static_assert((kBm / kWm) * (kBn / kWn) * 32 == kThreads, "one warp per warp tile");
    static_assert(WMITER >= 1 && WMITER * 32 * kTm * kTn * kWNIter == kWm * kWn, "whole sub-tiles per warp tile");
    static_assert((WSUBM / kTm) * (WSUBN / kTn) == 32, "a sub-tile is 32 lanes of kTm x kTn");
    static_assert(kTm % 4 == 0 && kTn % 4 == 0, "float4 fragments");

    float acc[WMITER * kTm * kWNIter * kTn];
    int rowOff, colOff;  // this lane's first output inside the block tile

    __device__ __forceinline__ explicit WarpTile(int tid) {
        const int warp = tid / 32, lane = tid % 32;
        rowOff = (warp / (kBn / kWn)) * kWm + (lane / (WSUBN / kTn)) * kTm;
        colOff = (warp % (kBn / kWn)) * kWn + (lane % (WSUBN / kTn)) * kTn;
#pragma unroll
        for (int i = 0; i < WMITER * kTm * kWNIter * kTn; ++i) acc[i] = 0.0f;
    }

    // acc += the kBk-deep outer products of the tiles in shared memory (As[k][m], Bs[k][n]).
    __device__ __forceinline__ void mma(const float* As, const float* Bs) {
        float regM[WMITER * kTm], regN[kWNIter * kTn];
#pragma unroll
        for (int d = 0; d < kBk; ++d) {
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
                for (int i = 0; i < kTm; i += 4)
                    *reinterpret_cast<float4*>(&regM[wm * kTm + i]) =
                        *reinterpret_cast<const float4*>(&As[d * kBm + rowOff + wm * WSUBM + i]);
#pragma unroll
            for (int wn = 0; wn < kWNIter; ++wn)
#pragma unroll
                for (int j = 0; j < kTn; j += 4)
                    *reinterpret_cast<float4*>(&regN[wn * kTn + j]) =
                        *reinterpret_cast<const float4*>(&Bs[d * kBn + colOff + wn * WSUBN + j]);
#pragma unroll
            for (int i = 0; i < WMITER * kTm; ++i)
#pragma unroll
                for (int j = 0; j < kWNIter * kTn; ++j) acc[i * kWNIter * kTn + j] += regM[i] * regN[j];
        }
    }

    // C = alpha * acc + beta * C, or with kAdd C += alpha * acc atomically (split-K).
    template <bool kAdd = false>
    __device__ __forceinline__ void store(const lab_gemm_f32_args& p, int row0, int col0) const {
        if (lab_gemm_c_vec4(p))
            store<kAdd, true>(p, row0, col0);
        else
            store<kAdd, false>(p, row0, col0);
    }

    template <bool kAdd, bool kVec>
    __device__ __forceinline__ void store(const lab_gemm_f32_args& p, int row0, int col0) const {
        float* C = lab_ptr<float>(p.c);
#pragma unroll
        for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
            for (int i = 0; i < kTm; ++i)
#pragma unroll
                for (int wn = 0; wn < kWNIter; ++wn)
#pragma unroll
                    for (int j = 0; j < kTn; j += 4) {
                        const float* a = &acc[(wm * kTm + i) * kWNIter * kTn + wn * kTn + j];
                        const int row = row0 + rowOff + wm * WSUBM + i, col = col0 + colOff + wn * WSUBN + j;
                        const float4 v = make_float4(a[0], a[1], a[2], a[3]);
                        if (kAdd)
                            lab_add4<kVec>(C, p.ldc, p.m, p.n, row, col, v, p.alpha);
                        else
                            lab_store4<kVec>(C, p.ldc, p.m, p.n, row, col, v, p.alpha, p.beta);
                    }
    }
};
