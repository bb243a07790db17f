/* The arguments of the transpose family, passed by value. Plain C: nvcc, NVRTC, libclang. */
#pragma once
#include "lab_base.h"

/* transpose family: dst (cols x rows) = transpose of src (rows x cols), both row-major. */
typedef struct lab_transpose_args {
    lab_dptr src;
    lab_dptr dst;
    int32_t rows;
    int32_t cols;
} lab_transpose_args;
