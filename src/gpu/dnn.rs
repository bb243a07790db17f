//! cuDNN, loaded at run time where it is installed: the loader's path first, then the cuDNN 9
//! wheel of a Python environment (PyTorch's `nvidia/cudnn/lib`), or the library
//! `KERNEL_LAB_CUDNN` names. Where none loads, the baselines on it are skipped with the reason
//! (`LabError::Unavailable`); cudarc would panic on first use.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cudarc::cudnn::sys::{cudnnSoftmaxAlgorithm_t, cudnnSoftmaxMode_t, cudnnTensorFormat_t};
use cudarc::cudnn::{Cudnn, Softmax as DnnSoftmax, SoftmaxForward, TensorDescriptor};
use cudarc::driver::CudaSlice;

use super::device::Gpu;
use crate::error::{LabError, Result};

/// The cuDNN 9 libraries a legacy-API call needs, dependencies first; cudarc's later load of
/// `libcudnn.so.9` by name finds the main one already loaded.
const WHEEL_LIBS: [&str; 3] = ["libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn.so.9"];

/// Where cuDNN was found, or why it was not.
fn loaded() -> &'static std::result::Result<(), String> {
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
        Err("cuDNN is not installed (not on the loader's path, in a Python environment's nvidia/cudnn/lib, or at KERNEL_LAB_CUDNN)"
            .into())
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

fn dnn_err(e: cudarc::cudnn::CudnnError) -> LabError {
    LabError::Cudnn(format!("{e:?}"))
}

/// cuDNN's softmax forward over the rows of a rows x cols fp32 matrix (CUDNN_SOFTMAX_ACCURATE,
/// which subtracts the row's max; the instance mode over an N x C x 1 x 1 tensor).
pub struct RowSoftmax {
    softmax: DnnSoftmax<f32>,
    desc: TensorDescriptor<f32>,
    _dnn: Arc<Cudnn>,
}

impl RowSoftmax {
    pub fn new(gpu: &Gpu, rows: usize, cols: usize) -> Result<RowSoftmax> {
        loaded().clone().map_err(LabError::Unavailable)?;
        let int = |d: usize| i32::try_from(d).map_err(|_| LabError::Usage(format!("{d} is over cuDNN's int dimensions")));
        let (rows, cols) = (int(rows)?, int(cols)?);
        let dnn = Cudnn::new(gpu.stream.clone()).map_err(dnn_err)?;
        let desc = dnn.create_4d_tensor::<f32>(cudnnTensorFormat_t::CUDNN_TENSOR_NCHW, [rows, cols, 1, 1]).map_err(dnn_err)?;
        let softmax = dnn.create_softmax::<f32>(cudnnSoftmaxMode_t::CUDNN_SOFTMAX_MODE_INSTANCE).map_err(dnn_err)?;
        Ok(RowSoftmax { softmax, desc, _dnn: dnn })
    }

    /// dst = softmax(src) row by row, on the GPU's stream.
    pub fn launch(&self, src: &CudaSlice<f32>, dst: &mut CudaSlice<f32>) -> Result<()> {
        let op = SoftmaxForward { softmax: &self.softmax, x: &self.desc, y: &self.desc };
        // SAFETY: src and dst hold the rows x cols floats the descriptor describes.
        unsafe { op.launch((1.0, 0.0), cudnnSoftmaxAlgorithm_t::CUDNN_SOFTMAX_ACCURATE, src, dst) }.map_err(dnn_err)
    }
}
