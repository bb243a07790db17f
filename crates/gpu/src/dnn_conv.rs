//! cuDNN's 2-D convolution forward in fp16, channels last: the conv family's baseline. Its
//! algorithm is the fastest `cudnnFindConvolutionForwardAlgorithm` timed for the shape, as
//! PyTorch picks one with `torch.backends.cudnn.benchmark` on (what a ResNet's training script
//! sets), with fp32 accumulation on the Tensor Cores (CUDNN_TENSOR_OP_MATH, PyTorch's for fp16).
//! cudarc's safe wrapper keeps its handle and descriptors private and has no search, so this
//! holds its own, as `dnn::RowSoftmaxBackward` does, and destroys them when dropped.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cudnn::result;
use cudarc::cudnn::sys::{self, cudnnDataType_t, cudnnTensorFormat_t};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use half::f16;

use super::device::Gpu;
use super::dnn::{dnn_err, loaded};
use crate::error::{LabError, Result};

/// A convolution's dimensions as lab_conv_args takes them: an n x h x w x c input, k filters of
/// r x r x c, at `stride`, padded by `pad`.
#[derive(Debug, Clone, Copy)]
pub struct ConvDims {
    pub n: usize,
    pub h: usize,
    pub w: usize,
    pub c: usize,
    pub k: usize,
    pub r: usize,
    pub stride: usize,
    pub pad: usize,
}

/// cuDNN's forward convolution of one shape, its algorithm found and its workspace allocated.
pub struct ConvFwd {
    handle: sys::cudnnHandle_t,
    x: sys::cudnnTensorDescriptor_t,
    w: sys::cudnnFilterDescriptor_t,
    y: sys::cudnnTensorDescriptor_t,
    conv: sys::cudnnConvolutionDescriptor_t,
    algo: sys::cudnnConvolutionFwdAlgo_t,
    workspace: Option<CudaSlice<u8>>,
    stream: Arc<CudaStream>,
}

impl ConvFwd {
    /// The descriptors for `d`, and the algorithm cuDNN's search timed fastest (each candidate
    /// run once, on buffers cuDNN allocates for the search).
    pub fn new(gpu: &Gpu, d: ConvDims) -> Result<ConvFwd> {
        loaded().clone().map_err(LabError::Unavailable)?;
        let int = |v: usize| i32::try_from(v).map_err(|_| LabError::Usage(format!("{v} is over cuDNN's int dimensions")));
        let (p, q) = ((d.h + 2 * d.pad - d.r) / d.stride + 1, (d.w + 2 * d.pad - d.r) / d.stride + 1);
        let handle = result::create_handle().map_err(dnn_err)?;
        // Held from here, so an error below still destroys what was made.
        let mut op = ConvFwd {
            handle,
            x: std::ptr::null_mut(),
            w: std::ptr::null_mut(),
            y: std::ptr::null_mut(),
            conv: std::ptr::null_mut(),
            algo: sys::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
            workspace: None,
            stream: gpu.stream.clone(),
        };
        let (nhwc, half, float) =
            (cudnnTensorFormat_t::CUDNN_TENSOR_NHWC, cudnnDataType_t::CUDNN_DATA_HALF, cudnnDataType_t::CUDNN_DATA_FLOAT);
        // SAFETY: a live handle and the stream it is to run on, which `op` keeps alive; each
        // descriptor is created, then set once. With the NHWC format cuDNN takes the dimensions
        // in NCHW order and lays them out channels last.
        unsafe {
            result::set_stream(op.handle, gpu.stream.cu_stream() as sys::cudaStream_t).map_err(dnn_err)?;
            op.x = result::create_tensor_descriptor().map_err(dnn_err)?;
            result::set_tensor4d_descriptor(op.x, nhwc, half, [int(d.n)?, int(d.c)?, int(d.h)?, int(d.w)?]).map_err(dnn_err)?;
            op.w = result::create_filter_descriptor().map_err(dnn_err)?;
            result::set_filter4d_descriptor(op.w, half, nhwc, [int(d.k)?, int(d.c)?, int(d.r)?, int(d.r)?]).map_err(dnn_err)?;
            op.y = result::create_tensor_descriptor().map_err(dnn_err)?;
            result::set_tensor4d_descriptor(op.y, nhwc, half, [int(d.n)?, int(d.k)?, int(p)?, int(q)?]).map_err(dnn_err)?;
            op.conv = result::create_convolution_descriptor().map_err(dnn_err)?;
            let (pad, stride) = (int(d.pad)?, int(d.stride)?);
            let mode = sys::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION;
            result::set_convolution2d_descriptor(op.conv, pad, pad, stride, stride, 1, 1, mode, float).map_err(dnn_err)?;
            result::set_convolution_math_type(op.conv, sys::cudnnMathType_t::CUDNN_TENSOR_OP_MATH).map_err(dnn_err)?;
        }
        // The descriptor keeps CUDNN_TENSOR_OP_MATH: setting the math type the search reports for
        // its fastest algorithm instead ran the 1x1 convolutions at half the rate on an H100
        // (256x56x56x64-64x1x1: 38.7 TFLOP/s against 83.0), where PyTorch's profiled ResNet-50
        // step spends less on all 53 convolutions than this faster choice sums to.
        op.algo = op.fastest()?;
        // SAFETY: the live descriptors of one convolution.
        let bytes =
            unsafe { result::get_convolution_forward_workspace_size(op.handle, op.x, op.w, op.conv, op.y, op.algo) }.map_err(dnn_err)?;
        // SAFETY: scratch for cuDNN, which writes it before reading it.
        op.workspace = if bytes > 0 { Some(unsafe { gpu.stream.alloc::<u8>(bytes) }?) } else { None };
        Ok(op)
    }

