// Technique: rung 1 with a STAGES-deep cp.async pipeline (rung 2; sm_80 and later): each k-step's
//   slice of A (gathered from the image, a tap's 8 channels a 16-byte copy, zero-filled by the
//   copy itself in the padding) and of the filters stream into a ring of shared-memory stages,
//   STAGES - 1 ahead of the math; B stays as the filters lie, column-major, for WMMA's col loads.
// Teaches: the gather costs no registers and no waiting once it is a copy in flight, and a
//   filter tile needs no transpose when the fragment load reads it column-major.
// Limits: c must be a multiple of 8 (the stem's 3 channels go to rung 1); WMMA's fragments, no
//   ldmatrix or swizzle; the stages live in static shared memory, under 48 KB.
#include "conv_implicit.cuh"
#include "cp_async.cuh"
#include "wmma_col.cuh"

#define THREADS (BLOCK_X)
#define WARPS (THREADS / 32)
#define PAD 8
// 16-byte groups of A's slice each thread copies per k-step (variants.toml keeps it whole).
#define A_GROUPS (BM * BK / 8 / THREADS)

struct lab_stage {
    unsigned short a[BM][BK + PAD];  // output pixels x taps
    unsigned short b[BN][BK + PAD];  // filters x taps: B column-major
};
struct lab_smem {
    union {
        lab_stage st[STAGES];
        float c[WARPS][16][16 + 4];  // the epilogue's per-warp staging tile
    };
};

// Issues the copies of the k0 slice into one stage.
__device__ __forceinline__ void load_stage(const lab_conv_args& p, lab_stage& st, const lab_window (&win)[A_GROUPS], int col0, int k0, int depth) {
    const unsigned short* X = lab_ptr<const unsigned short>(p.src);
    const unsigned short* W = lab_ptr<const unsigned short>(p.filter);
#pragma unroll
    for (int g = 0; g < A_GROUPS; ++g) {
        const int v = threadIdx.x + g * THREADS, r = v / (BK / 8), c = (v % (BK / 8)) * 8;
        const long long at = lab_tap_at(p, win[g], k0 + c, depth);
        lab_cp_async16(&st.a[r][c], at < 0 ? X : X + at, at < 0 ? 0 : 16);
    }
    for (int v = threadIdx.x; v < BN * BK / 8; v += THREADS) {
        const int n = v / (BK / 8), c = (v % (BK / 8)) * 8;
        const bool ok = col0 + n < p.k && k0 + c < depth;
        lab_cp_async16(&st.b[n][c], ok ? W + (size_t)(col0 + n) * depth + k0 + c : W, ok ? 16 : 0);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) conv_fp16_02_cp_async(lab_conv_args p) {
    __shared__ __align__(128) lab_smem s;
    const int depth = p.r * p.s * p.c, tiles = (depth + BK - 1) / BK;
    const int row0 = blockIdx.x * BM, col0 = blockIdx.y * BN;
    const int warp = threadIdx.x / 32;
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;
    lab_window win[A_GROUPS];
#pragma unroll
    for (int g = 0; g < A_GROUPS; ++g) win[g] = lab_window_of(p, row0 + (threadIdx.x + g * THREADS) / (BK / 8));
    lab_frag_c acc[WM / 16][WN / 16];
#pragma unroll
    for (int i = 0; i < WM / 16; ++i)
#pragma unroll
        for (int j = 0; j < WN / 16; ++j) lab_fill(acc[i][j], 0.0f);

#pragma unroll
    for (int t = 0; t < STAGES - 1; ++t) {
        if (t < tiles) load_stage(p, s.st[t], win, col0, t * BK, depth);
        lab_cp_async_commit();  // empty groups keep the count uniform
    }
    for (int t = 0; t < tiles; ++t) {
        lab_cp_async_wait<STAGES - 2>();  // tile t has landed (this thread's copies)...
        __syncthreads();                  // ...everyone's, and stage (t - 1) % STAGES is free
        const int next = t + STAGES - 1;
        if (next < tiles) load_stage(p, s.st[next % STAGES], win, col0, next * BK, depth);
        lab_cp_async_commit();
        const lab_stage& st = s.st[t % STAGES];
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            lab_frag_a a[WM / 16];
            lab_frag_b b[WN / 16];
#pragma unroll
            for (int i = 0; i < WM / 16; ++i) lab_load_a_shared(a[i], &st.a[wr + 16 * i][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < WN / 16; ++j) lab_load_b_col_shared(b[j], &st.b[wc + 16 * j][kk], BK + PAD);
#pragma unroll
            for (int i = 0; i < WM / 16; ++i)
#pragma unroll
                for (int j = 0; j < WN / 16; ++j) lab_wmma_row_col(acc[i][j], a[i], b[j]);
        }
    }
    lab_cp_async_wait<0>();
    __syncthreads();  // the stages are free for the epilogue's staging tiles
    lab_conv_store(p, acc, row0 + wr, col0 + wc, &s.c[warp][0][0]);
}
