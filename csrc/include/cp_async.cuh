// cp.async (sm_80 and later): copies from global to shared memory that bypass registers and
// complete asynchronously, in groups a thread can wait for.
#pragma once
#include "lab_device.cuh"

// 16 bytes from gmem to smem; when src_bytes is 0 the 16 bytes are zero-filled instead (edges).
__device__ __forceinline__ void lab_cp_async16(void* smem, const void* gmem, int src_bytes) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}

// 4 bytes, through L1 (.cg takes only 16): a single float to any shared address, so a copy can
// transpose a tile on its way in and needs no alignment; zero-filled where src_bytes is 0.
__device__ __forceinline__ void lab_cp_async4(void* smem, const void* gmem, int src_bytes) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}

__device__ __forceinline__ void lab_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void lab_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
