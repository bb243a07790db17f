// A barrier across the whole grid, for kernels whose grid is resident (Grid::PerSm with
// `resident`: no more blocks than the GPU holds at once, so a block that waits never keeps
// another from running). Two words the host zeroes once: an arrival count, which the last block
// to arrive resets, and a generation, which it then bumps to release the others (cooperative
// groups' grid.sync() packs both into one word; the fences are the same). Reading the generation
// before arriving keeps a barrier from being released by the previous one; the fences make every
// write a block made before the barrier visible to every block after it.
// Assumes: the occupancy the host sized the grid by holds at launch; with the SMs shared (MPS, a
// partition, another kernel running) the grid may not be resident, and the wait never ends (the
// lab's hang limit ends the run).
// Costs: a round trip to L2 per block and the wait for the slowest block.
#pragma once

__device__ __forceinline__ void lab_grid_sync(unsigned* barrier) {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        volatile unsigned* generation = barrier + 1;
        const unsigned seen = *generation;
        __threadfence();
        if (atomicAdd(barrier, 1u) == gridDim.x * gridDim.y * gridDim.z - 1) {
            atomicExch(barrier, 0u);
            __threadfence();
            atomicAdd(barrier + 1, 1u);
        } else {
            while (*generation == seen) __nanosleep(32);
        }
        __threadfence();
    }
    __syncthreads();
}
