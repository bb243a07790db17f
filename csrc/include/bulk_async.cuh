// Hopper's bulk asynchronous copies (sm_90 and later, the TMA unit) and the mbarriers that
// signal their completion. One thread issues a copy of up to ~1 MiB; the hardware moves it.
#pragma once
#include "lab_device.cuh"

__device__ __forceinline__ unsigned lab_smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// An mbarrier that completes a phase after `count` arrivals and all expected bytes.
__device__ __forceinline__ void lab_mbar_init(uint64_t* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(lab_smem_addr(bar)), "r"(count));
}

// Makes initialised mbarriers visible to the async proxy (the TMA unit) before it signals them.
__device__ __forceinline__ void lab_mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// Arrives once and tells the barrier to also wait for `bytes` bytes of bulk copies.
__device__ __forceinline__ void lab_mbar_expect_tx(uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(lab_smem_addr(bar)), "r"(bytes) : "memory");
}

// Waits until the phase with parity `parity` has completed. The suspend-time hint (50 us, the
// value cuBLAS's Hopper kernels wait with, `NANOSLEEP.SYNCS 0xc350`) lets the warp sleep until the
// phase completes instead of polling: the 128 x 128 ping-pong takes 0.5-1% fewer cycles at 4096^3
// in fp16, 1.5% in bf16.
__device__ __forceinline__ void lab_mbar_wait(uint64_t* bar, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, 50000;\n selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(lab_smem_addr(bar)), "r"(parity)
            : "memory");
    }
}

// Global -> shared, `bytes` (a multiple of 16, both addresses 16-byte aligned); completes on `bar`.
__device__ __forceinline__ void lab_bulk_load(void* smem, const void* gmem, unsigned bytes, uint64_t* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(lab_smem_addr(smem)),
                 "l"(gmem), "r"(bytes), "r"(lab_smem_addr(bar))
                 : "memory");
}

// Shared -> global, `bytes` (a multiple of 16); completes with this thread's bulk groups.
__device__ __forceinline__ void lab_bulk_store(void* gmem, const void* smem, unsigned bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(gmem), "r"(lab_smem_addr(smem)), "r"(bytes) : "memory");
}

// Closes this thread's bulk stores issued since the last commit into one bulk group.
__device__ __forceinline__ void lab_bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Waits until at most N committed store groups may still be reading their shared memory.
template <int N>
__device__ __forceinline__ void lab_bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

// Waits until every committed store group has completed.
__device__ __forceinline__ void lab_bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
