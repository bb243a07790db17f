//! cuDNN's batch norm in training on fp16 activations channels last, fp32 statistics and affine
//! parameters: what PyTorch's BatchNorm2d runs in train mode on a channels-last network under
//! autocast, the persistent NHWC kernels (`cudnnBatchNormalizationForwardTrainingEx` and
//! `cudnnBatchNormalizationBackwardEx`, CUDNN_BATCHNORM_SPATIAL_PERSISTENT; torch.profiler names
//! them `batchnorm_fwtr_nhwc_semiPersist` and `batchnorm_bwtr_nhwc_semiPersist`). The forward
//! takes the batch's mean and variance, normalises with them and saves the mean and inverse
//! deviation the backward reads; the running statistics are replaced, not averaged (a factor of
//! 1), so every launch writes the same outputs. Its own handle, descriptors, workspace and
//! reserve space (the forward's record for the backward), destroyed or freed when dropped.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cudnn::result;
use cudarc::cudnn::sys::{self, cudnnBatchNormMode_t, cudnnBatchNormOps_t, cudnnDataType_t, cudnnTensorFormat_t};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use half::f16;

use super::device::Gpu;
use super::dnn::{destroy, dnn_err, loaded};
use crate::error::{LabError, Result};

const MODE: cudnnBatchNormMode_t = cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
const OPS: cudnnBatchNormOps_t = cudnnBatchNormOps_t::CUDNN_BATCHNORM_OPS_BN;

pub struct BatchNormTraining {
    handle: sys::cudnnHandle_t,
    /// The activations (n x c x h x w, laid out NHWC) and the per-channel arrays (1 x c x 1 x 1).
    x: sys::cudnnTensorDescriptor_t,
    params: sys::cudnnTensorDescriptor_t,
    workspace: Option<CudaSlice<u8>>,
    reserve: Option<CudaSlice<u8>>,
    stream: Arc<CudaStream>,
}

/// The per-channel fp32 arrays of one batch norm, each of c: gamma and beta, the running
/// statistics the forward replaces, the mean and inverse deviation it saves for the backward,
/// and the backward's gradients of gamma and beta.
pub struct BnTrainParams {
    pub gamma: CudaSlice<f32>,
    pub beta: CudaSlice<f32>,
    pub running: [CudaSlice<f32>; 2],
    pub saved: [CudaSlice<f32>; 2],
    pub grads: [CudaSlice<f32>; 2],
    pub eps: f64,
}

impl BatchNormTraining {
    pub fn new(gpu: &Gpu, [n, h, w, c]: [usize; 4]) -> Result<BatchNormTraining> {
        loaded().clone().map_err(LabError::Unavailable)?;
        let int = |v: usize| i32::try_from(v).map_err(|_| LabError::Usage(format!("{v} is over cuDNN's int dimensions")));
        let handle = result::create_handle().map_err(dnn_err)?;
        // Held from here, so an error below still destroys what was made.
        let mut op = BatchNormTraining {
            handle,
            x: std::ptr::null_mut(),
            params: std::ptr::null_mut(),
            workspace: None,
            reserve: None,
            stream: gpu.stream.clone(),
        };
        let (mut fwd, mut bwd, mut reserve) = (0usize, 0usize, 0usize);
        let (no_z, no_act): (sys::cudnnTensorDescriptor_t, sys::cudnnActivationDescriptor_t) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: a live handle and the stream it is to run on, which `op` keeps alive; each
        // descriptor created, then set once (with NHWC cuDNN takes the dimensions in NCHW
        // order); the size queries read them, with no z input and no activation.
        unsafe {
            result::set_stream(op.handle, gpu.stream.cu_stream() as sys::cudaStream_t).map_err(dnn_err)?;
            op.x = result::create_tensor_descriptor().map_err(dnn_err)?;
            let nhwc = cudnnTensorFormat_t::CUDNN_TENSOR_NHWC;
            result::set_tensor4d_descriptor(op.x, nhwc, cudnnDataType_t::CUDNN_DATA_HALF, [int(n)?, int(c)?, int(h)?, int(w)?])
                .map_err(dnn_err)?;
            op.params = result::create_tensor_descriptor().map_err(dnn_err)?;
            let nchw = cudnnTensorFormat_t::CUDNN_TENSOR_NCHW;
            result::set_tensor4d_descriptor(op.params, nchw, cudnnDataType_t::CUDNN_DATA_FLOAT, [1, int(c)?, 1, 1]).map_err(dnn_err)?;
            let (x, p) = (op.x, op.params);
            sys::cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(op.handle, MODE, OPS, x, no_z, x, p, no_act, &mut fwd)
                .result()
                .map_err(dnn_err)?;
            sys::cudnnGetBatchNormalizationBackwardExWorkspaceSize(op.handle, MODE, OPS, x, x, x, no_z, x, p, no_act, &mut bwd)
                .result()
                .map_err(dnn_err)?;
            sys::cudnnGetBatchNormalizationTrainingExReserveSpaceSize(op.handle, MODE, OPS, no_act, x, &mut reserve)
                .result()
                .map_err(dnn_err)?;
        }
        // SAFETY: scratch for cuDNN, which writes it before reading it (the reserve space the
        // forward writes and the backward reads).
        let alloc = |bytes: usize| -> Result<Option<CudaSlice<u8>>> {
            Ok(if bytes > 0 { Some(unsafe { gpu.stream.alloc::<u8>(bytes) }?) } else { None })
        };
        (op.workspace, op.reserve) = (alloc(fwd.max(bwd))?, alloc(reserve)?);
        Ok(op)
    }

