//! A matrix copied to a wider row pitch, zeros past each row: what the TMA path needs (16-byte
//! pitches) and what lets the SGEMM rungs with PAD_ROWS load whole float4s at any shape.

use crate::gpu::cuda::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};

use crate::error::Result;
use crate::gpu::device::{Gpu, Kernel};
use crate::gpu::ffi::lab_pad_args;

/// The row pitch, in elements, of `cols` elements of `size` bytes: the rows themselves where
/// their length is a multiple of `keep` bytes (what the reader needs), else padded to whole
/// 128-byte lines (a copy is made anyway, and whole lines cost no extra sector a row).
pub fn line_pitch(cols: usize, size: usize, keep: usize) -> usize {
    if cols * size % keep == 0 {
        cols
    } else {
        cols.next_multiple_of(128 / size)
    }
}

/// The device address of `src` (rows x cols elements, packed) at row pitch `ld` elements: `src`
/// itself when ld == cols, else a pitched copy into `dst` (allocated on first use) by the
/// kernel module's `lab_pad_rows` (which moves bytes) on the lab's stream.
pub fn pitched<T: DeviceRepr>(
    gpu: &Gpu,
    kernel: &Kernel,
    src: &CudaSlice<T>,
    dst: &mut Option<CudaSlice<T>>,
    rows: usize,
    cols: usize,
    ld: usize,
) -> Result<u64> {
    let (from, _from) = src.device_ptr(&gpu.stream);
    if ld == cols {
        return Ok(from);
    }
    if dst.is_none() {
        // SAFETY: every element is written by the pad kernel below before the GEMM reads it.
        *dst = Some(unsafe { gpu.stream.alloc::<T>(rows * ld) }?);
    }
    let (to, _to) = dst.as_mut().expect("allocated above").device_ptr_mut(&gpu.stream);
    let size = std::mem::size_of::<T>();
    let args = lab_pad_args { src: from, dst: to, rows: rows as u64, cols: (cols * size) as u64, ld: (ld * size) as u64 };
    let chunks = (rows * ld * size / 16) as u64;
    let grid = chunks.div_ceil(256).min(gpu.info.sms as u64 * 16) as u32;
    // SAFETY: lab_pad_rows takes lab_pad_args in bytes; src holds rows x cols and dst rows x ld
    // elements of `size` bytes, and ld * size is a multiple of 16 (the callers' pitches).
    unsafe { kernel.launch_helper("lab_pad_rows", &gpu.stream, grid, 256, &args) }?;
    Ok(to)
}
