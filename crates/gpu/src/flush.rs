//! Evicting L2 between timed samples with loads, so that what a sample finds in L2 is clean.
//! A memset of twice the L2 evicts the last launch's data too, but leaves the L2 full of its own
//! dirty lines for the next kernel to write back while it runs. Against ncu's time of the same
//! launches (ncu flushes and invalidates), on the H200: transpose_05 at 16384² measured +1.15%
//! after a memset and +0.26% / +0.44% after loads; the blocked 1 GiB copy +6.8% and +4.7%.
//!
//! The kernel is PTX written here (one load per 128-byte line, L2 only) and JIT-compiled by the
//! driver, so it needs neither nvcc nor NVRTC.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use super::device::Gpu;
use crate::error::Result;

/// Reads one word of each 128-byte line of `buf` (`lines` of them) with ld.global.cg, folding
/// them into a value stored only if it equals a constant the zeroed buffer never gives (so the
/// loads cannot be dropped).
const PTX: &str = r#"
.version 6.0
.target sm_50
.address_size 64

.visible .entry lab_flush_read(.param .u64 buf, .param .u64 lines, .param .u64 sink)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<9>;

    ld.param.u64 %rd1, [buf];
    ld.param.u64 %rd2, [lines];
    ld.param.u64 %rd3, [sink];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd3, %rd3;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.s64 %rd4, %rd4, %rd5;
    mul.wide.u32 %rd6, %r4, %r2;
    mov.u32 %r5, 0;
LOOP:
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra DONE;
    shl.b64 %rd7, %rd4, 7;
    add.s64 %rd8, %rd1, %rd7;
    ld.global.cg.u32 %r0, [%rd8];
    xor.b32 %r5, %r5, %r0;
    add.s64 %rd4, %rd4, %rd6;
    bra.uni LOOP;
DONE:
    setp.eq.u32 %p1, %r5, 1234567;
    @%p1 st.global.u32 [%rd3], %r5;
    ret;
}
"#;

/// Threads per block and blocks per SM of the flush: enough loads in flight to run at DRAM speed.
const THREADS: u32 = 256;
const BLOCKS_PER_SM: u32 = 8;

/// A buffer of twice the L2 and the kernel that reads it.
pub struct Flush {
    buf: CudaSlice<u8>,
    sink: CudaSlice<u32>,
    func: CudaFunction,
    blocks: u32,
}

impl Flush {
    pub fn new(gpu: &Gpu) -> Result<Flush> {
        let bytes = (2 * gpu.info.l2_bytes as usize).max(8 << 20);
        let module: Arc<_> = gpu.ctx.load_module(Ptx::from_src(PTX))?;
        Ok(Flush {
            buf: gpu.stream.alloc_zeros::<u8>(bytes)?,
            sink: gpu.stream.alloc_zeros::<u32>(1)?,
            func: module.load_function("lab_flush_read")?,
            blocks: gpu.info.sms * BLOCKS_PER_SM,
        })
    }

    /// Queues the flush on the GPU's stream.
    pub fn run(&self, gpu: &Gpu) -> Result<()> {
        let (buf, _b) = self.buf.device_ptr(&gpu.stream);
        let (sink, _s) = self.sink.device_ptr(&gpu.stream);
        let lines = (self.buf.len() / 128) as u64;
        let cfg = LaunchConfig { grid_dim: (self.blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let mut b = gpu.stream.launch_builder(&self.func);
        b.arg(&buf).arg(&lines).arg(&sink);
        // SAFETY: the kernel reads `lines` 128-byte lines of `buf`, which holds that many, and may
        // write one u32 to `sink`.
        unsafe { b.launch(cfg) }?;
        Ok(())
    }
}
