// Technique: none: a test-only kernel that never returns. It spins on C's first word, which the
// lab fills with NaN (0xFFFFFFFF) before every launch and nothing ever clears.
// Teaches: why a hang limit exists: only ending the process stops a kernel that spins.
// Limits: it never computes anything.
#include "lab_gemm.h"
#include "lab_device.cuh"

extern "C" __global__ void sgemm_05_fault_hang(lab_gemm_f32_args p) {
    volatile unsigned* flag = lab_ptr<unsigned>(p.c);
    while (flag[0] != 0u) {
    }
}
