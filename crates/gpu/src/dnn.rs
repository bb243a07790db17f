//! cuDNN, loaded at run time where it is installed: the loader's path first, then the cuDNN 9
//! wheel of a Python environment (PyTorch's `nvidia/cudnn/lib`), or the library
//! `KERNEL_LAB_CUDNN` names. Where none loads, the baselines on it are skipped with the reason
//! (`LabError::Unavailable`); cudarc would panic on first use.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cudarc::cudnn::sys::{self, cudnnSoftmaxAlgorithm_t, cudnnSoftmaxMode_t, cudnnTensorFormat_t};
use cudarc::cudnn::{result, Cudnn, CudnnDataType, Softmax as DnnSoftmax, SoftmaxForward, TensorDescriptor};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut};

use super::device::Gpu;
use crate::error::{LabError, Result};

/// The cuDNN 9 libraries a legacy-API call needs, dependencies first (the convolutions' run on
/// the graph API's engines); cudarc's later load of `libcudnn.so.9` by name finds the main one
/// already loaded. One that does not load is passed over: its calls then fail with cuDNN's reason.
const WHEEL_LIBS: [&str; 7] = [
    "libcudnn_graph.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9",
    "libcudnn_heuristic.so.9",
    "libcudnn_ops.so.9",
    "libcudnn_cnn.so.9",
    "libcudnn.so.9",
];

/// Why a cuDNN operation a case needed could not be made, as its baseline's every launch
/// reports it: cuDNN missing is a skip with that reason; anything else (cuDNN refusing the
/// shape, no algorithm running it, a fault while one was timed) a failure.
pub fn unmade(e: &LabError) -> LabError {
    match e {
        LabError::Unavailable(why) => LabError::Unavailable(why.clone()),
        LabError::Cudnn(why) => LabError::Cudnn(why.clone()),
        e => LabError::Cudnn(e.to_string()),
    }
}

/// Where cuDNN was found, or why it was not.
pub(crate) fn loaded() -> &'static std::result::Result<(), String> {
    static FOUND: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    FOUND.get_or_init(|| {
        // SAFETY: dlopen of libcudnn by its usual names; it stays loaded for the process.
        if unsafe { cudarc::cudnn::sys::is_culib_present() } {
            return Ok(());
        }
        let dirs: Vec<PathBuf> = match std::env::var_os("KERNEL_LAB_CUDNN") {
            Some(lib) => Path::new(&lib).parent().map(Path::to_path_buf).into_iter().collect(),
            None => wheel_dirs(),
        };
        for dir in &dirs {
            for name in WHEEL_LIBS {
                // SAFETY: loading cuDNN runs its initialisers only; it stays loaded for the process.
                if let Ok(lib) = unsafe { libloading::Library::new(dir.join(name)) } {
                    std::mem::forget(lib);
                }
            }
            // SAFETY: as above.
            if unsafe { cudarc::cudnn::sys::is_culib_present() } {
                return Ok(());
            }
        }
        Err("cuDNN is not installed (not on the loader's path, in a Python environment's nvidia/cudnn/lib, or at KERNEL_LAB_CUDNN)".into())
    })
}

/// The `nvidia/cudnn/lib` folders of the Python environments in the usual places.
fn wheel_dirs() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["/usr/local/lib", "/usr/lib", "/opt/conda/lib"].iter().map(PathBuf::from).collect();
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        roots.extend(std::env::var_os(var).map(|v| Path::new(&v).join("lib")));
    }
    roots.extend(std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/lib")));
    let mut dirs = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root) else { continue };
        for python in entries.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("python3")) {
            for packages in ["dist-packages", "site-packages"] {
                let dir = python.path().join(packages).join("nvidia/cudnn/lib");
                if dir.is_dir() {
                    dirs.push(dir);
                }
            }
        }
    }
    dirs
}

pub(crate) fn dnn_err(e: cudarc::cudnn::CudnnError) -> LabError {
    LabError::Cudnn(format!("{e:?}"))
}

/// The element types the cuDNN baselines run on (fp32, and the softmax families' fp16 and
/// bf16), with the 1 and 0 that scale their outputs.
pub trait DnnElement: CudnnDataType + Copy {
    const ONE: Self;
    const ZERO: Self;
}
impl DnnElement for f32 {
    const ONE: f32 = 1.0;
    const ZERO: f32 = 0.0;
}
impl DnnElement for half::f16 {
    const ONE: half::f16 = half::f16::ONE;
    const ZERO: half::f16 = half::f16::ZERO;
}
impl DnnElement for half::bf16 {
    const ONE: half::bf16 = half::bf16::ONE;
    const ZERO: half::bf16 = half::bf16::ZERO;
}

/// cuDNN's softmax forward over the rows of a rows x cols matrix of `E` (CUDNN_SOFTMAX_ACCURATE,
/// which subtracts the row's max; the instance mode over an N x C x 1 x 1 tensor).
pub struct RowSoftmax<E: DnnElement> {
    softmax: DnnSoftmax<E>,
    desc: TensorDescriptor<E>,
    _dnn: Arc<Cudnn>,
}

