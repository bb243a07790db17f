// The Hopper GEMM's stage ring: a place in a ring of S stages (the stage of a k-tile and the
// parity of its round), moved on one k-tile (or n) at a time, and the consumer's wait for a stage.
// Other depths than a power of two keep the stage and parity themselves, as CUTLASS's pipeline
// state does: computed as it % S and it / S every k-tile, a ring of 3, 5 or 6 stages takes 8% more
// cycles than one of 4, even with no loads. A power of two keeps the count, whose division is a
// mask and a shift: with the cursor there, ptxas schedules fp16_08's 4-stage loop 1.5% slower at
// 4096^3.
#pragma once
#include "wgmma.cuh"

template <int S, bool POW2 = (S & (S - 1)) == 0>
struct lab_ring;

template <int S>
struct lab_ring<S, true> {
    static constexpr int stages = S;
    int it = 0;
    __device__ __forceinline__ int s() const { return it % S; }
    __device__ __forceinline__ unsigned ph() const { return (it / S) & 1; }
    __device__ __forceinline__ void next() { ++it; }
    __device__ __forceinline__ void skip(int n) { it += n; }
    __device__ __forceinline__ int back(int k) const { return (it - k) % S; }  // the stage k k-tiles ago
};

template <int S>
struct lab_ring<S, false> {
    static constexpr int stages = S;
    int st = 0;
    unsigned par = 0;
    __device__ __forceinline__ int s() const { return st; }
    __device__ __forceinline__ unsigned ph() const { return par; }
    __device__ __forceinline__ void next() {
        if (++st == S) st = 0, par ^= 1;
    }
    __device__ __forceinline__ void skip(int n) {
        par ^= (unsigned)((st + n) / S) & 1;
        st = (st + n) % S;
    }
    __device__ __forceinline__ int back(int k) const { return st >= k ? st - k : st - k + S; }  // the stage k k-tiles ago
};

// Waits until the k-tile at `r` has landed; its stage, and the descriptors of its first A and B
// rows there (stage s lies s * STAGE_BYTES past stage 0, whose descriptors are da0 and db0).
template <int STAGE_BYTES, class Ring>
__device__ __forceinline__ int lab_stage_full(uint64_t* full, const Ring& r, uint64_t da0, uint64_t db0, uint64_t& a, uint64_t& b) {
    const int s = r.s();
    lab_mbar_wait(&full[s], r.ph());
    a = lab_desc_add(da0, s * (STAGE_BYTES / 16)), b = lab_desc_add(db0, s * (STAGE_BYTES / 16));
    return s;
}
