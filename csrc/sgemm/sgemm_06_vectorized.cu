// Technique: 16-byte (float4) global and shared loads, with the A tile stored transposed in
//   shared memory (rung 6).
// Teaches: instruction count and bank conflicts. A float4 moves four operands per instruction;
//   storing A as [k][m] turns each thread's column of A into contiguous float4 reads, so both
//   register fills in the inner loop are vector loads without bank conflicts.
// Limits: needs k and n to be multiples of 4 (16-byte aligned rows of A, B and C), declared in
//   the manifest; there is no overlap of the next tile's loads with this tile's math (sgemm_08).
#include "lab_gemm.h"
#include "lab_device.cuh"

#define THREADS (BLOCK_X)
static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");
static_assert((BM / TM) * (BN / TN) == THREADS, "each thread owns a TM x TN sub-tile");
static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 register fills");
static_assert(THREADS % (BK / 4) == 0 && BM % (THREADS / (BK / 4)) == 0, "A tile loads in whole passes");
static_assert(THREADS % (BN / 4) == 0 && BK % (THREADS / (BN / 4)) == 0, "B tile loads in whole passes");

extern "C" __global__ void __launch_bounds__(THREADS) sgemm_06_vectorized(lab_gemm_f32_args p) {
    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK * BN];
    const float* A = lab_ptr<const float>(p.a);
    const float* B = lab_ptr<const float>(p.b);
    float* C = lab_ptr<float>(p.c);
    const int tid = threadIdx.x;
    const int bRow = blockIdx.y * BM, bCol = blockIdx.x * BN;
    const int threadCol = tid % (BN / TN), threadRow = tid / (BN / TN);
    const int aRow = tid / (BK / 4), aCol4 = tid % (BK / 4), aStride = THREADS / (BK / 4);
    const int bRowIn = tid / (BN / 4), bCol4 = tid % (BN / 4), bStride = THREADS / (BN / 4);
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);

    float acc[TM * TN] = {0.0f};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < p.k; k0 += BK) {
        // k % 4 == 0 and n % 4 == 0, so a float4 is wholly inside the matrix or wholly outside.
#pragma unroll
        for (int off = 0; off < BM; off += aStride) {
            const int r = bRow + aRow + off, c = k0 + aCol4 * 4;
            const float4 v = (r < p.m && c < p.k) ? *reinterpret_cast<const float4*>(&A[(size_t)r * p.lda + c]) : zero;
            As[(aCol4 * 4 + 0) * BM + aRow + off] = v.x;
            As[(aCol4 * 4 + 1) * BM + aRow + off] = v.y;
            As[(aCol4 * 4 + 2) * BM + aRow + off] = v.z;
            As[(aCol4 * 4 + 3) * BM + aRow + off] = v.w;
        }
#pragma unroll
        for (int off = 0; off < BK; off += bStride) {
            const int r = k0 + bRowIn + off, c = bCol + bCol4 * 4;
            *reinterpret_cast<float4*>(&Bs[(bRowIn + off) * BN + bCol4 * 4]) =
                (r < p.k && c < p.n) ? *reinterpret_cast<const float4*>(&B[(size_t)r * p.ldb + c]) : zero;
        }
        __syncthreads();
#pragma unroll
        for (int d = 0; d < BK; ++d) {
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                *reinterpret_cast<float4*>(&regM[i]) = *reinterpret_cast<const float4*>(&As[d * BM + threadRow * TM + i]);
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                *reinterpret_cast<float4*>(&regN[j]) = *reinterpret_cast<const float4*>(&Bs[d * BN + threadCol * TN + j]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i * TN + j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = bRow + threadRow * TM + i;
        if (row >= p.m) continue;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = bCol + threadCol * TN + j;
            if (col >= p.n) continue;
            float4* c = reinterpret_cast<float4*>(&C[(size_t)row * p.ldc + col]);
            float4 v = make_float4(acc[i * TN + j], acc[i * TN + j + 1], acc[i * TN + j + 2], acc[i * TN + j + 3]);
            if (p.beta == 0.0f) {
                v.x *= p.alpha; v.y *= p.alpha; v.z *= p.alpha; v.w *= p.alpha;
            } else {
                const float4 o = *c;
                v.x = p.alpha * v.x + p.beta * o.x; v.y = p.alpha * v.y + p.beta * o.y;
                v.z = p.alpha * v.z + p.beta * o.z; v.w = p.alpha * v.w + p.beta * o.w;
            }
            *c = v;
        }
    }
}