    /// y = x normalised with the batch's statistics, times gamma plus beta; the running
    /// statistics replaced by the batch's, its mean and inverse deviation saved.
    pub fn forward(&mut self, x: &CudaSlice<f16>, y: &mut CudaSlice<f16>, p: &mut BnTrainParams) -> Result<()> {
        let (one, zero) = (1.0f32, 0.0f32);
        let host = |v: &f32| v as *const f32 as *const c_void;
        let s = self.stream.clone();
        let (xp, _rx) = x.device_ptr(&s);
        let (yp, _ry) = y.device_ptr_mut(&s);
        let ((g, _g), (b, _b)) = (p.gamma.device_ptr(&s), p.beta.device_ptr(&s));
        let [(rm, _rm), (rv, _rv)] = p.running.each_mut().map(|a| a.device_ptr_mut(&s));
        let [(sm, _sm), (si, _si)] = p.saved.each_mut().map(|a| a.device_ptr_mut(&s));
        let (ws, ws_bytes, _wr) = scratch(&mut self.workspace, &s);
        let (rs, rs_bytes, _rr) = scratch(&mut self.reserve, &s);
        // SAFETY: x and y hold the activations the descriptor describes and every per-channel
        // array c floats, on the handle's stream; the workspace and reserve space are the sizes
        // cuDNN asked for; alpha and beta are host floats, as cuDNN reads them for half data.
        let status = unsafe {
            sys::cudnnBatchNormalizationForwardTrainingEx(
                self.handle,
                MODE,
                OPS,
                host(&one),
                host(&zero),
                self.x,
                xp as *const c_void,
                std::ptr::null_mut(),
                std::ptr::null(),
                self.x,
                yp as *mut c_void,
                self.params,
                g as *const c_void,
                b as *const c_void,
                1.0,
                rm as *mut c_void,
                rv as *mut c_void,
                p.eps,
                sm as *mut c_void,
                si as *mut c_void,
                std::ptr::null_mut(),
                ws,
                ws_bytes,
                rs,
                rs_bytes,
            )
        };
        status.result().map_err(dnn_err)
    }

    /// dx, and gamma's and beta's gradients, from x, dy and what the last forward saved.
    pub fn backward(&mut self, x: &CudaSlice<f16>, dy: &CudaSlice<f16>, dx: &mut CudaSlice<f16>, p: &mut BnTrainParams) -> Result<()> {
        let (one, zero) = (1.0f32, 0.0f32);
        let host = |v: &f32| v as *const f32 as *const c_void;
        let s = self.stream.clone();
        let (xp, _rx) = x.device_ptr(&s);
        let (dyp, _rdy) = dy.device_ptr(&s);
        let (dxp, _rdx) = dx.device_ptr_mut(&s);
        let ((g, _g), (b, _b)) = (p.gamma.device_ptr(&s), p.beta.device_ptr(&s));
        let [(sm, _sm), (si, _si)] = p.saved.each_ref().map(|a| a.device_ptr(&s));
        let [(dg, _dg), (db, _db)] = p.grads.each_mut().map(|a| a.device_ptr_mut(&s));
        let (ws, ws_bytes, _wr) = scratch(&mut self.workspace, &s);
        let (rs, rs_bytes, _rr) = scratch(&mut self.reserve, &s);
        // SAFETY: as `forward`'s, dy and dx of the activations' shape; the reserve space holds
        // what the last forward wrote there.
        let status = unsafe {
            sys::cudnnBatchNormalizationBackwardEx(
                self.handle,
                MODE,
                OPS,
                host(&one),
                host(&zero),
                host(&one),
                host(&zero),
                self.x,
                xp as *const c_void,
                self.x,
                std::ptr::null(),
                self.x,
                dyp as *const c_void,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                self.x,
                dxp as *mut c_void,
                self.params,
                g as *const c_void,
                b as *const c_void,
                dg as *mut c_void,
                db as *mut c_void,
                p.eps,
                sm as *const c_void,
                si as *const c_void,
                std::ptr::null_mut(),
                ws,
                ws_bytes,
                rs,
                rs_bytes,
            )
        };
        status.result().map_err(dnn_err)
    }
}

/// A scratch buffer's pointer and size for cuDNN (null and 0 where none was needed), and the
/// record that keeps the stream's view of it.
fn scratch<'a>(buf: &'a mut Option<CudaSlice<u8>>, s: &'a Arc<CudaStream>) -> (*mut c_void, usize, Option<impl Drop + 'a>) {
    let bytes = buf.as_ref().map_or(0, |b| b.len());
    match buf.as_mut().map(|b| b.device_ptr_mut(s)) {
        Some((p, record)) => (p as *mut c_void, bytes, Some(record)),
        None => (std::ptr::null_mut(), 0, None),
    }
}

impl Drop for BatchNormTraining {
    fn drop(&mut self) {
        // SAFETY: made in `new` and used by nothing after this.
        unsafe { destroy(self.handle, &[self.x, self.params]) }
    }
}