impl<E: DnnElement> RowSoftmax<E> {
    pub fn new(gpu: &Gpu, rows: usize, cols: usize) -> Result<RowSoftmax<E>> {
        loaded().clone().map_err(LabError::Unavailable)?;
        let int = |d: usize| i32::try_from(d).map_err(|_| LabError::Usage(format!("{d} is over cuDNN's int dimensions")));
        let (rows, cols) = (int(rows)?, int(cols)?);
        let dnn = Cudnn::new(gpu.stream.clone()).map_err(dnn_err)?;
        let desc = dnn.create_4d_tensor::<E>(cudnnTensorFormat_t::CUDNN_TENSOR_NCHW, [rows, cols, 1, 1]).map_err(dnn_err)?;
        let softmax = dnn.create_softmax::<E>(cudnnSoftmaxMode_t::CUDNN_SOFTMAX_MODE_INSTANCE).map_err(dnn_err)?;
        Ok(RowSoftmax { softmax, desc, _dnn: dnn })
    }

    /// dst = softmax(src) row by row, on the GPU's stream.
    pub fn launch(&self, src: &CudaSlice<E>, dst: &mut CudaSlice<E>) -> Result<()> {
        let op = SoftmaxForward { softmax: &self.softmax, x: &self.desc, y: &self.desc };
        // SAFETY: src and dst hold the rows x cols elements the descriptor describes.
        unsafe { op.launch((E::ONE, E::ZERO), cudnnSoftmaxAlgorithm_t::CUDNN_SOFTMAX_ACCURATE, src, dst) }.map_err(dnn_err)
    }
}

/// cuDNN's softmax backward over the rows of a rows x cols fp32 matrix: dx = y (dy - sum(dy y))
/// row by row (CUDNN_SOFTMAX_ACCURATE, the instance mode). cudarc wraps the forward only, so
/// this holds its own handle and descriptor and calls `cudnnSoftmaxBackward` directly.
pub struct RowSoftmaxBackward {
    handle: sys::cudnnHandle_t,
    desc: sys::cudnnTensorDescriptor_t,
    stream: Arc<cudarc::driver::CudaStream>,
}

impl RowSoftmaxBackward {
    pub fn new(gpu: &Gpu, rows: usize, cols: usize) -> Result<RowSoftmaxBackward> {
        loaded().clone().map_err(LabError::Unavailable)?;
        let int = |d: usize| i32::try_from(d).map_err(|_| LabError::Usage(format!("{d} is over cuDNN's int dimensions")));
        let (rows, cols) = (int(rows)?, int(cols)?);
        let handle = result::create_handle().map_err(dnn_err)?;
        // Held from here, so an error below still destroys what was made.
        let mut op = RowSoftmaxBackward { handle, desc: std::ptr::null_mut(), stream: gpu.stream.clone() };
        // SAFETY: a live handle and the stream it is to run on, which `op` keeps alive.
        unsafe { result::set_stream(op.handle, gpu.stream.cu_stream() as sys::cudaStream_t) }.map_err(dnn_err)?;
        op.desc = result::create_tensor_descriptor().map_err(dnn_err)?;
        let (format, float) = (sys::cudnnTensorFormat_t::CUDNN_TENSOR_NCHW, sys::cudnnDataType_t::CUDNN_DATA_FLOAT);
        // SAFETY: a live descriptor, set once.
        unsafe { result::set_tensor4d_descriptor(op.desc, format, float, [rows, cols, 1, 1]) }.map_err(dnn_err)?;
        Ok(op)
    }

    /// dx from y and dy, on the GPU's stream.
    pub fn launch(&self, y: &CudaSlice<f32>, dy: &CudaSlice<f32>, dx: &mut CudaSlice<f32>) -> Result<()> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (y, _ry) = y.device_ptr(&self.stream);
        let (dy, _rdy) = dy.device_ptr(&self.stream);
        let (dx, _rdx) = dx.device_ptr_mut(&self.stream);
        // cuDNN takes the device buffers and the host scalars alpha and beta as untyped pointers.
        let device = |p: u64| p as *const std::ffi::c_void;
        let host = |v: &f32| v as *const f32 as *const std::ffi::c_void;
        // SAFETY: y, dy and dx hold the rows x cols floats the descriptor describes, on the
        // handle's stream; alpha and beta are host floats, as cuDNN reads them for fp32 data.
        let status = unsafe {
            sys::cudnnSoftmaxBackward(
                self.handle,
                sys::cudnnSoftmaxAlgorithm_t::CUDNN_SOFTMAX_ACCURATE,
                sys::cudnnSoftmaxMode_t::CUDNN_SOFTMAX_MODE_INSTANCE,
                host(&alpha),
                self.desc,
                device(y),
                self.desc,
                device(dy),
                host(&beta),
                self.desc,
                dx as *mut std::ffi::c_void,
            )
        };
        status.result().map_err(dnn_err)
    }
}

impl Drop for RowSoftmaxBackward {
    fn drop(&mut self) {
        // SAFETY: made in `new` and used by nothing after this.
        unsafe { destroy(self.handle, &[self.desc]) }
    }
}

/// Destroys a handle and its tensor descriptors, those never made (null) skipped; a failure to
/// destroy leaks only, so it is not reported.
///
/// # Safety
/// Each was made by cuDNN and nothing uses it after this.
pub(crate) unsafe fn destroy(handle: sys::cudnnHandle_t, tensors: &[sys::cudnnTensorDescriptor_t]) {
    for &t in tensors.iter().filter(|t| !t.is_null()) {
        let _ = result::destroy_tensor_descriptor(t);
    }
    let _ = result::destroy_handle(handle);
}
