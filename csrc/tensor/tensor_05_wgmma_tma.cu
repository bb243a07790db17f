// Technique: Hopper's warpgroup MMA fed by the tensor copy engine (rung 5; sm_90a): a producer
//   warpgroup whose one elected thread issues cp.async.bulk.tensor (TMA) copies of A (128 x 64) and
//   B (64 x BN) tiles into a STAGES-deep ring of 128-byte-swizzled shared memory, each stage
//   completing on a "full" mbarrier; two consumer warpgroups, each multiplying 64 rows of the tile
//   with wgmma.mma_async m64nBNk16 straight from shared memory (descriptors, no registers for A or
//   B). Each consumer keeps one k-tile of wgmmas in flight and releases a stage on its "empty"
//   mbarrier once the wgmmas that read it have completed. setmaxnreg moves registers from the
//   producer (which needs few) to the consumers (which hold BN/2 accumulators per thread), and
//   blocks are rasterised in groups of GROUP_M tile rows so a wave's A and B stay in L2.
// Teaches: the Hopper pipeline. Copies need one thread and no registers; the math is issued
//   asynchronously by 128 threads at a time; the two only meet at mbarriers.
// Limits: A is K-major (row-major A), B is MN-major (row-major B, wgmma's transpose flag); TMA needs
//   16-byte-aligned row strides, so the host gives unaligned inputs a padded pitch first with
//   lab_pad_rows_u16 (pad_rows.cuh, in this module); the edges of m, n and k are zero-filled by
//   TMA; one tile per block (not persistent, no clusters or multicast); C goes through shared
//   memory with plain stores (C's rows need not be 16-byte aligned, which a TMA store would need).
#include "pad_rows.cuh"
#include "wgmma.cuh"

#define STAGE_A (BM * BK * 2)
#define STAGE_B (BK * BN * 2)
#define CHUNK_B (BK * 64 * 2)  // B arrives in 64-column chunks: 128-byte rows for the swizzle
#define CPITCH (BN + 8)        // C staged in the ring: 32 bytes of padding keep float2 stores conflict-free
static_assert(BLOCK_X == 384 && BLOCK_Y == 1 && BLOCK_Z == 1, "one producer and two consumer warpgroups");
static_assert(BM == 128 && BK == 64 && (BN == 128 || BN == 256), "two m64nBNk16 consumers, 128-byte rows for the swizzle");
static_assert(STAGES >= 2 && STAGES * (STAGE_A + STAGE_B) + 1024 <= LAB_DYN_SMEM, "the ring fits the dynamic shared memory");
static_assert(GROUP_M >= 1, "tile rows per rasterisation group");
static_assert(STAGES * (STAGE_A + STAGE_B) >= BM * CPITCH * 4, "the ring holds the staged C tile");

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

// d += A (64 x 16, K-major) * B (16 x N, MN-major: transposed), both from shared memory; the
// accumulator array's length picks N.
__device__ __forceinline__ void lab_wgmma(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " LAB_WGMMA_D64 ", %64, %65, p, 1, 1, 0, 1;\n}\n"
                 : LAB_WGMMA_OUT64(LAB_F, d)
                 : "l"(da), "l"(db));
}

__device__ __forceinline__ void lab_wgmma(float (&d)[128], uint64_t da, uint64_t db) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " LAB_WGMMA_D128 ", %128, %129, p, 1, 1, 0, 1;\n}\n"
                 : LAB_WGMMA_OUT128(LAB_F, d)
                 : "l"(da), "l"(db));
}

