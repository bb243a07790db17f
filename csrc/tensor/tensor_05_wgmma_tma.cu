// Technique: Hopper's warpgroup MMA fed by the tensor copy engine (rung 5; sm_90a): a producer
//   warpgroup whose one elected thread issues cp.async.bulk.tensor (TMA) copies of A (128 x 64) and
//   B (64 x 128) tiles into a STAGES-deep ring of 128-byte-swizzled shared memory, each stage
//   completing on a "full" mbarrier; two consumer warpgroups, each multiplying 64 rows of the tile
//   with wgmma.mma_async m64n128k16 straight from shared memory (descriptors, no registers for A
//   or B), releasing each stage on an "empty" mbarrier once its wgmmas have completed.
// Teaches: the Hopper pipeline. Copies need one thread and no registers; the math is issued
//   asynchronously by 128 threads at a time; the two only meet at mbarriers.
// Limits: A is K-major (row-major A), B is MN-major (row-major B, wgmma's transpose flag); TMA needs
//   16-byte-aligned row strides, so k and n must be multiples of 8 (edges of m, n and k are
//   zero-filled by TMA); one tile per block (not persistent); accumulators stored straight from
//   registers with bounds checks.
#include "bulk_async.cuh"

#define STAGE_A (BM * BK * 2)
#define STAGE_B (BK * BN * 2)
static_assert(BLOCK_X == 384 && BLOCK_Y == 1 && BLOCK_Z == 1, "one producer and two consumer warpgroups");
static_assert(BM == 128 && BN == 128 && BK == 64, "two m64n128k16 consumers, 128-byte rows for the swizzle");
static_assert(STAGES >= 2 && STAGES * (STAGE_A + STAGE_B) + 1024 <= LAB_DYN_SMEM, "the ring fits the dynamic shared memory");

// A shared-memory matrix descriptor: start address, leading and stride byte offsets (all >> 4),
// 128-byte swizzle (mode 1 in bits 62-63).
__device__ __forceinline__ uint64_t lab_desc(const void* p, unsigned lbo, unsigned sbo) {
    const uint64_t a = (uint64_t)(lab_smem_addr(p) & 0x3FFFF) >> 4;
    return a | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void lab_tma_load_2d(void* smem, const lab_tma* map, int c0, int c1, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
            lab_smem_addr(smem)),
        "l"(map), "r"(c0), "r"(c1), "r"(lab_smem_addr(bar))
        : "memory");
}

__device__ __forceinline__ void lab_mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(lab_smem_addr(bar)) : "memory");
}

// d += A (64 x 16, K-major) * B (16 x 128, MN-major: transposed), both from shared memory.
__device__ __forceinline__ void lab_wgmma_64x128x16(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db));
}

extern "C" __global__ void __launch_bounds__(384, 1) tensor_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) {
    extern __shared__ unsigned char dyn[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    // 128-byte swizzling repeats every 1024 bytes: the ring starts on such a boundary.
    unsigned char* ring = dyn + ((1024 - (lab_smem_addr(dyn) & 1023)) & 1023);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int tiles = (p.g.k + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            lab_mbar_init(&full[s], 1);
            lab_mbar_init(&empty[s], 2);  // one arrival per consumer warpgroup
        }
        lab_mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {  // producer
        if (tid == 0) {
            for (int t = 0; t < tiles; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) lab_mbar_wait(&empty[s], ((t / STAGES) - 1) & 1);
                unsigned char* a = ring + s * (STAGE_A + STAGE_B);
                unsigned char* b = a + STAGE_A;
                lab_mbar_expect_tx(&full[s], STAGE_A + STAGE_B);
                lab_tma_load_2d(a, &p.a_map, t * BK, row0, &full[s]);             // 64 k x 128 rows
                lab_tma_load_2d(b, &p.b_map, col0, t * BK, &full[s]);             // 64 n x 64 k
                lab_tma_load_2d(b + STAGE_B / 2, &p.b_map, col0 + 64, t * BK, &full[s]);
            }
        }
        return;
    }

    // Consumer warpgroup wg - 1: rows (wg - 1) * 64 .. + 63 of the tile.
    float d[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) d[i] = 0.0f;
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        lab_mbar_wait(&full[s], (t / STAGES) & 1);
        const unsigned char* a = ring + s * (STAGE_A + STAGE_B) + (wg - 1) * 64 * 128;
        const unsigned char* b = ring + s * (STAGE_A + STAGE_B) + STAGE_A;
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            // A: K-major, 8-row groups 1024 B apart, k16 steps 32 B along the row.
            // B: MN-major, 64-column halves 8 KB apart (LBO), 8-row k groups 1024 B apart (SBO),
            //    k16 steps two groups on.
            lab_wgmma_64x128x16(d, lab_desc(a + 32 * kk, 16, 1024), lab_desc(b + 2048 * kk, STAGE_B / 2, 1024));
        }
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
        if (tid == 0) lab_mbar_arrive(&empty[s]);
    }

    // d[4j + e]: warp w of the warpgroup holds rows 16w + g (e = 0, 1) and 16w + g + 8 (e = 2, 3),
    // columns 8j + 2t + (e & 1).
    float* C = lab_ptr<float>(p.g.c);
    const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int r = row0 + (wg - 1) * 64 + 16 * w + g + 8 * (e >> 1), c = col0 + 8 * j + 2 * tq + (e & 1);
            if (r < p.g.m && c < p.g.n) C[(size_t)r * p.g.ldc + c] = d[4 * j + e];
        }
}
