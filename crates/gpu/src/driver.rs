//! Every raw call into the CUDA driver, cuBLAS, NCCL and NVRTC that cudarc's safe layer does not
//! cover, in one place (cuBLASLt's, which keep descriptors alive between launches, in `lt`): each
//! wrapper states what it needs of its caller, and the rest of the lab calls these instead of
//! `sys` functions.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys::{
    self, CUdeviceptr, CUresult, CUstream, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave, CUtensorMapL2promotion,
    CUtensorMapSwizzle,
};
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaGraph, CudaStream};

use super::ffi::lab_tma;
use crate::error::{LabError, Result};

/// Whether the CUDA driver library can be loaded at all (cudarc panics on first use otherwise).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library by its usual names.
    unsafe { sys::is_culib_present() }
}

/// "13.0"
pub fn driver_version() -> Result<String> {
    let mut v = 0i32;
    // SAFETY: writes one int; callers check driver_present first.
    unsafe { sys::cuDriverGetVersion(&mut v) }.result()?;
    Ok(format!("{}.{}", v / 1000, (v % 1000) / 10))
}

/// `stream`'s handle for a raw call, its context made current first: a raw call acts in the
/// thread's current context, which with several GPUs may be another's.
pub fn raw_stream(stream: &CudaStream) -> Result<CUstream> {
    stream.context().bind_to_thread()?;
    Ok(stream.cu_stream())
}

/// Sets `bytes` bytes at `ptr` to `value`, ordered on `stream`.
///
/// # Safety
/// `ptr` must address a live allocation of at least `bytes` bytes on `stream`'s device.
pub unsafe fn memset(ptr: CUdeviceptr, value: u8, bytes: usize, stream: &CudaStream) -> Result<()> {
    let s = raw_stream(stream)?;
    // SAFETY: the caller guarantees the range.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, value, bytes, s) }?;
    Ok(())
}

/// Copies `bytes` bytes from `src` to `dst` on one device, ordered on `stream`.
///
/// # Safety
/// Both must address live allocations of at least `bytes` bytes on `stream`'s device that do not
/// overlap.
pub unsafe fn copy(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: &CudaStream) -> Result<()> {
    let s = raw_stream(stream)?;
    // SAFETY: the caller guarantees both ranges.
    unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, s) }?;
    Ok(())
}

/// Copies `bytes` bytes from `src` (in `src_ctx`) to `dst` (in `dst_ctx`), ordered on `stream`.
///
/// # Safety
/// As for `copy`, each pointer in its own context.
pub unsafe fn copy_peer(
    dst_ctx: &CudaContext,
    dst: CUdeviceptr,
    src_ctx: &CudaContext,
    src: CUdeviceptr,
    bytes: usize,
    stream: &CudaStream,
) -> Result<()> {
    let s = raw_stream(stream)?;
    // SAFETY: the caller guarantees both ranges; both contexts are live.
    unsafe { cudarc::driver::result::memcpy_peer_async(dst_ctx.cu_ctx(), dst, src_ctx.cu_ctx(), src, bytes, s) }?;
    Ok(())
}

/// An element type a TMA tensor map moves, as the lab's families name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmaElement {
    F16,
    Bf16,
    F32,
    I32,
    /// One byte: int8, or fp8's bits.
    Byte,
}

impl TmaElement {
    fn driver(self) -> CUtensorMapDataType {
        match self {
            TmaElement::F16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TmaElement::Bf16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TmaElement::F32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            TmaElement::I32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT32,
            TmaElement::Byte => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
        }
    }
}

