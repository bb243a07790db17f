/* The ABI shared by the lab's kernels and its Rust host: argument structs passed by value, one
 * header per family. This file gathers them for bindgen (its only input), so a layout change
 * reaches Rust as a compile error. Kernels include their own family's header, never this one: a
 * tuning is keyed by the text of every header its kernel includes, so a change to one family's
 * arguments leaves every other family's tunings current. */
#ifndef KERNEL_LAB_H
#define KERNEL_LAB_H

#include "lab_base.h"
#include "lab_memory.h"
#include "lab_l2.h"
#include "lab_reduce.h"
#include "lab_transpose.h"
#include "lab_softmax.h"
#include "lab_softmax_bwd.h"
#include "lab_layernorm.h"
#include "lab_layernorm_bwd.h"
#include "lab_gemm.h"
#include "lab_conv.h"
#include "lab_batchnorm.h"
#include "lab_peak.h"

#endif
