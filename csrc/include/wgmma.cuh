// Hopper's warpgroup MMA (wgmma, sm_90a): shared-memory matrix descriptors and the fences
// that order the asynchronous instructions. The instructions themselves live with their users.
#pragma once
#include "bulk_async.cuh"

// Swizzle modes of a descriptor (bits 62-63).
#define LAB_SWIZZLE_NONE 0
#define LAB_SWIZZLE_128B 1

// A shared-memory matrix descriptor: start address, leading and stride byte offsets (all >> 4).
__device__ __forceinline__ uint64_t lab_desc(const void* p, unsigned lbo, unsigned sbo, unsigned swizzle) {
    const uint64_t a = (uint64_t)(lab_smem_addr(p) & 0x3FFFF) >> 4;
    return a | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) | ((uint64_t)swizzle << 62);
}

// Orders register writes to the accumulators before the wgmmas that read them.
__device__ __forceinline__ void lab_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void lab_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed wgmma groups are still running.
template <int N>
__device__ __forceinline__ void lab_wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
