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

// The copy walks tiles of 256 chunks of one row, a chunk a thread: the tile's row is one 32-bit
// division a tile, shared by the block (a matrix that fits a GPU's memory has far fewer than 2^32
// tiles of 4 KiB). A 64-bit division for every chunk held the copy to 2.4 TB/s on the H200, with
// math-pipe throttling among its stalls (ncu, log 2026-12-01-s16-1).
extern "C" __global__ void __launch_bounds__(256) lab_pad_rows(lab_pad_args p) {
    const unsigned char* src = lab_ptr<const unsigned char>(p.src);  // 256-byte aligned
    uint4* dst = lab_ptr<uint4>(p.dst);
    const uint64_t chunks = p.ld / 16, end = p.rows * p.cols;
    const unsigned per_row = (unsigned)((chunks + 255) / 256), tiles = (unsigned)(p.rows * per_row);
    for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
        const unsigned r = t / per_row;
        const uint64_t c = (uint64_t)(t - r * per_row) * 256 + threadIdx.x, c0 = c * 16;
        if (c >= chunks) continue;
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
        dst[(uint64_t)r * chunks + c] = v;
    }
}
