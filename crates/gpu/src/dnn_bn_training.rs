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

use cudarc::cudnn::sys::{self, cudnnBatchNormMode_t, cudnnBatchNormOps_t};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};
use half::f16;

use super::device::Gpu;
use super::dnn::dnn_err;
use super::dnn_bn::BnDescriptors;
use crate::error::Result;

const MODE: cudnnBatchNormMode_t = cudnnBatchNormMode_t::CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
const OPS: cudnnBatchNormOps_t = cudnnBatchNormOps_t::CUDNN_BATCHNORM_OPS_BN;

pub struct BatchNormTraining {
    d: BnDescriptors,
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
    pub fn new(gpu: &Gpu, dims: [usize; 4]) -> Result<BatchNormTraining> {
        let d = BnDescriptors::new(gpu, dims)?;
        let (mut fwd, mut bwd, mut reserve) = (0usize, 0usize, 0usize);
        let (no_z, no_act): (sys::cudnnTensorDescriptor_t, sys::cudnnActivationDescriptor_t) = (std::ptr::null_mut(), std::ptr::null_mut());
        let (h, x, p) = (d.handle, d.x, d.params);
        // SAFETY: the size queries read live descriptors, with no z input and no activation.
        unsafe {
            sys::cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, MODE, OPS, x, no_z, x, p, no_act, &mut fwd)
                .result()
                .map_err(dnn_err)?;
            sys::cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, MODE, OPS, x, x, x, no_z, x, p, no_act, &mut bwd)
                .result()
                .map_err(dnn_err)?;
            sys::cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, MODE, OPS, no_act, x, &mut reserve).result().map_err(dnn_err)?;
        }
        // SAFETY: scratch for cuDNN, which writes it before reading it (the reserve space the
        // forward writes and the backward reads).
        let alloc = |bytes: usize| -> Result<Option<CudaSlice<u8>>> {
            Ok(if bytes > 0 { Some(unsafe { gpu.stream.alloc::<u8>(bytes) }?) } else { None })
        };
        Ok(BatchNormTraining { d, workspace: alloc(fwd.max(bwd))?, reserve: alloc(reserve)?, stream: gpu.stream.clone() })
    }

    /// y = x normalised with the batch's statistics, times gamma plus beta; the running
    /// statistics replaced by the batch's, its mean and inverse deviation saved.
    pub fn forward(&mut self, x: &CudaSlice<f16>, y: &mut CudaSlice<f16>, p: &mut BnTrainParams) -> Result<()> {
        let s = self.stream.clone();
        let (xp, _rx) = x.device_ptr(&s);
        let (yp, _ry) = y.device_ptr_mut(&s);
        let [(rm, _rm), (rv, _rv)] = p.running.each_mut().map(|a| a.device_ptr_mut(&s));
        let [(sm, _sm), (si, _si)] = p.saved.each_mut().map(|a| a.device_ptr_mut(&s));
        let c = Common::new(&mut self.workspace, &mut self.reserve, [&p.gamma, &p.beta], &s);
        // SAFETY: x and y hold the activations the descriptor describes and every per-channel
        // array c floats, on the handle's stream; the workspace and reserve space are the sizes
        // cuDNN asked for; alpha and beta are host floats, as cuDNN reads them for half data.
        let status = unsafe {
            sys::cudnnBatchNormalizationForwardTrainingEx(
                self.d.handle,
                MODE,
                OPS,
                host(&ONE),
                host(&ZERO),
                self.d.x,
                xp as *const c_void,
                std::ptr::null_mut(),
                std::ptr::null(),
                self.d.x,
                yp as *mut c_void,
                self.d.params,
                c.gamma,
                c.beta,
                1.0,
                rm as *mut c_void,
                rv as *mut c_void,
                p.eps,
                sm as *mut c_void,
                si as *mut c_void,
                std::ptr::null_mut(),
                c.ws,
                c.ws_bytes,
                c.rs,
                c.rs_bytes,
            )
        };
        status.result().map_err(dnn_err)
    }

    /// dx, and gamma's and beta's gradients, from x, dy and what the last forward saved.
    pub fn backward(&mut self, x: &CudaSlice<f16>, dy: &CudaSlice<f16>, dx: &mut CudaSlice<f16>, p: &mut BnTrainParams) -> Result<()> {
        let s = self.stream.clone();
        let (xp, _rx) = x.device_ptr(&s);
        let (dyp, _rdy) = dy.device_ptr(&s);
        let (dxp, _rdx) = dx.device_ptr_mut(&s);
        let [(sm, _sm), (si, _si)] = p.saved.each_ref().map(|a| a.device_ptr(&s));
        let [(dg, _dg), (db, _db)] = p.grads.each_mut().map(|a| a.device_ptr_mut(&s));
        let c = Common::new(&mut self.workspace, &mut self.reserve, [&p.gamma, &p.beta], &s);
        // SAFETY: as `forward`'s, dy and dx of the activations' shape; the reserve space holds
        // what the last forward wrote there.
        let status = unsafe {
            sys::cudnnBatchNormalizationBackwardEx(
                self.d.handle,
                MODE,
                OPS,
                host(&ONE),
                host(&ZERO),
                host(&ONE),
                host(&ZERO),
                self.d.x,
                xp as *const c_void,
                self.d.x,
                std::ptr::null(),
                self.d.x,
                dyp as *const c_void,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                self.d.x,
                dxp as *mut c_void,
                self.d.params,
                c.gamma,
                c.beta,
                dg as *mut c_void,
                db as *mut c_void,
                p.eps,
                sm as *const c_void,
                si as *const c_void,
                std::ptr::null_mut(),
                c.ws,
                c.ws_bytes,
                c.rs,
                c.rs_bytes,
            )
        };
        status.result().map_err(dnn_err)
    }
}

/// cuDNN's alpha and beta, which it reads from the host for half data.
static ONE: f32 = 1.0;
static ZERO: f32 = 0.0;

fn host(v: &'static f32) -> *const c_void {
    v as *const f32 as *const c_void
}

/// What both passes hand cuDNN besides their own tensors: gamma and beta, the workspace and the
/// reserve space (null and 0 where none was needed), with the records that keep the stream's
/// view of each until cuDNN has queued its kernels.
struct Common<'a> {
    gamma: *const c_void,
    beta: *const c_void,
    ws: *mut c_void,
    ws_bytes: usize,
    rs: *mut c_void,
    rs_bytes: usize,
    _records: Vec<SyncOnDrop<'a>>,
}

impl<'a> Common<'a> {
    fn new(
        workspace: &'a mut Option<CudaSlice<u8>>,
        reserve: &'a mut Option<CudaSlice<u8>>,
        affine: [&'a CudaSlice<f32>; 2],
        s: &'a Arc<CudaStream>,
    ) -> Common<'a> {
        let mut records = Vec::with_capacity(4);
        let [gamma, beta] = affine.map(|a| {
            let (ptr, record) = a.device_ptr(s);
            records.push(record);
            ptr as *const c_void
        });
        let [(ws, ws_bytes), (rs, rs_bytes)] = [workspace, reserve].map(|buf| match buf.as_mut() {
            Some(b) => {
                let bytes = b.len();
                let (ptr, record) = b.device_ptr_mut(s);
                records.push(record);
                (ptr as *mut c_void, bytes)
            }
            None => (std::ptr::null_mut(), 0),
        });
        Common { gamma, beta, ws, ws_bytes, rs, rs_bytes, _records: records }
    }
}
