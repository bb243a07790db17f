// A second entry for the modules of kernels that read through TMA: TMA needs row pitches that
// are multiples of 16 bytes, so a matrix whose rows are not is first copied to such a pitch by
// this kernel (part of the timed work). Each thread writes one aligned 16-byte chunk of the
// destination from eight 2-byte loads of the packed source (whose rows start anywhere).
#pragma once
#include "lab_device.cuh"

extern "C" __global__ void __launch_bounds__(256) lab_pad_rows_u16(lab_pad_args p) {
    const unsigned short* src = lab_ptr<const unsigned short>(p.src);
    uint4* dst = lab_ptr<uint4>(p.dst);
    const uint64_t chunks = p.ld / 8, total = p.rows * chunks;
    for (uint64_t i = (uint64_t)blockIdx.x * 256 + threadIdx.x; i < total; i += (uint64_t)gridDim.x * 256) {
        const uint64_t r = i / chunks, c0 = (i - r * chunks) * 8;
        const unsigned short* row = src + r * p.cols;
        union {
            unsigned short h[8];
            uint4 q;
        } v;
#pragma unroll
        for (int e = 0; e < 8; ++e) v.h[e] = c0 + e < p.cols ? row[c0 + e] : (unsigned short)0;
        dst[i] = v.q;
    }
}
