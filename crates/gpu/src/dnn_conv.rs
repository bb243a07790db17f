//! cuDNN's 2-D convolution in fp16, channels last, forward and the two gradients training adds
//! (the input's, "dgrad", and the filters', "wgrad"): the conv family's baseline, with fp32
//! accumulation on the Tensor Cores (CUDNN_TENSOR_OP_MATH, PyTorch's for fp16). Its algorithm is
//! the fastest for the shape and pass, as PyTorch looks for one with `torch.backends.cudnn.benchmark`
//! on (what a ResNet's training script sets): cuDNN's search (`cudnnFindConvolution*Algorithm`)
//! lists the algorithms that run, and the lab times each of them itself. cuDNN's search runs each
//! once, and on an H100 its pick for the stride-1 1x1 convolutions of ResNet-50 changed from one
//! run to the next, one pick running at half the other's rate.
//! Beside the legacy algorithms it times the plans of cuDNN's graph API (`dnn_conv_graph`), which
//! PyTorch's convolutions run on: on an H100 those ran 17 of the 36 passes of ResNet-50's stride-1
//! 1x1 convolutions (forward and both gradients) 1.4 to 2.5 times as fast as the legacy search's
//! fastest.
//! The fastest of both kinds is the baseline.
//! cudarc's safe wrapper keeps its handle and descriptors private and has no search, so this
//! holds its own, as `dnn::RowSoftmaxBackward` does, and destroys them when dropped.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cudnn::result;
use cudarc::cudnn::sys::{self, cudnnDataType_t, cudnnTensorFormat_t};
use cudarc::driver::{sys::CUresult, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use half::f16;

use super::device::Gpu;
use super::dnn::{destroy, dnn_err, loaded};
use super::dnn_conv_graph::GraphConv;
pub use super::dnn_conv_graph::Pass;
use super::driver::record;
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

/// One pass's algorithm, of cuDNN's three enums, or a plan of its graph API (`GraphConv`'s i-th).
#[derive(Debug, Clone, Copy)]
enum Algo {
    Forward(sys::cudnnConvolutionFwdAlgo_t),
    Data(sys::cudnnConvolutionBwdDataAlgo_t),
    Filter(sys::cudnnConvolutionBwdFilterAlgo_t),
    Graph(usize),
}

/// cuDNN's convolution of one shape and pass, its algorithm found and its workspace allocated.
pub struct ConvOp {
    handle: sys::cudnnHandle_t,
    x: sys::cudnnTensorDescriptor_t,
    w: sys::cudnnFilterDescriptor_t,
    y: sys::cudnnTensorDescriptor_t,
    conv: sys::cudnnConvolutionDescriptor_t,
    algo: Algo,
    graph: Option<GraphConv>,
    /// How many of the graph's plans ran when timed.
    graph_timed: usize,
    workspace: Option<CudaSlice<u8>>,
    /// The elements the pass's a, b and out must hold, which `launch` checks before cuDNN
    /// reads or writes them through raw pointers.
    lens: [usize; 3],
    stream: Arc<CudaStream>,
}

impl ConvOp {
    /// The descriptors for `d`, and the fastest of the algorithms cuDNN's search lists for
    /// `pass`, each timed on the case's own buffers: `a` and `b` the pass's inputs (x and w, dy
    /// and w, x and dy) and `out` its output (y, dx, dw).
    pub fn new(gpu: &Gpu, d: ConvDims, pass: Pass, a: &CudaSlice<f16>, b: &CudaSlice<f16>, out: &mut CudaSlice<f16>) -> Result<ConvOp> {
        loaded().clone().map_err(LabError::Unavailable)?;
        let int = |v: usize| i32::try_from(v).map_err(|_| LabError::Usage(format!("{v} is over cuDNN's int dimensions")));
        let (p, q) = ((d.h + 2 * d.pad - d.r) / d.stride + 1, (d.w + 2 * d.pad - d.r) / d.stride + 1);
        let [xs, ws, ys] = [d.n * d.h * d.w * d.c, d.k * d.r * d.r * d.c, d.n * p * q * d.k];
        let lens = pass.operands().map(|t| [xs, ws, ys][t]);
        let handle = result::create_handle().map_err(dnn_err)?;
        // Held from here, so an error below still destroys what was made.
        let mut op = ConvOp {
            handle,
            x: std::ptr::null_mut(),
            w: std::ptr::null_mut(),
            y: std::ptr::null_mut(),
            conv: std::ptr::null_mut(),
            algo: Algo::Forward(sys::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM),
            graph: None,
            graph_timed: 0,
            workspace: None,
            lens,
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
        // The graph API's plans; a graph cuDNN refuses (its every failure is a status of its
        // own) leaves the legacy algorithms. Every dimension fits cuDNN's int, checked above.
        let (x, w, y) = ([d.n, d.c, d.h, d.w], [d.k, d.c, d.r, d.r], [d.n, d.k, p, q]);
        op.graph = GraphConv::new(op.handle, [x, w, y].map(|t| t.map(|v| v as i64)), d.stride as i64, d.pad as i64, pass).ok();
        let plans = (0..op.graph.as_ref().map_or(0, GraphConv::plans)).map(Algo::Graph);
        let mut best = (f64::INFINITY, None);
        for algo in op.candidates(pass)?.into_iter().chain(plans) {
            op.algo = algo;
            // A candidate cuDNN refuses (a status of cuDNN's, which leaves the context usable),
            // whether asked for its workspace or timed, is passed over and the others are still
            // timed; a fault of the GPU's ends the search.
            let bytes = match op.workspace_bytes() {
                Ok(bytes) => bytes,
                Err(LabError::Cudnn(_)) => continue,
                Err(e) => return Err(e),
            };
            // SAFETY: scratch for cuDNN, which writes it before reading it.
            op.workspace = match (bytes > 0).then(|| unsafe { gpu.stream.alloc::<u8>(bytes) }).transpose() {
                Ok(ws) => ws,
                // A workspace that does not fit beside the case's buffers passes the candidate
                // over, as PyTorch passes over a plan whose workspace it cannot allocate.
                Err(e) if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY => continue,
                Err(e) => return Err(e.into()),
            };
            let ms = match op.time(gpu, a, b, out, best.0) {
                Ok(ms) => ms,
                Err(LabError::Cudnn(_)) => continue,
                Err(e) => return Err(e),
            };
            op.graph_timed += matches!(algo, Algo::Graph(_)) as usize;
            if ms < best.0 {
                best = (ms, Some((algo, op.workspace.take())));
            }
        }
        let (algo, workspace) =
            best.1.ok_or_else(|| LabError::Cudnn(format!("no {pass:?} convolution algorithm of cuDNN ran this shape")))?;
        (op.algo, op.workspace) = (algo, workspace);
        Ok(op)
    }

    /// How many plans of cuDNN's graph API ran when timed beside the legacy algorithms (none
    /// where cuDNN refused the graph).
    pub fn graph_plans_timed(&self) -> usize {
        self.graph_timed
    }

    /// The algorithms cuDNN's search for `pass` ran for this shape (a candidate that could not
    /// run carries its status and is left out).
    fn candidates(&self, pass: Pass) -> Result<Vec<Algo>> {
        use sys::cudnnStatus_t::CUDNN_STATUS_SUCCESS as OK;
        /// Calls one of cuDNN's three searches, with room for every algorithm of its enum.
        macro_rules! find {
            ($find:ident, $perf:ty, $count:expr, $wrap:expr, $($desc:expr),+) => {{
                const ALGOS: usize = $count as usize;
                let mut count = 0;
                // SAFETY: plain-data records cuDNN fills; zero is a valid bit pattern for each field.
                let mut perf: [$perf; ALGOS] = unsafe { std::mem::zeroed() };
                // SAFETY: live descriptors of one convolution, and room for ALGOS results.
                unsafe { sys::$find(self.handle, $($desc),+, ALGOS as i32, &mut count, perf.as_mut_ptr()) }.result().map_err(dnn_err)?;
                perf[..count.max(0) as usize].iter().filter(|p| p.status == OK).map(|p| $wrap(p.algo)).collect()
            }};
        }
        Ok(match pass {
            Pass::Forward => find!(
                cudnnFindConvolutionForwardAlgorithm,
                sys::cudnnConvolutionFwdAlgoPerf_t,
                sys::cudnnConvolutionFwdAlgo_t::CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                Algo::Forward,
                self.x,
                self.w,
                self.conv,
                self.y
            ),
            Pass::Data => find!(
                cudnnFindConvolutionBackwardDataAlgorithm,
                sys::cudnnConvolutionBwdDataAlgoPerf_t,
                sys::cudnnConvolutionBwdDataAlgo_t::CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                Algo::Data,
                self.w,
                self.y,
                self.conv,
                self.x
            ),
            Pass::Filter => find!(
                cudnnFindConvolutionBackwardFilterAlgorithm,
                sys::cudnnConvolutionBwdFilterAlgoPerf_t,
                sys::cudnnConvolutionBwdFilterAlgo_t::CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                Algo::Filter,
                self.x,
                self.y,
                self.conv,
                self.w
            ),
        })
    }

    /// The workspace the current algorithm asks for, bytes.
    fn workspace_bytes(&self) -> Result<usize> {
        let (h, x, w, y, conv) = (self.handle, self.x, self.w, self.y, self.conv);
        // SAFETY: the live descriptors of one convolution, each in the role its pass gives it.
        unsafe {
            match self.algo {
                Algo::Forward(a) => result::get_convolution_forward_workspace_size(h, x, w, conv, y, a),
                Algo::Data(a) => result::get_convolution_backward_data_workspace_size(h, w, y, conv, x, a),
                Algo::Filter(a) => result::get_convolution_backward_filter_workspace_size(h, x, y, conv, w, a),
                Algo::Graph(i) => return Ok(self.graph.as_ref().map_or(0, |g| g.workspace(i))),
            }
        }
        .map_err(dnn_err)
    }

    /// The current algorithm's time, ms: after 2 launches to warm up, the median of 3 rounds of
    /// 5 launches, each round's mean on the GPU's clock. The host's clock would count the
    /// launches' cost, which differs between the two APIs; here every round is queued behind a
    /// launch still running (an untimed one ahead of it), so the events see only the GPU's time
    /// wherever a convolution runs longer than the host takes to queue the next. A candidate
    /// whose first round takes over twice `best`, the fastest median so far, cannot win (warmed
    /// up and queued, a convolution's rounds agree within a few percent, so a round twice the
    /// best is the candidate's pace, not an outlier): it stops there with that round's mean,
    /// which spares most of a slow candidate's launches.
    fn time(&mut self, gpu: &Gpu, a: &CudaSlice<f16>, b: &CudaSlice<f16>, out: &mut CudaSlice<f16>, best: f64) -> Result<f64> {
        for _ in 0..2 {
            self.launch(a, b, out)?;
        }
        gpu.sync()?;
        let mut round = |op: &mut ConvOp, rounds: usize| -> Result<Vec<f64>> {
            op.launch(a, b, out)?;
            let mut events = vec![record(&op.stream)?];
            for _ in 0..rounds {
                for _ in 0..5 {
                    op.launch(a, b, out)?;
                }
                events.push(record(&op.stream)?);
            }
            gpu.sync()?;
            events.windows(2).map(|e| Ok(e[0].elapsed_ms(&e[1])? as f64 / 5.0)).collect()
        };
        let first = round(self, 1)?[0];
        if first > 2.0 * best {
            return Ok(first);
        }
        let mut ms = [vec![first], round(self, 2)?].concat();
        ms.sort_by(f64::total_cmp);
        Ok(ms[1])
    }

    /// The pass on the GPU's stream: y = x (*) w, dx from dy and w, or dw from x and dy, `a` and
    /// `b` its inputs in that order and `out` its output.
    pub fn launch(&mut self, a: &CudaSlice<f16>, b: &CudaSlice<f16>, out: &mut CudaSlice<f16>) -> Result<()> {
        let given = [a.len(), b.len(), out.len()];
        if given != self.lens {
            return Err(LabError::Usage(format!("cuDNN's convolution needs buffers of {:?} elements, not {given:?}", self.lens)));
        }
        // cuDNN scales fp16 data by float alpha and beta, read from the host.
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (alpha, beta) = (&alpha as *const f32 as *const c_void, &beta as *const f32 as *const c_void);
        let (ap, _ra) = a.device_ptr(&self.stream);
        let (bp, _rb) = b.device_ptr(&self.stream);
        let (op, _ro) = out.device_ptr_mut(&self.stream);
        let (a, b, out) = (ap as *const c_void, bp as *const c_void, op as *mut c_void);
        let ws_bytes = self.workspace.as_ref().map_or(0, |ws| ws.len());
        let ws_record = self.workspace.as_mut().map(|ws| ws.device_ptr_mut(&self.stream));
        let ws = ws_record.as_ref().map_or(std::ptr::null_mut(), |(p, _)| *p as *mut c_void);
        let (h, x, w, y, conv) = (self.handle, self.x, self.w, self.y, self.conv);
        // SAFETY: a, b and out hold the elements the descriptors of their roles describe (checked
        // above), on the handle's stream; the workspace
        // is the size cuDNN asked for this algorithm.
        let legacy = unsafe {
            match self.algo {
                Algo::Forward(al) => result::convolution_forward(h, alpha, x, a, w, b, conv, al, ws, ws_bytes, beta, y, out),
                Algo::Data(al) => result::convolution_backward_data(h, alpha, w, b, y, a, conv, al, ws, ws_bytes, beta, x, out),
                Algo::Filter(al) => result::convolution_backward_filter(h, alpha, x, a, y, b, conv, al, ws, ws_bytes, beta, w, out),
                Algo::Graph(i) => {
                    let graph = self.graph.as_mut().ok_or_else(|| LabError::Cudnn("a graph plan without its graph".into()))?;
                    return graph.launch(h, i, [ap, bp, op, ws as u64]);
                }
            }
        };
        legacy.map_err(dnn_err)
    }
}

impl Drop for ConvOp {
    fn drop(&mut self) {
        // The graph's plans before the handle they were made on.
        self.graph = None;
        // SAFETY: made in `new` and used by nothing after this; a failure to destroy leaks only.
        unsafe {
            if !self.conv.is_null() {
                let _ = result::destroy_convolution_descriptor(self.conv);
            }
            if !self.w.is_null() {
                let _ = result::destroy_filter_descriptor(self.w);
            }
            destroy(self.handle, &[self.x, self.y]);
        }
    }
}
