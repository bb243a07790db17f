// Technique: implicit GEMM on WMMA (rung 1; Volta and later): the convolution as a GEMM of M =
//   n p q output pixels by N = k channels, each dot product r r c deep, whose A (the im2col
//   matrix) is never written: each BK-deep slice of it is gathered from the image into shared
//   memory, padding as zeros, and multiplied with the filters' slice by 16 x 16 x 16 fragments.
// Teaches: a convolution is a GEMM once A is addressed through the image. Channels last makes
//   each tap's channels one contiguous run, so where c is a multiple of 8 a group of 8 of A's
//   columns is one 16-byte load; a pixel's coordinates are worked out once per thread, not per
//   element.
// Limits: one stage, so loads and math do not overlap; the stem's 3 channels (c % 8 != 0) go
//   element by element; the filters' slice is transposed into shared memory element by element;
//   the output leaves through a per-warp staging tile.
#include "conv_implicit.cuh"

#define THREADS (BLOCK_X)
#define WARPS (THREADS / 32)
#define PAD 8
// 16-byte groups of A's slice each thread gathers per k-step (variants.toml's wmma_tile set
// keeps it whole).
#define A_GROUPS (BM * BK / 8 / THREADS)

struct lab_smem {
    union {
        struct {
            unsigned short a[BM][BK + PAD];
            unsigned short b[BK][BN + PAD];
        } in;
        float c[WARPS][16][16 + 4];  // the epilogue's per-warp staging tile
    };
};

// Columns kk .. kk + 7 of A's row for `win`: one 16-byte run where c is a multiple of 8 (one
// tap's channels), else element by element.
__device__ __forceinline__ uint4 lab_gather_a(const lab_conv_args& p, const unsigned short* X, const lab_window& win, int kk, int depth) {
    if (p.c % 8 == 0) {
        const long long at = lab_tap_at(p, win, kk, depth);
        return at < 0 ? make_uint4(0, 0, 0, 0) : *reinterpret_cast<const uint4*>(X + at);
    }
    unsigned e[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const long long at = lab_tap_at(p, win, kk + j, depth);
        e[j] = at < 0 ? 0 : X[at];
    }
    return make_uint4(e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16, e[6] | e[7] << 16);
}

extern "C" __global__ void __launch_bounds__(THREADS) conv_fp16_01_implicit_gemm(lab_conv_args p) {
    __shared__ __align__(32) lab_smem s;
    const unsigned short* X = lab_ptr<const unsigned short>(p.src);
    const unsigned short* W = lab_ptr<const unsigned short>(p.filter);
    const int depth = p.r * p.s * p.c;
    const int row0 = blockIdx.x * BM, col0 = blockIdx.y * BN;
    const int warp = threadIdx.x / 32;
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;

    // The rows of A a thread gathers are the same at every k-step: their windows, once.
    lab_window win[A_GROUPS];
#pragma unroll
    for (int g = 0; g < A_GROUPS; ++g) win[g] = lab_window_of(p, row0 + (threadIdx.x + g * THREADS) / (BK / 8));
    lab_frag_c acc[WM / 16][WN / 16];
#pragma unroll
    for (int i = 0; i < WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < WN / 16; ++j) lab_fill(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < depth; k0 += BK) {
#pragma unroll
        for (int g = 0; g < A_GROUPS; ++g) {
            const int v = threadIdx.x + g * THREADS, r = v / (BK / 8), c = (v % (BK / 8)) * 8;
            *reinterpret_cast<uint4*>(&s.in.a[r][c]) = lab_gather_a(p, X, win[g], k0 + c, depth);
        }
        // B (depth x k) is the filters read across: filter `col`'s taps k0 .. k0 + BK, a
        // contiguous run, written down a column of b.
        for (int v = threadIdx.x; v < BN * BK / 8; v += THREADS) {
            const int n = v / (BK / 8), c = (v % (BK / 8)) * 8, col = col0 + n, kk = k0 + c;
            unsigned short e[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            if (col < p.k && p.c % 8 == 0 && kk < depth) {
                const uint4 x = *reinterpret_cast<const uint4*>(W + (size_t)col * depth + kk);
                const unsigned w4[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
                for (int j = 0; j < 8; ++j) e[j] = (unsigned short)(w4[j / 2] >> (16 * (j % 2)));
            } else if (col < p.k) {
#pragma unroll
                for (int j = 0; j < 8; ++j) e[j] = kk + j < depth ? W[(size_t)col * depth + kk + j] : 0;
            }
#pragma unroll
            for (int j = 0; j < 8; ++j) s.in.b[c + j][n] = e[j];
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            lab_frag_a a[WM / 16];
            lab_frag_b b[WN / 16];
#pragma unroll
            for (int i = 0; i < WM / 16; ++i) lab_load_a_shared(a[i], &s.in.a[wr + 16 * i][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < WN / 16; ++j) lab_load_b_shared(b[j], &s.in.b[kk][wc + 16 * j], BN + PAD);
#pragma unroll
            for (int i = 0; i < WM / 16; ++i)
#pragma unroll
                for (int j = 0; j < WN / 16; ++j) lab_wmma(acc[i][j], a[i], b[j]);
        }
        __syncthreads();
    }
    lab_conv_store(p, acc, row0 + wr, col0 + wc, &s.c[warp][0][0]);
}
