//! cuDNN's batch norm at inference (`cudnnBatchNormalizationForwardInference`, the spatial mode
//! PyTorch's eval-mode BatchNorm2d calls) on fp16 activations channels last, with fp32 running
//! statistics and affine parameters: the batchnorm_fp16 family's baseline. Its own handle and
//! descriptors, as `dnn::RowSoftmaxBackward`'s, destroyed when dropped (`BnDescriptors`, which
//! the training batch norm shares).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cudnn::result;
use cudarc::cudnn::sys::{self, cudnnDataType_t, cudnnTensorFormat_t};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use half::f16;

use super::device::Gpu;
use super::dnn::{destroy, dnn_err, loaded};
use crate::error::{LabError, Result};

/// A batch norm's handle on the GPU's stream and its two descriptors, the activations (n x c x h
/// x w, laid out NHWC) and the per-channel fp32 arrays (1 x c x 1 x 1), at inference and in
/// training alike; destroyed when dropped.
pub(crate) struct BnDescriptors {
    pub handle: sys::cudnnHandle_t,
    pub x: sys::cudnnTensorDescriptor_t,
    pub params: sys::cudnnTensorDescriptor_t,
}

impl BnDescriptors {
    pub(crate) fn new(gpu: &Gpu, [n, h, w, c]: [usize; 4]) -> Result<BnDescriptors> {
        loaded().clone().map_err(LabError::Unavailable)?;
        let int = |v: usize| i32::try_from(v).map_err(|_| LabError::Usage(format!("{v} is over cuDNN's int dimensions")));
        let handle = result::create_handle().map_err(dnn_err)?;
        // Held from here, so an error below still destroys what was made.
        let mut d = BnDescriptors { handle, x: std::ptr::null_mut(), params: std::ptr::null_mut() };
        // SAFETY: a live handle and the stream it is to run on, which the op holding `d` keeps
        // alive; each descriptor created, then set once. With NHWC cuDNN takes the dimensions
        // in NCHW order.
        unsafe {
            result::set_stream(d.handle, gpu.stream.cu_stream() as sys::cudaStream_t).map_err(dnn_err)?;
            d.x = result::create_tensor_descriptor().map_err(dnn_err)?;
            let nhwc = cudnnTensorFormat_t::CUDNN_TENSOR_NHWC;
            result::set_tensor4d_descriptor(d.x, nhwc, cudnnDataType_t::CUDNN_DATA_HALF, [int(n)?, int(c)?, int(h)?, int(w)?])
                .map_err(dnn_err)?;
            d.params = result::create_tensor_descriptor().map_err(dnn_err)?;
            let nchw = cudnnTensorFormat_t::CUDNN_TENSOR_NCHW;
            result::set_tensor4d_descriptor(d.params, nchw, cudnnDataType_t::CUDNN_DATA_FLOAT, [1, int(c)?, 1, 1]).map_err(dnn_err)?;
        }
        Ok(d)
    }
}

impl Drop for BnDescriptors {
    fn drop(&mut self) {
        // SAFETY: made in `new` and used by nothing after this.
        unsafe { destroy(self.handle, &[self.x, self.params]) }
    }
}

pub struct BatchNormInference {
    d: BnDescriptors,
    stream: Arc<CudaStream>,
}

/// The per-channel fp32 arrays, each of c.
pub struct BnParams<'a> {
    pub mean: &'a CudaSlice<f32>,
    pub var: &'a CudaSlice<f32>,
    pub gamma: &'a CudaSlice<f32>,
    pub beta: &'a CudaSlice<f32>,
    pub eps: f64,
}

impl BatchNormInference {
    pub fn new(gpu: &Gpu, dims: [usize; 4]) -> Result<BatchNormInference> {
        Ok(BatchNormInference { d: BnDescriptors::new(gpu, dims)?, stream: gpu.stream.clone() })
    }

    /// y = batch norm of x with `p`, on the GPU's stream.
    pub fn launch(&self, x: &CudaSlice<f16>, y: &mut CudaSlice<f16>, p: &BnParams) -> Result<()> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let host = |v: &f32| v as *const f32 as *const c_void;
        let s = &self.stream;
        let (xp, _rx) = x.device_ptr(s);
        let (yp, _ry) = y.device_ptr_mut(s);
        let ((gamma, _g), (bias, _b), (mean, _m), (var, _v)) =
            (p.gamma.device_ptr(s), p.beta.device_ptr(s), p.mean.device_ptr(s), p.var.device_ptr(s));
        let dev = |v: u64| v as *const c_void;
        // SAFETY: x and y hold the activations the descriptor describes and the four parameter
        // arrays c floats each, on the handle's stream; alpha and beta are host floats, as cuDNN
        // reads them for half data.
        let status = unsafe {
            sys::cudnnBatchNormalizationForwardInference(
                self.d.handle,
                sys::cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL,
                host(&alpha),
                host(&beta),
                self.d.x,
                dev(xp),
                self.d.x,
                yp as *mut c_void,
                self.d.params,
                dev(gamma),
                dev(bias),
                dev(mean),
                dev(var),
                p.eps,
            )
        };
        status.result().map_err(dnn_err)
    }
}
