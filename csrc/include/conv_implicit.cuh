// What the conv family's implicit-GEMM rungs share: A's row m is output pixel m's window of the
// image, A's column kk one tap (kk / c, split into the filter's row and column) and one channel
// (kk % c), read from NHWC as ((img h + ih) w + iw) c + channel, or zero in the padding; and the
// epilogue, which rounds the fp32 sums to fp16 and writes dst (pixels x k, NPQK).
#pragma once
#include "lab_conv.h"
#include "wmma_ptx.cuh"

// Output pixel m's window: its image and the input row and column its filter's first tap lands
// on (negative in the padding); `inside` is false past the last pixel (the last tile of M).
struct lab_window {
    int img, ih, iw;
    bool inside;
};

__device__ __forceinline__ lab_window lab_window_of(const lab_conv_args& p, int m) {
    const int pixels = p.n * p.p * p.q;
    const int pix = m < pixels ? m : 0, pq = pix % (p.p * p.q);
    return {pix / (p.p * p.q), (pq / p.q) * p.stride - p.pad, (pq % p.q) * p.stride - p.pad, m < pixels};
}

// Where column kk of A's row for `win` is in src, or -1 where it reads zero (the padding, past
// the depth, past the last pixel).
__device__ __forceinline__ long long lab_tap_at(const lab_conv_args& p, const lab_window& win, int kk, int depth) {
    if (!win.inside || kk >= depth) return -1;
    const int channel = kk % p.c, tap = kk / p.c;
    const int ih = win.ih + tap / p.s, iw = win.iw + tap % p.s;
    if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) return -1;
    return (((long long)win.img * p.h + ih) * p.w + iw) * p.c + channel;
}

__device__ __forceinline__ unsigned short lab_to_fp16(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

// The warp's I x J fragments of sums, its tile's top-left at (row, col) of dst, through the
// warp's 16 x 20 staging tile: a lane takes 8 of a row's 16 columns, stored as one 16-byte run
// where dst's row allows it.
template <int I, int J>
__device__ __forceinline__ void lab_conv_store(const lab_conv_args& p, const lab_frag_c (&acc)[I][J], int row, int col, float* stage) {
    unsigned short* Y = lab_ptr<unsigned short>(p.dst);
    const int pixels = p.n * p.p * p.q;
    const int lane = threadIdx.x % 32, sr = lane / 2, sc = (lane % 2) * 8;
#pragma unroll
    for (int i = 0; i < I; ++i)
#pragma unroll
        for (int j = 0; j < J; ++j) {
            lab_store_c_shared(stage, acc[i][j], 16 + 4);
            __syncwarp();
            const int m = row + 16 * i + sr, n = col + 16 * j + sc;
            unsigned short h[8];
#pragma unroll
            for (int e = 0; e < 8; ++e) h[e] = lab_to_fp16(stage[sr * (16 + 4) + sc + e]);
            if (m < pixels && p.k % 8 == 0 && n + 8 <= p.k) {
                *reinterpret_cast<uint4*>(Y + (size_t)m * p.k + n) =
                    make_uint4(h[0] | (unsigned)h[1] << 16, h[2] | (unsigned)h[3] << 16, h[4] | (unsigned)h[5] << 16, h[6] | (unsigned)h[7] << 16);
            } else if (m < pixels) {
#pragma unroll
                for (int e = 0; e < 8; ++e)
                    if (n + e < p.k) Y[(size_t)m * p.k + n + e] = h[e];
            }
            __syncwarp();
        }
}
