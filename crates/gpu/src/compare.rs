//! Comparing an output with an f64 reference element by element on the GPU: what lets the GEMM
//! families check all of a 67-million-element product (8192³) in about a millisecond, where a
//! copy to the host and a CPU pass take a second and a CPU reference of every element would
//! take minutes.
//!
//! The kernel is PTX written here, like the L2 flush, and JIT-compiled by the driver: it needs
//! neither nvcc nor NVRTC. One entry per output type (fp32, s32, fp16, bf16), the same code but the load.
//! Each thread walks the elements grid-stride and keeps its own sums; one atomic per thread and
//! sum ends it (a few hundred thousand, next to 67 million loads). The f64 sums' order therefore
//! varies from run to run in the last bits, which no tolerance is near.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use super::device::Gpu;
use crate::error::Result;

/// `{NAME}`, `{SHIFT}` (log2 of the element's bytes) and `{LOAD}` (a load of element %rd10 into
/// %fd5 as f64) are filled per output type.
/// Sums, at `sums`: f64 Σ(out − ref)², f64 Σ ref², u64 max |out − ref| over finite outputs (an
/// f64's bits: non-negative doubles order as their bits do), u64 non-finite outputs, u64
/// elements beyond `bound` + `rounding` x |ref| (or non-finite: `setp.gtu` is true where |d| is
/// NaN), u64 the first such index (starts at u64::MAX).
const TEMPLATE: &str = r#"
.visible .entry {NAME}(.param .u64 out, .param .u64 ref, .param .u64 n, .param .f64 bound, .param .f64 rounding, .param .u64 sums)
{
    .reg .pred %p<4>;
    .reg .b32 %r<6>;
    .reg .f32 %f<2>;
    .reg .b16 %h<2>;
    .reg .b64 %rd<16>;
    .reg .f64 %fd<12>;

    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [ref];
    ld.param.u64 %rd3, [n];
    ld.param.f64 %fd1, [bound];
    ld.param.f64 %fd10, [rounding];
    ld.param.u64 %rd4, [sums];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd4, %rd4;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd5, %r1, %r2;
    cvt.u64.u32 %rd6, %r3;
    add.s64 %rd5, %rd5, %rd6;
    mul.wide.u32 %rd6, %r4, %r2;
    mov.f64 %fd2, 0d0000000000000000;
    mov.f64 %fd3, 0d0000000000000000;
    mov.f64 %fd4, 0d0000000000000000;
    mov.u64 %rd7, 0;
    mov.u64 %rd8, 0;
    mov.u64 %rd9, -1;
LOOP:
    setp.ge.u64 %p1, %rd5, %rd3;
    @%p1 bra DONE;
    shl.b64 %rd10, %rd5, {SHIFT};
    add.s64 %rd10, %rd1, %rd10;
    {LOAD}
    shl.b64 %rd11, %rd5, 3;
    add.s64 %rd11, %rd2, %rd11;
    ld.global.nc.f64 %fd6, [%rd11];
    sub.f64 %fd7, %fd5, %fd6;
    fma.rn.f64 %fd2, %fd7, %fd7, %fd2;
    fma.rn.f64 %fd3, %fd6, %fd6, %fd3;
    abs.f64 %fd8, %fd7;
    testp.finite.f64 %p2, %fd5;
    @!%p2 add.u64 %rd7, %rd7, 1;
    @%p2 max.f64 %fd4, %fd4, %fd8;
    abs.f64 %fd9, %fd6;
    fma.rn.f64 %fd9, %fd9, %fd10, %fd1;
    setp.gtu.f64 %p3, %fd8, %fd9;
    @%p3 add.u64 %rd8, %rd8, 1;
    @%p3 min.u64 %rd9, %rd9, %rd5;
    add.s64 %rd5, %rd5, %rd6;
    bra.uni LOOP;
DONE:
    red.global.add.f64 [%rd4], %fd2;
    red.global.add.f64 [%rd4+8], %fd3;
    mov.b64 %rd12, %fd4;
    red.global.max.u64 [%rd4+16], %rd12;
    setp.eq.u64 %p1, %rd7, 0;
    @!%p1 red.global.add.u64 [%rd4+24], %rd7;
    setp.eq.u64 %p1, %rd8, 0;
    @%p1 bra END;
    red.global.add.u64 [%rd4+32], %rd8;
    red.global.min.u64 [%rd4+40], %rd9;
END:
    ret;
}
"#;

