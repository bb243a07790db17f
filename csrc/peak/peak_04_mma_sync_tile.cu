// Technique: the mma.sync GEMM rung's k loop without its data (fp16 -> fp32, sm_80 and later): one
//   256-thread block an SM, each warp's 64 x 64 tile of 32 accumulators fed as fp16_04 feeds them,
//   one ingredient more at each FEED: 0 the fragments in registers; 1 the fragments read by
//   ldmatrix.x4 from a swizzled stage of 128 x 32 of A and 32 x 256 of B, double-buffered (the next
//   k16 step's read while this one's mmas run); 2 and a block barrier every k-tile (two k16 steps);
//   3 and six 16-byte cp.async a thread a k-tile, waited for one k-tile later, as the ring's; 4 the
//   same copies reading nothing (src-size 0 zero-fills their 16 bytes): shared memory's writes
//   and the copies' issue without L2's reads, so 3 against 4 parts what the copies cost.
// Teaches: which ingredient costs the rung its distance from peak_02's rate, each a step of the
//   ladder timed alone; the rung itself adds the ring's moving stages, the copies' addresses and
//   bounds, and real data (power).
// Limits: A holds a and B's k-rows 0-15 b, 16-31 -b, so a k-tile is a pair D += A.B, D += A.(-B);
//   a task is (ITERS - 1) / 2 k-tiles and a closing D += A.B, so each accumulator ends at
//   c + (tasks its warp ran) x 16ab, exactly (CHAINS = 32 accumulators of ACC = 4). FEED 3's
//   copies fetch the same 24 KiB a block every k-tile (L2 hits): their issue, L2's traffic and
//   their wait are timed, not DRAM's.
#include "lab_peak.h"
#include "cp_async.cuh"
#include "mma_tiles.cuh"

static_assert(BLOCK_X == 256 && BLOCK_Y == 1 && BLOCK_Z == 1 && BLOCKS_PER_SM == 1, "one 256-thread block an SM, as the rung");
static_assert(PREC == LAB_FP16_F32ACC && CHAINS == 32 && ITERS % 2 == 1 && FEED >= 0 && FEED <= 4, "fp16 -> fp32, a 64 x 64 warp tile");

constexpr int BM = 128, BN = 256, BK = 32, MT = 4, NT = 8;

// The rung's stages (fp16_04): 16-byte chunk c of row r of A's 32-wide and B's 256-wide rows.
__device__ __forceinline__ int a_off(int r, int c) { return lab_swizzle16<BK>(r, c); }
__device__ __forceinline__ int b_off(int r, int c) { return lab_swizzle16<BN>(r, c); }

struct Frags {
    unsigned a[MT][4], b[NT / 2][4];
};

// One k16 step's fragments (k rows kk .. kk + 15 of the stage), as the rung reads them.
__device__ __forceinline__ void load(Frags& f, const unsigned short* A, const unsigned short* B, int kk, int wr, int wc, int lane) {
#pragma unroll
    for (int i = 0; i < MT; ++i) lab_ldmatrix_x4(f.a[i], A + a_off(wr + 16 * i + (lane & 15), (kk >> 3) + (lane >> 4)));
#pragma unroll
    for (int j = 0; j < NT / 2; ++j) lab_ldmatrix_x4_trans(f.b[j], B + b_off(kk + (lane & 15), ((wc + 16 * j) >> 3) + (lane >> 4)));
}

__device__ __forceinline__ void step(float (&d)[MT][NT][4], const Frags& f) {
#pragma unroll
    for (int i = 0; i < MT; ++i) lab_mma_row<NT>(d[i], f.a[i], f.b, i % 2);
}

// inputs: [0] a in both halves, [1] b, [2] -b, [3] c as fp32.
extern "C" __global__ void __launch_bounds__(BLOCK_X) peak_04_mma_sync_tile(lab_peak_args p) {
    __shared__ __align__(128) unsigned short A[BM * BK], B[BK * BN];
#if FEED >= 3
    constexpr int COPIES = 6;  // the rung's copies a thread a k-tile
    __shared__ __align__(16) uint4 scratch[COPIES][BLOCK_X];  // where they land
    // Their sources: 16 bytes a thread and copy in out's floats past the grid's threads (the host
    // allocates 32 x 1024 a SM), the block's own 24 KiB, the same every k-tile (so L2 hits).
    const float* src = lab_ptr<const float>(p.out) + ((size_t)gridDim.x + blockIdx.x * COPIES) * BLOCK_X * 4 + threadIdx.x * 4;
#endif
    const uint64_t* in = lab_ptr<const uint64_t>(p.inputs);
    const unsigned a = (unsigned)in[0], up = (unsigned)in[1], down = (unsigned)in[2];
    for (int e = threadIdx.x; e < BM * BK / 2; e += BLOCK_X) reinterpret_cast<unsigned*>(A)[e] = a;
    for (int e = threadIdx.x; e < BK * BN / 2; e += BLOCK_X) reinterpret_cast<unsigned*>(B)[e] = e < 16 * BN / 2 ? up : down;
    __syncthreads();
    const unsigned c_image = (unsigned)in[3];
    const float c = __uint_as_float(c_image);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wr = (warp / 4) * 64, wc = (warp % 4) * 64;
    float d[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) d[i][j][r] = c;
    Frags plus, minus;  // FEED 0: each step's fragments, read once; else the double buffer
    load(plus, A, B, 0, wr, wc, lane);
    load(minus, A, B, 16, wr, wc, lane);
    const uint64_t warps = (uint64_t)gridDim.x * BLOCK_X / 32;
    // Task t goes to warp t mod warps; with tasks a multiple of 8 (the manifest's multiple_of where
    // FEED >= 2) a block's warps run as many, so they all meet at every barrier.
    for (uint64_t t = blockIdx.x * (BLOCK_X / 32) + warp; t < p.tasks; t += warps) {
        for (int k = 0; k < ITERS / 2; ++k) {
#if FEED >= 2
#if FEED >= 3
            lab_cp_async_wait<1>();
#endif
            __syncthreads();
#endif
#if FEED >= 1
            step(d, plus);
            load(plus, A, B, 0, wr, wc, lane);  // the next k-tile's first step, while -b's mmas run
#if FEED >= 3
#pragma unroll
            for (int q = 0; q < COPIES; ++q) lab_cp_async16(&scratch[q][threadIdx.x], src + q * BLOCK_X * 4, FEED == 3 ? 16 : 0);
            lab_cp_async_commit();
#endif
            step(d, minus);
            load(minus, A, B, 16, wr, wc, lane);
#else
            step(d, plus);
            step(d, minus);
#endif
        }
        step(d, plus);
    }
#if FEED >= 3
    lab_cp_async_wait<0>();
#endif
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) s += d[i][j][r];
    lab_ptr<float>(p.out)[blockIdx.x * BLOCK_X + threadIdx.x] = (float)s;
}
