// A second entry for the modules of kernels that read through TMA: TMA needs row pitches that
// are multiples of 16 bytes, so a matrix whose rows are not is first copied to such a pitch by
// this kernel (part of the timed work). It moves bytes, so one kernel serves every element size.
// Each thread writes one aligned 16-byte chunk of the destination from the two aligned 16-byte
// chunks of the packed source that hold its bytes (rows start on any byte boundary), so every
// access is a full vector access; the bytes past the row's end are written as zeros.
#pragma once
#include "lab_device.cuh"

// The aligned 16-byte chunk at `base`, or, for the source's last chunk where the matrix ends
// inside it, that chunk's bytes before `end` and zeros (a full 16-byte read there would go past
// the allocation, which compute-sanitizer's memcheck reports).
__device__ __forceinline__ uint4 lab_chunk(const unsigned char* src, uint64_t base, uint64_t end) {
    if (base + 16 <= end) return *reinterpret_cast<const uint4*>(src + base);
    unsigned w[4] = {0, 0, 0, 0};
    for (uint64_t b = base; b < end; ++b) w[(b - base) / 4] |= (unsigned)src[b] << (8 * ((b - base) % 4));
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// Word i of the 32 bytes (lo, hi).
__device__ __forceinline__ unsigned lab_word(const uint4& lo, const uint4& hi, int i) {
    switch (i) {
    case 0: return lo.x;
    case 1: return lo.y;
    case 2: return lo.z;
    case 3: return lo.w;
    case 4: return hi.x;
    case 5: return hi.y;
    case 6: return hi.z;
    default: return hi.w;
    }
}

extern "C" __global__ void __launch_bounds__(256) lab_pad_rows(lab_pad_args p) {
    const unsigned char* src = lab_ptr<const unsigned char>(p.src);  // 256-byte aligned
    uint4* dst = lab_ptr<uint4>(p.dst);
    const uint64_t chunks = p.ld / 16, total = p.rows * chunks, end = p.rows * p.cols;
    for (uint64_t i = (uint64_t)blockIdx.x * 256 + threadIdx.x; i < total; i += (uint64_t)gridDim.x * 256) {
        const uint64_t r = i / chunks, c0 = (i - r * chunks) * 16;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (c0 < p.cols) {
            const uint64_t at = r * p.cols + c0, base = at & ~(uint64_t)15;
            // The aligned chunk after base holds bytes of this row only where the row goes on.
            const uint4 lo = lab_chunk(src, base, end);
            const uint4 hi = base + 16 < end ? lab_chunk(src, base + 16, end) : make_uint4(0, 0, 0, 0);
            const int q = (int)(at - base) / 4, shift = (int)(at - base) % 4 * 8;
            unsigned w[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) w[j] = __funnelshift_r(lab_word(lo, hi, q + j), lab_word(lo, hi, q + j + 1), shift);
            // Bytes past the row's end (the last chunk of a row) are zeros.
            const uint64_t valid = p.cols - c0;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                if (4 * j + 4 > valid) w[j] &= 4 * j < valid ? (1u << (8 * (valid - 4 * j))) - 1 : 0u;
            }
            v = make_uint4(w[0], w[1], w[2], w[3]);
        }
        dst[i] = v;
    }
}