/// An event for timing on `ctx`'s streams (timing enabled, blocking sync off).
pub fn timing_event(ctx: &Arc<CudaContext>) -> Result<CudaEvent> {
    Ok(ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
}

/// A timing event recorded on `stream` now.
pub fn record(stream: &Arc<CudaStream>) -> Result<CudaEvent> {
    Ok(stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
}

/// Starts capturing `stream`'s work into a graph (this thread's launches only).
pub fn begin_capture(stream: &Arc<CudaStream>) -> Result<()> {
    stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    Ok(())
}

/// Ends the capture `begin_capture` started: the graph, instantiated, or None where nothing was
/// captured.
pub fn end_capture(stream: &Arc<CudaStream>) -> Result<Option<CudaGraph>> {
    Ok(stream.end_capture(sys::CUgraphInstantiate_flags(0))?)
}

/// A 2-D TMA tensor map of a row-major matrix at device address `base`: `dims` (inner first),
/// the row pitch in bytes, boxes of `boxes` elements, 128-byte swizzle, zeros outside the matrix.
/// The map only records the address; the kernel that uses it must find the matrix alive.
pub fn tensor_map_2d(ty: TmaElement, base: u64, dims: [u64; 2], pitch: u64, boxes: [u32; 2]) -> Result<lab_tma> {
    tensor_map(ty, base, &dims, &[pitch], &boxes)
}

/// A TMA tensor map of rank dims.len() (2 to 5): `strides` in bytes of every dimension but the
/// first, boxes of `boxes` elements, 128-byte swizzle, zeros outside the tensor, L2 promotion as
/// `promotion` picks for the first stride.
pub fn tensor_map(ty: TmaElement, base: u64, dims: &[u64], strides: &[u64], boxes: &[u32]) -> Result<lab_tma> {
    let mut map = lab_tma { opaque: [0; 16] };
    let elem = [1u32; 5];
    debug_assert!((2..=5).contains(&dims.len()) && strides.len() + 1 == dims.len() && boxes.len() == dims.len(), "a tensor map's rank");
    // SAFETY: lab_tma has CUtensorMap's size and alignment (128 bytes, 64-aligned); the arrays
    // hold rank or rank - 1 entries as the call requires; it reads nothing at `base`.
    let r = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map as *mut lab_tma as *mut _,
            ty.driver(),
            dims.len() as u32,
            base as *mut _,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            elem.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            promotion(strides[0]),
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if r != CUresult::CUDA_SUCCESS {
        return Err(LabError::Usage(format!("cuTensorMapEncodeTiled: {r:?} (dims {dims:?}, strides {strides:?} B, box {boxes:?})")));
    }
    Ok(map)
}

/// How far L2 widens a TMA load's misses from DRAM, by the row pitch: 256 bytes where rows start on
/// 128-byte lines, else 128, since a row that crosses lines takes the 256-byte promotion badly: the
/// 128 x 192 ping-pong rung at 4112^3 (8224-byte rows) runs 342k cycles and 0.93x cuBLAS with it,
/// 322k and 0.98x without, and unpadded 8208-byte rows (4104) 0.59x against 0.73x.
fn promotion(pitch: u64) -> CUtensorMapL2promotion {
    if pitch % 128 == 0 {
        CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B
    } else {
        CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B
    }
}

/// cuLaunchKernelEx's configuration of a launch with thread-block clusters of `cluster` blocks,
/// handed to `f` (it points at its attribute, so it lives only for the call).
fn with_cluster_config<R>(
    grid: (u32, u32, u32),
    block: [u32; 3],
    smem: u32,
    cluster: [u32; 3],
    stream: CUstream,
    f: impl FnOnce(&sys::CUlaunchConfig) -> R,
) -> R {
    let mut attr = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        // SAFETY: an all-zero union is a valid value; the cluster field is set next.
        value: unsafe { std::mem::zeroed() },
    };
    attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x: cluster[0], y: cluster[1], z: cluster[2] };
    let config = sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: grid.2,
        blockDimX: block[0],
        blockDimY: block[1],
        blockDimZ: block[2],
        sharedMemBytes: smem,
        hStream: stream,
        attrs: &mut attr,
        numAttrs: 1,
    };
    f(&config)
}

/// Launches `func` with thread-block clusters of `cluster` blocks (cuLaunchKernelEx), which
/// cudarc's launch builder does not offer.
///
/// # Safety
/// `args` must point at the kernel's parameters, each live and of the type the kernel takes;
/// `grid` must be a whole number of clusters.
pub unsafe fn launch_with_cluster(
    func: &CudaFunction,
    grid: (u32, u32, u32),
    block: [u32; 3],
    smem: u32,
    cluster: [u32; 3],
    stream: CUstream,
    args: &mut [*mut c_void],
) -> Result<()> {
    with_cluster_config(grid, block, smem, cluster, stream, |config| {
        // SAFETY: the config and its attribute outlive the call; the caller guarantees the arguments.
        unsafe { sys::cuLaunchKernelEx(config, func.cu_function(), args.as_mut_ptr(), std::ptr::null_mut()) }.result()
    })?;
    Ok(())
}

/// Launches `func` cooperatively (cuLaunchCooperativeKernel): every block of `grid` is resident
/// at once, so blocks may wait for each other (a grid barrier, a stream-K owner waiting for the
/// pieces of its tile); a grid larger than the occupancy limit (blocks an SM at this block size
/// and shared memory, times the SMs) is refused (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE). A
/// plain launch promises no such thing: blocks queued behind others' would leave a waiting block
/// waiting for good.
///
/// # Safety
/// `args` must point at the kernel's parameters, each live and of the type the kernel takes.
pub unsafe fn launch_cooperative(
    func: &CudaFunction,
    grid: (u32, u32, u32),
    block: [u32; 3],
    smem: u32,
    stream: CUstream,
    args: &mut [*mut c_void],
) -> Result<()> {
    let f = func.cu_function();
    let [bx, by, bz] = block;
    // SAFETY: the caller guarantees the arguments; the grid and block are the kernel's launch.
    unsafe { sys::cuLaunchCooperativeKernel(f, grid.0, grid.1, grid.2, bx, by, bz, smem, stream, args.as_mut_ptr()) }.result()?;
    Ok(())
}

