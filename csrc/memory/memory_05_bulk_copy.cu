// Technique: Hopper's bulk copy engine (TMA, one-dimensional). One thread per block moves CHUNK
//   bytes at a time global -> shared -> global with cp.async.bulk: STAGES chunks are loaded
//   ahead, each completing on its stage's mbarrier, and each store waits only until the
//   previous store has read its stage before that stage is refilled.
// Teaches: a copy needs bytes in flight, not threads. Two instructions per CHUNK bytes keep
//   BLOCKS_PER_SM x (STAGES - 1) x CHUNK bytes per SM in the memory system, with no registers.
// Limits: copy only (OP 0); sm_90 and later; 16-byte aligned arrays (cudaMalloc gives 256); the
//   n % 4 tail runs as scalars; STAGES x CHUNK must fit in 48 KB of static shared memory.
#include "lab_memory.h"
#include "bulk_async.cuh"
#include "stream_ops.cuh"

static_assert(OP == 0 && VEC == 4, "a copy of 16-byte words");  // a warp a block: the entry's constraint
static_assert(CHUNK % 16 == 0 && STAGES >= 2, "CHUNK bytes, a multiple of 16; at least two stages");

extern "C" __global__ void __launch_bounds__(BLOCK_X) memory_05_bulk_copy(lab_stream_args p) {
    __shared__ alignas(128) unsigned char stage[STAGES][CHUNK];
    __shared__ uint64_t full[STAGES];
    const char* src = lab_ptr<const char>(p.b);
    char* dst = lab_ptr<char>(p.a);
    const uint64_t n4 = p.n / 4, bytes = n4 * 16;
    const uint64_t chunks = (bytes + CHUNK - 1) / CHUNK;
    // The block's k-th chunk is chunk blockIdx.x + k * gridDim.x; it uses stage k % STAGES.
    auto size = [&](uint64_t c) { return (unsigned)min((uint64_t)CHUNK, bytes - c * CHUNK); };
    auto load = [&](uint64_t k) {
        const uint64_t c = blockIdx.x + k * gridDim.x;
        if (c >= chunks) return;
        uint64_t* bar = &full[k % STAGES];
        lab_mbar_expect_tx(bar, size(c));
        lab_bulk_load(stage[k % STAGES], src + c * CHUNK, size(c), bar);
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) lab_mbar_init(&full[s], 1);
        lab_mbar_init_fence();
        for (uint64_t k = 0; k < STAGES; ++k) load(k);
        for (uint64_t k = 0, c = blockIdx.x; c < chunks; ++k, c += gridDim.x) {
            lab_mbar_wait(&full[k % STAGES], (unsigned)(k / STAGES) & 1);
            lab_bulk_store(dst + c * CHUNK, stage[k % STAGES], size(c));
            lab_bulk_commit();
            if (k >= 1) {
                lab_bulk_wait_read<1>();  // the store of chunk k - 1 has read its stage
                load(k - 1 + STAGES);
            }
        }
        lab_bulk_wait_all();
    }
    if (blockIdx.x == gridDim.x - 1) lab_stream_tail(p, n4 * 4, threadIdx.x, BLOCK_X);
}
