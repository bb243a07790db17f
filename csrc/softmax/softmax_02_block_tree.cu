// Technique: a block a row (rung 2). Threads stride over the row, coalesced, and the block
// combines their partial max, then their partial sums, with a tree in shared memory; then every
// thread writes its strided share.
// Teaches: the block reduction: log2(BLOCK_X) halving steps, each behind a barrier, and the
// result broadcast through shared memory.
// Limits: eight barriers a reduction and two reductions a row; a row of 512 gives each of 256
// threads two elements, so the barriers, not the memory, set the pace. Rung 3 reduces in
// registers with warp shuffles.
#include "lab_softmax.h"
#include "softmax_row.cuh"

static_assert(BLOCK_Y == 1 && BLOCK_Z == 1, "a 1-D block");  // a block a row: the entry's constraint
static_assert((BLOCK_X & (BLOCK_X - 1)) == 0, "the tree halves a power of two");

// op over the block's BLOCK_X values, in every thread.
template <typename Op>
__device__ __forceinline__ float block_tree(float v, Op op, float* tree) {
    tree[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int half = BLOCK_X / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) tree[threadIdx.x] = op(tree[threadIdx.x], tree[threadIdx.x + half]);
        __syncthreads();
    }
    const float all = tree[0];
    __syncthreads();  // everyone has read tree[0] before the next reduction writes it
    return all;
}

extern "C" __global__ void __launch_bounds__(BLOCK_X) softmax_02_block_tree(lab_softmax_args p) {
    __shared__ float tree[BLOCK_X];
    const float* x = lab_ptr<const float>(p.src) + (size_t)blockIdx.x * p.cols;
    float* y = lab_ptr<float>(p.dst) + (size_t)blockIdx.x * p.cols;
    float m = -LAB_INF;
    for (int j = threadIdx.x; j < p.cols; j += BLOCK_X) m = fmaxf(m, x[j]);
    m = block_tree(m, lab_max_op{}, tree);
    float s = 0.0f;
    for (int j = threadIdx.x; j < p.cols; j += BLOCK_X) s += lab_softmax_exp(x[j], m);
    const float inv = lab_softmax_inv(block_tree(s, lab_sum_op{}, tree));
    for (int j = threadIdx.x; j < p.cols; j += BLOCK_X) y[j] = lab_softmax_exp(x[j], m) * inv;
}