/// The output types the kernel reads: (entry, load of element %rd10 as f64 into %fd5).
const TYPES: [(&str, u32, &str); 4] = [
    ("lab_compare_f32", 2, "ld.global.nc.f32 %f1, [%rd10];\n    cvt.f64.f32 %fd5, %f1;"),
    ("lab_compare_s32", 2, "ld.global.nc.s32 %r5, [%rd10];\n    cvt.rn.f64.s32 %fd5, %r5;"),
    ("lab_compare_f16", 1, "ld.global.nc.b16 %h1, [%rd10];\n    cvt.f32.f16 %f1, %h1;\n    cvt.f64.f32 %fd5, %f1;"),
    // bf16 is fp32's upper half (cvt.f32.bf16 needs sm_90's PTX).
    ("lab_compare_bf16", 1, "ld.global.nc.u16 %r5, [%rd10];\n    shl.b32 %r5, %r5, 16;\n    mov.b32 %f1, %r5;\n    cvt.f64.f32 %fd5, %f1;"),
];

/// The module's text: the header, then one entry per output type.
pub fn ptx() -> String {
    let mut text = String::from(".version 7.0\n.target sm_70\n.address_size 64\n");
    for (name, shift, load) in TYPES {
        text.push_str(&TEMPLATE.replace("{NAME}", name).replace("{SHIFT}", &shift.to_string()).replace("{LOAD}", load));
    }
    text
}

/// An output type the kernel reads: fp32, s32, fp16 or bf16.
pub trait Element: DeviceRepr {
    const ENTRY: &'static str;
}

impl Element for f32 {
    const ENTRY: &'static str = "lab_compare_f32";
}

impl Element for i32 {
    const ENTRY: &'static str = "lab_compare_s32";
}

impl Element for half::f16 {
    const ENTRY: &'static str = "lab_compare_f16";
}

impl Element for half::bf16 {
    const ENTRY: &'static str = "lab_compare_bf16";
}

/// What one comparison found (the kernel's sums).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sums {
    /// Σ(out − ref)², NaN or infinite where an output is.
    pub diff2: f64,
    /// Σ ref².
    pub ref2: f64,
    /// The largest |out − ref| over the finite outputs.
    pub worst: f64,
    pub nonfinite: u64,
    /// Elements whose |out − ref| exceeds the bound, or that are not finite.
    pub beyond: u64,
    /// The first of them.
    pub first_beyond: Option<usize>,
}

const THREADS: u32 = 256;
const BLOCKS_PER_SM: u32 = 8;

/// The loaded kernels and their six sums' buffer.
pub struct Compare {
    funcs: Vec<(&'static str, CudaFunction)>,
    sums: CudaSlice<u64>,
}

impl Compare {
    pub fn new(gpu: &Gpu) -> Result<Compare> {
        let module: Arc<_> = gpu.ctx.load_module(Ptx::from_src(ptx()))?;
        let funcs = TYPES.iter().map(|(name, _, _)| Ok((*name, module.load_function(name)?))).collect::<Result<_>>()?;
        Ok(Compare { funcs, sums: gpu.stream.alloc_zeros::<u64>(6)? })
    }

    /// Compares `out` with `reference` (the same length) and counts the elements off by more
    /// than `bound` plus `rounding` times the reference element (the share of its value a 16-bit
    /// output's rounding may move it, as the CPU's check allows); waits for the result.
    pub fn run<T: Element>(
        &mut self,
        gpu: &Gpu,
        out: &CudaSlice<T>,
        reference: &CudaSlice<f64>,
        bound: f64,
        rounding: f64,
    ) -> Result<Sums> {
        assert_eq!(out.len(), reference.len(), "an output and its reference differ in length");
        let func = &self.funcs.iter().find(|(n, _)| *n == T::ENTRY).expect("one entry per Element").1;
        gpu.stream.memcpy_htod(&[0, 0, 0, 0, 0, u64::MAX], &mut self.sums)?;
        let n = out.len() as u64;
        let (o, _o) = out.device_ptr(&gpu.stream);
        let (r, _r) = reference.device_ptr(&gpu.stream);
        let (s, _s) = self.sums.device_ptr(&gpu.stream);
        let blocks = (gpu.info.sms * BLOCKS_PER_SM).min(n.div_ceil(THREADS as u64).max(1) as u32);
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let mut b = gpu.stream.launch_builder(func);
        b.arg(&o).arg(&r).arg(&n).arg(&bound).arg(&rounding).arg(&s);
        // SAFETY: the kernel reads n elements of T at `out` and n doubles at `reference`
        // (both hold n), and updates the six 8-byte sums at `sums`; bound and rounding are f64s.
        unsafe { b.launch(cfg) }?;
        drop((_o, _r, _s));
        let v = gpu.stream.clone_dtoh(&self.sums)?;
        Ok(Sums {
            diff2: f64::from_bits(v[0]),
            ref2: f64::from_bits(v[1]),
            worst: f64::from_bits(v[2]),
            nonfinite: v[3],
            beyond: v[4],
            first_beyond: (v[4] > 0).then_some(v[5] as usize),
        })
    }
}
