// The Hopper GEMM's copy primitives: tensor-map (TMA) loads into shared memory, alone or
// multicast to every block of a cluster, TMA stores of C's boxes, and the cluster-wide mbarrier
// arrival and barrier a pair of blocks needs. bulk_async.cuh holds the mbarrier itself; these add
// the tensor-map forms. Every copy is issued by one thread and completes on an mbarrier (loads) or
// in the thread's bulk group (stores), so none of them costs the issuing warp registers.
#pragma once
#include "lab_gemm.h"
#include "bulk_async.cuh"

__device__ __forceinline__ void lab_tma_load_2d(void* smem, const lab_tma* map, int c0, int c1, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
            lab_smem_addr(smem)),
        "l"(map), "r"(c0), "r"(c1), "r"(lab_smem_addr(bar))
        : "memory");
}

__device__ __forceinline__ void lab_tma_load_3d(void* smem, const lab_tma* map, int c0, int c1, int c2, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
            lab_smem_addr(smem)),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(lab_smem_addr(bar))
        : "memory");
}

// The same box into the same offset of every block of the cluster (mask: one bit a block), each
// block's mbarrier at `bar`'s offset told of the bytes it received.
__device__ __forceinline__ void lab_tma_multicast_2d(void* smem, const lab_tma* map, int c0, int c1, uint64_t* bar, unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], "
        "%5;\n" ::"r"(lab_smem_addr(smem)),
        "l"(map), "r"(c0), "r"(c1), "r"(lab_smem_addr(bar)), "h"(mask)
        : "memory");
}

// A box of shared memory (laid out as the map's swizzle has it) to global memory at {c0, c1}, in
// this thread's bulk group; the rows and columns past the tensor's edges are not written.
__device__ __forceinline__ void lab_tma_store_2d(const lab_tma* map, const void* smem, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map),
                 "r"(c0), "r"(c1), "r"(lab_smem_addr(smem))
                 : "memory");
}

// Arrives on the mbarrier at `bar`'s offset in every block of a cluster of CY blocks: a stage is
// free only when the consumers of every block that the stage's multicast writes into have
// released it. One block arrives on its own barrier alone.
template <int CY>
__device__ __forceinline__ void lab_mbar_arrive_cluster(uint64_t* bar) {
    if constexpr (CY == 1) {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(lab_smem_addr(bar)) : "memory");
    } else {
        // CTA-scope release, as CUTLASS's ClusterBarrier arrives: the consumers' reads of the stage
        // were by wgmma, complete once its wait returned; a cluster-scope release costs far more.
#pragma unroll
        for (unsigned r = 0; r < CY; ++r) {
            asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                         "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(lab_smem_addr(bar)),
                         "r"(r)
                         : "memory");
        }
    }
}

// Every thread of every block of the cluster: mbarriers initialised before any multicast reaches
// them, and no block gone while another may still arrive on its barriers.
__device__ __forceinline__ void lab_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
