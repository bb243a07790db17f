// A second entry for the modules of kernels that read through TMA: TMA needs row pitches that
// are multiples of 16 bytes, so a matrix whose rows are not is first copied to such a pitch by
// this kernel (part of the timed work). It moves bytes, so one kernel serves every element size.
// Each thread writes one aligned 16-byte chunk of the destination from the two aligned 16-byte
// chunks of the packed source that hold its bytes (rows start on any byte boundary), so every
// access is a full vector access; the bytes past the row's end are written as zeros.
// Written plainly it is bound by its instructions (ncu at 4097 x 4097 fp16: 19.6 us, issue slots
// 65% busy), so the index arithmetic is 32-bit where the matrix allows (a 64-bit division a chunk
// is a long subroutine) and the 16 bytes are picked out of the 32 by a shifter of three steps
// rather than a switch over the words: 17.0-18.1 us, issue slots 31-34% busy, 88-94% of the D2D
// copy's rate counting reads and writes. Passing each lane's second source chunk on from the next
// lane by shuffle, which halves the loads through L2, runs 18.0-18.2 us: what is left is the
// memory's.
#pragma once
#include "lab_gemm.h"
#include "lab_device.cuh"

// The aligned 16-byte chunk at `base`, or, for the source's last chunk where the matrix ends
// inside it, that chunk's bytes before `end` and zeros (a full 16-byte read there would go past
// the allocation, which compute-sanitizer's memcheck reports).
template <typename I>
__device__ __forceinline__ uint4 lab_chunk(const unsigned char* src, I base, I end) {
    if (base + 16 <= end) return *reinterpret_cast<const uint4*>(src + base);
    unsigned w[4] = {0, 0, 0, 0};
    for (I b = base; b < end; ++b) w[(b - base) / 4] |= (unsigned)src[b] << (8 * ((b - base) % 4));
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// Bytes s .. s + 15 (s < 16) of the 32 bytes lo, hi: whole words by two selects (8 bytes, then
// 4), the rest by funnel shifts.
__device__ __forceinline__ uint4 lab_bytes_from(const uint4& lo, const uint4& hi, unsigned s) {
    unsigned a[6] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y};
    if (s & 8) {
        a[0] = lo.z, a[1] = lo.w, a[2] = hi.x, a[3] = hi.y, a[4] = hi.z, a[5] = hi.w;
    }
    if (s & 4) {
#pragma unroll
        for (int j = 0; j < 5; ++j) a[j] = a[j + 1];
    }
    const unsigned shift = (s & 3) * 8;
    return make_uint4(__funnelshift_r(a[0], a[1], shift), __funnelshift_r(a[1], a[2], shift), __funnelshift_r(a[2], a[3], shift),
                      __funnelshift_r(a[3], a[4], shift));
}

// The copy over index type I (32-bit where every byte offset of the destination fits).
template <typename I>
__device__ __forceinline__ void lab_pad_copy(const lab_pad_args& p) {
    const unsigned char* src = lab_ptr<const unsigned char>(p.src);  // 256-byte aligned
    uint4* dst = lab_ptr<uint4>(p.dst);
    const I cols = (I)p.cols, chunks = (I)(p.ld / 16), total = (I)p.rows * chunks, end = (I)p.rows * cols;
    for (I i = (I)blockIdx.x * 256 + threadIdx.x; i < total; i += (I)gridDim.x * 256) {
        const I r = i / chunks, c0 = (i - r * chunks) * 16;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (c0 < cols) {
            const I at = r * cols + c0, base = at & ~(I)15;
            // The aligned chunk after base holds bytes of this row only where the row goes on.
            const uint4 lo = lab_chunk(src, base, end);
            const uint4 hi = base + 16 < end ? lab_chunk(src, base + 16, end) : make_uint4(0, 0, 0, 0);
            v = lab_bytes_from(lo, hi, (unsigned)(at - base));
            // Bytes past the row's end (the last chunk of a row) are zeros.
            const I valid = cols - c0;
            if (valid < 16) {
                unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    if (4 * j + 4 > valid) w[j] &= 4 * j < valid ? (1u << (8 * (valid - 4 * j))) - 1 : 0u;
                }
                v = make_uint4(w[0], w[1], w[2], w[3]);
            }
        }
        dst[i] = v;
    }
}

extern "C" __global__ void __launch_bounds__(256) lab_pad_rows(lab_pad_args p) {
    if (p.rows * p.ld < (1ull << 32)) {
        lab_pad_copy<unsigned>(p);
    } else {
        lab_pad_copy<uint64_t>(p);
    }
}
