//! The bindgen output for `csrc/include/lab.h`: the argument structs kernels take by value.
//! It is generated ahead of time and committed (`lab_ffi.rs`), so building the library needs
//! neither libclang nor CUDA; `tests/ffi.rs` fails when it differs from what bindgen makes of
//! lab.h now (`cargo make ffi` rewrites it), and its compile-time layout assertions hold every
//! struct to the size, alignment and offsets clang gave it.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]

include!("lab_ffi.rs");

/// A lab.h argument struct, which a kernel entry takes by value: `NAME` is its C name, the one the
/// family's protocol gives a launch (`facts::launch::abi`) and the build holds every kernel's
/// signature to. `Kernel::launch` takes only these, and refuses one its kernel does not take.
///
/// # Safety
/// `NAME` must be the C name of the struct the type is bindgen's layout of: the launch trusts it.
pub unsafe trait Abi: cudarc::driver::DeviceRepr {
    const NAME: &'static str;
}

macro_rules! abi {
    ($($t:ident),* $(,)?) => {$(
        // SAFETY: a plain C struct of integers and floats with the layout bindgen checked against
        // lab.h, the header the kernels are compiled with, so passing it by value matches the
        // parameter of a kernel that takes it (which `Kernel::launch` checks by NAME).
        unsafe impl cudarc::driver::DeviceRepr for $t {}
        // SAFETY: NAME is the C name of the struct, written by the same token.
        unsafe impl Abi for $t {
            const NAME: &'static str = stringify!($t);
        }
    )*};
}

abi!(
    lab_stream_args,
    lab_l2_args,
    lab_reduce_args,
    lab_transpose_args,
    lab_softmax_args,
    lab_softmax_bwd_args,
    lab_layernorm_args,
    lab_layernorm_bwd_args,
    lab_gemm_f32_args,
    lab_peak_args,
    lab_gemm_tc_args,
    lab_gemm_tma_args,
    lab_pad_args,
    lab_conv_args,
    lab_batchnorm_args,
);
