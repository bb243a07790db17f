//! The bindgen output for `csrc/include/lab.h`: the argument structs kernels take by value.
//! It is generated ahead of time and committed (`lab_ffi.rs`), so building the library needs
//! neither libclang nor CUDA; `tests/ffi.rs` fails when it differs from what bindgen makes of
//! lab.h now (`cargo make ffi` rewrites it), and its compile-time layout assertions hold every
//! struct to the size, alignment and offsets clang gave it.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]

include!("lab_ffi.rs");

// SAFETY: each is a plain C struct of integers and floats with the layout bindgen checked
// against lab.h, the header the kernels are compiled with, so passing it by value matches the
// kernel's parameter.
unsafe impl cudarc::driver::DeviceRepr for lab_stream_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_l2_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_reduce_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_transpose_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_softmax_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_softmax_bwd_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_layernorm_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_layernorm_bwd_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_gemm_f32_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_peak_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_gemm_tc_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_gemm_tma_args {}
unsafe impl cudarc::driver::DeviceRepr for lab_pad_args {}
