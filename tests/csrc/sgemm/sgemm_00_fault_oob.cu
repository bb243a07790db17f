// Technique: none: a test-only kernel that writes a terabyte past C, so the launch ends with an
// illegal address and the CUDA context of its process is lost (rung 0 runs first in its family).
// Teaches: why each job runs in a worker process: the entries after it must not notice.
// Limits: it never computes anything.
#include "lab_gemm.h"
#include "lab_device.cuh"

extern "C" __global__ void sgemm_00_fault_oob(lab_gemm_f32_args p) {
    volatile float* C = lab_ptr<float>(p.c);
    C[((size_t)1 << 40) + threadIdx.x] = 1.0f;
}
