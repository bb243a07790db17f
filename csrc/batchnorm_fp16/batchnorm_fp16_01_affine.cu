// Technique: batch norm at inference as one affine map per channel (rung 1): each block folds
//   the statistics and the affine parameters into a scale and a shift per channel in shared
//   memory, then a grid-stride loop maps four activations an access (8 bytes in fp16: the
//   family's storage, lab_elem).
// Teaches: at inference a batch norm is y = x * scale + shift, so it costs what a copy costs;
//   channels last puts four consecutive channels in one access, and one table of c scales and
//   shifts serves every pixel.
// Limits: the table holds up to CHANNELS channels (more are folded per element from global
//   memory); channel counts that are not a multiple of 4 go an element at a time.
#include "lab_batchnorm.h"
#include "row_storage.cuh"

#define CHANNELS 2048

extern "C" __global__ void __launch_bounds__(BLOCK_X) batchnorm_fp16_01_affine(lab_batchnorm_args p) {
    __shared__ float2 table[CHANNELS];  // (scale, shift) per channel
    const float* mean = lab_ptr<const float>(p.mean);
    const float* var = lab_ptr<const float>(p.var);
    const float* gamma = lab_ptr<const float>(p.gamma);
    const float* beta = lab_ptr<const float>(p.beta);
    const auto fold = [&](int ch) {
        const float scale = gamma[ch] * rsqrtf(var[ch] + p.eps);
        return make_float2(scale, beta[ch] - mean[ch] * scale);
    };
    const bool tabled = p.c <= CHANNELS;
    if (tabled)
        for (int ch = threadIdx.x; ch < p.c; ch += BLOCK_X) table[ch] = fold(ch);
    __syncthreads();
    const auto at = [&](int ch) { return tabled ? table[ch] : fold(ch); };
    const uint64_t elements = p.pixels * (uint64_t)p.c, stride = (uint64_t)gridDim.x * BLOCK_X;
    if (p.c % 4 == 0) {
        const lab_elem4* src = lab_ptr<const lab_elem4>(p.src);
        lab_elem4* dst = lab_ptr<lab_elem4>(p.dst);
        for (uint64_t g = blockIdx.x * (uint64_t)BLOCK_X + threadIdx.x; g < elements / 4; g += stride) {
            const int ch = (int)(g * 4 % p.c);
            const float4 x = lab_load(src + g);
            const float2 a = at(ch), b = at(ch + 1), c = at(ch + 2), d = at(ch + 3);
            lab_store(dst + g, make_float4(x.x * a.x + a.y, x.y * b.x + b.y, x.z * c.x + c.y, x.w * d.x + d.y));
        }
    } else {
        const lab_elem* src = lab_ptr<const lab_elem>(p.src);
        lab_elem* dst = lab_ptr<lab_elem>(p.dst);
        for (uint64_t i = blockIdx.x * (uint64_t)BLOCK_X + threadIdx.x; i < elements; i += stride) {
            const float2 a = at((int)(i % p.c));
            lab_store(dst + i, lab_load(src + i) * a.x + a.y);
        }
    }
}