extern "C" __global__ void __launch_bounds__(384, 1) tensor_05_wgmma_tma(const __grid_constant__ lab_gemm_tma_args p) {
    extern __shared__ unsigned char dyn[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    // 128-byte swizzling repeats every 1024 bytes: the ring starts on such a boundary.
    unsigned char* ring = dyn + ((1024 - (lab_smem_addr(dyn) & 1023)) & 1023);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    // Grouped rasterisation: consecutive blocks walk GROUP_M tile rows down one tile column.
    const int id = blockIdx.y * gridDim.x + blockIdx.x, per_group = GROUP_M * gridDim.x;
    const int first = id / per_group * GROUP_M, rows = min((int)gridDim.y - first, GROUP_M);
    const int row0 = (first + id % per_group % rows) * BM, col0 = id % per_group / rows * BN;
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
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (tid == 0) {
            for (int t = 0; t < tiles; ++t) {
                const int s = t % STAGES;
                if (t >= STAGES) lab_mbar_wait(&empty[s], ((t / STAGES) - 1) & 1);
                unsigned char* a = ring + s * (STAGE_A + STAGE_B);
                unsigned char* b = a + STAGE_A;
                lab_mbar_expect_tx(&full[s], STAGE_A + STAGE_B);
                lab_tma_load_2d(a, &p.a_map, t * BK, row0, &full[s]);  // 64 k x 128 rows
#pragma unroll
                for (int c = 0; c < BN / 64; ++c) lab_tma_load_2d(b + c * CHUNK_B, &p.b_map, col0 + 64 * c, t * BK, &full[s]);
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");

    // Consumer warpgroup wg - 1: rows (wg - 1) * 64 .. + 63 of the tile.
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
    for (int t = 0; t < tiles; ++t) {
        const int s = t % STAGES;
        lab_mbar_wait(&full[s], (t / STAGES) & 1);
        const unsigned char* a = ring + s * (STAGE_A + STAGE_B) + (wg - 1) * 64 * 128;
        const unsigned char* b = ring + s * (STAGE_A + STAGE_B) + STAGE_A;
        lab_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            // A: K-major, 8-row groups 1024 B apart, k16 steps 32 B along the row.
            // B: MN-major, 64-column chunks CHUNK_B apart (LBO), 8-row k groups 1024 B apart
            //    (SBO), k16 steps two groups on.
            lab_wgmma(d, lab_desc(a + 32 * kk, 16, 1024, LAB_SWIZZLE_128B), lab_desc(b + 2048 * kk, CHUNK_B, 1024, LAB_SWIZZLE_128B));
        }
        lab_wgmma_commit();
        // This k-tile's wgmmas stay in flight; the previous one's have finished reading its stage.
        lab_wgmma_wait<1>();
        if (t > 0 && tid == 0) lab_mbar_arrive(&empty[(t - 1) % STAGES]);
    }
    lab_wgmma_wait<0>();

    // Both consumers' wgmmas are done with the ring, so it stages C: each warp then stores runs of
    // whole rows (coalesced; 16-byte vectors where C's rows allow, scalars on the edge tiles)
    // instead of the accumulators' pieces, 8 rows of 32 bytes each, which odd rows split further.
    // d[4j + e]: warp w of the warpgroup holds rows 16w + g (e = 0, 1) and 16w + g + 8 (e = 2, 3),
    // columns 8j + 2t + (e & 1).
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    float* stage = reinterpret_cast<float*>(ring) + (wg - 1) * 64 * CPITCH;
    const int w = tid / 32, g = (tid % 32) >> 2, tq = tid & 3;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            *reinterpret_cast<float2*>(stage + (16 * w + g + 8 * h) * CPITCH + 8 * j + 2 * tq) =
                make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory");  // this warpgroup's rows are staged

    const int top = row0 + (wg - 1) * 64, height = min(64, p.g.m - top), width = min(BN, p.g.n - col0);
    float* out = lab_ptr<float>(p.g.c) + (size_t)max(top, 0) * p.g.ldc + col0;
    if ((p.g.ldc & 3) == 0 && width == BN) {
        for (int i = tid; i < height * (BN / 4); i += 128) {
            const int r = i / (BN / 4), c = i % (BN / 4) * 4;
            *reinterpret_cast<float4*>(out + (size_t)r * p.g.ldc + c) = *reinterpret_cast<const float4*>(stage + r * CPITCH + c);
        }
    } else {
        for (int i = tid; i < height * BN; i += 128) {
            const int r = i / BN, c = i % BN;
            if (c < width) out[(size_t)r * p.g.ldc + c] = stage[r * CPITCH + c];
        }
    }
}