/// How many clusters of `cluster` blocks of `func` (`block` threads, `smem` bytes of dynamic
/// shared memory each) fit on the GPU at once: what a resident grid of clusters may launch. The
/// GPCs decide, so it can be fewer than the SM count over the cluster's size.
pub fn max_active_clusters(func: &CudaFunction, block: [u32; 3], smem: u32, cluster: [u32; 3], stream: CUstream) -> Result<u32> {
    let grid = (cluster[0], cluster[1], cluster[2]);
    let mut n = 0;
    with_cluster_config(grid, block, smem, cluster, stream, |config| {
        // SAFETY: writes one int; the config and its attribute outlive the call.
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, func.cu_function(), config) }.result()
    })?;
    Ok(n.max(0) as u32)
}

/// Whether GPU `a` can map GPU `b`'s memory.
pub fn can_access_peer(a: &CudaContext, b: &CudaContext) -> bool {
    let mut ok = 0;
    // SAFETY: writes one int; both devices exist.
    let r = unsafe { sys::cuDeviceCanAccessPeer(&mut ok, a.cu_device(), b.cu_device()) };
    r == CUresult::CUDA_SUCCESS && ok == 1
}

/// Lets `a` read and write `b`'s memory (and so lets copies between them go peer to peer).
/// cudarc allocates from the device's stream-ordered memory pool (cuMemAllocAsync), which
/// context peer access does not open: b's pool is opened to a as well.
pub fn enable_peer_access(a: &CudaContext, b: &CudaContext) -> Result<()> {
    a.bind_to_thread()?;
    // SAFETY: a's context is current; b's context is live. "Already enabled" is not an error here.
    let r = unsafe { sys::cuCtxEnablePeerAccess(b.cu_ctx(), 0) };
    if !matches!(r, CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
        return Err(LabError::Usage(format!("cuCtxEnablePeerAccess: {r:?}")));
    }
    let mut pool = std::ptr::null_mut();
    let access = sys::CUmemAccessDesc {
        location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: a.cu_device() },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: writes one pool handle of a live device, then sets one access descriptor on it.
    unsafe {
        sys::cuDeviceGetMemPool(&mut pool, b.cu_device()).result()?;
        sys::cuMemPoolSetAccess(pool, &access, 1).result()?;
    }
    Ok(())
}

/// Whether NCCL (libnccl.so.2) can be loaded.
pub fn nccl_present() -> bool {
    // SAFETY: dlopen of libnccl by its usual names only.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// "2.28.3"
pub fn nccl_version() -> String {
    let mut v = 0i32;
    // SAFETY: writes one int; callers check nccl_present first.
    unsafe { cudarc::nccl::sys::ncclGetVersion(&mut v) };
    format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
}

/// Whether cudarc's NVRTC (libnvrtc.so, by its usual names) can be loaded.
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to dlopen the NVRTC library by its usual names.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// NVRTC's (major, minor); callers check nvrtc_present first.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints.
    let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    if r != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(LabError::Unavailable(format!("nvrtcVersion failed: {r:?}")));
    }
    Ok((major, minor))
}

/// `gemm` by cuBLAS's default call, cublasGemmEx, on the handle's stream.
///
/// # Safety
/// `gemm`'s pointers must be live device allocations of its types and shapes (with their
/// leading dimensions).
pub unsafe fn gemm_ex(handle: cudarc::cublas::sys::cublasHandle_t, gemm: &super::gemm::Gemm) -> Result<()> {
    use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
    let op = |t: bool| if t { CUBLAS_OP_T } else { CUBLAS_OP_N };
    let g = gemm;
    if g.gelu_bias.is_some() {
        return Err(LabError::Unavailable("cublasGemmEx has no epilogue: cuBLASLt runs a fused GEMM".into()));
    }
    // SAFETY: the caller guarantees every pointer and shape; alpha and beta are 4 bytes of the
    // compute type's scale type.
    unsafe {
        cudarc::cublas::result::gemm_ex(
            handle,
            op(g.trans.0),
            op(g.trans.1),
            g.m as i32,
            g.n as i32,
            g.k as i32,
            g.alpha_beta.0.as_ptr() as *const c_void,
            g.a.0 as *const _,
            g.a.1,
            g.a.2 as i32,
            g.b.0 as *const _,
            g.b.1,
            g.b.2 as i32,
            g.alpha_beta.1.as_ptr() as *const c_void,
            g.c.0 as *mut _,
            g.c.1,
            g.c.2 as i32,
            g.compute,
            cudarc::cublas::sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
    }?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_narrows_for_rows_that_cross_lines() {
        use CUtensorMapL2promotion::{CU_TENSOR_MAP_L2_PROMOTION_L2_128B as P128, CU_TENSOR_MAP_L2_PROMOTION_L2_256B as P256};
        // 4096 and a 128-byte padded pitch (4160 fp16) keep 256; 4112 (8224 B) and 4128 (8256 B) do not.
        for (pitch, want) in [(8192, P256), (8320, P256), (128, P256), (8224, P128), (8256, P128), (8208, P128)] {
            assert_eq!(promotion(pitch), want, "pitch {pitch}");
        }
    }
}