    /// The algorithm `cudnnFindConvolutionForwardAlgorithm` timed fastest among those that ran.
    fn fastest(&self) -> Result<sys::cudnnConvolutionFwdAlgo_t> {
        const ALGOS: usize = sys::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_COUNT as usize;
        let mut count = 0;
        // SAFETY: plain-data records cuDNN fills; zero is a valid bit pattern for each field.
        let mut perf: [sys::cudnnConvolutionFwdAlgoPerf_t; ALGOS] = unsafe { std::mem::zeroed() };
        // SAFETY: live descriptors of one convolution, and room for ALGOS results.
        let status = unsafe {
            sys::cudnnFindConvolutionForwardAlgorithm(
                self.handle,
                self.x,
                self.w,
                self.conv,
                self.y,
                ALGOS as i32,
                &mut count,
                perf.as_mut_ptr(),
            )
        };
        status.result().map_err(dnn_err)?;
        // The results come sorted by time; a candidate that could not run carries its status.
        perf[..count.max(0) as usize]
            .iter()
            .find(|p| p.status == sys::cudnnStatus_t::CUDNN_STATUS_SUCCESS)
            .map(|p| p.algo)
            .ok_or_else(|| LabError::Cudnn("no forward convolution algorithm of cuDNN ran this shape".into()))
    }

    /// y = the convolution of x with the filters w, on the GPU's stream.
    pub fn launch(&mut self, x: &CudaSlice<f16>, w: &CudaSlice<f16>, y: &mut CudaSlice<f16>) -> Result<()> {
        // cuDNN scales fp16 data by float alpha and beta, read from the host.
        let (alpha, beta) = (1.0f32, 0.0f32);
        let host = |v: &f32| v as *const f32 as *const c_void;
        let (xp, _rx) = x.device_ptr(&self.stream);
        let (wp, _rw) = w.device_ptr(&self.stream);
        let (yp, _ry) = y.device_ptr_mut(&self.stream);
        let ws_bytes = self.workspace.as_ref().map_or(0, |ws| ws.len());
        let ws_record = self.workspace.as_mut().map(|ws| ws.device_ptr_mut(&self.stream));
        let ws = ws_record.as_ref().map_or(std::ptr::null_mut(), |(p, _)| *p as *mut c_void);
        // SAFETY: x, w and y hold the elements the descriptors describe (the case allocates them
        // from the same dimensions), on the handle's stream; the workspace is the size cuDNN
        // asked for this algorithm.
        unsafe {
            result::convolution_forward(
                self.handle,
                host(&alpha),
                self.x,
                xp as *const c_void,
                self.w,
                wp as *const c_void,
                self.conv,
                self.algo,
                ws,
                ws_bytes,
                host(&beta),
                self.y,
                yp as *mut c_void,
            )
        }
        .map_err(dnn_err)
    }
}

impl Drop for ConvFwd {
    fn drop(&mut self) {
        // SAFETY: made in `new` and used by nothing after this; a failure to destroy leaks only.
        unsafe {
            if !self.conv.is_null() {
                let _ = result::destroy_convolution_descriptor(self.conv);
            }
            for t in [self.x, self.y] {
                if !t.is_null() {
                    let _ = result::destroy_tensor_descriptor(t);
                }
            }
            if !self.w.is_null() {
                let _ = result::destroy_filter_descriptor(self.w);
            }
            let _ = result::destroy_handle(self.handle);
        }
    }
}
