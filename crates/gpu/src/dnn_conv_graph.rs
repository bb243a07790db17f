//! cuDNN's convolution through its graph API (the backend descriptors), the way PyTorch runs a
//! convolution with `torch.backends.cudnn.benchmark` on: one operation in a graph, the engine
//! configurations cuDNN's instant heuristics list, then its fallback list, made into execution
//! plans until `PLAN_LIMIT` of them finalize (PyTorch's `torch.backends.cudnn.benchmark_limit`,
//! 10 by default), each then timed. These engines are not all reachable through the legacy
//! algorithm enums `dnn_conv` searches; `ConvOp` times both kinds and keeps the fastest.
//! cudarc wraps none of the graph API, so the descriptors are raw, each destroyed when dropped.

use std::ffi::c_void;

use cudarc::cudnn::sys::{
    self, cudnnBackendAttributeName_t as Attr, cudnnBackendAttributeType_t as Type, cudnnBackendDescriptorType_t as Kind,
    cudnnBackendDescriptor_t,
};

use super::dnn::dnn_err;
use crate::error::Result;

/// The plans that finalize, at most, before timing: PyTorch's default benchmark limit.
const PLAN_LIMIT: usize = 10;

/// The tensors' ids in the variant pack: the convolution's input, filters and output, whatever
/// the pass (a gradient's pass writes dx into the input's tensor or dw into the filters').
const X: i64 = 1;
const W: i64 = 2;
const Y: i64 = 3;

/// Which pass of a convolution: y from x and w, or in training dx from dy and w and dw from x
/// and dy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Forward,
    Data,
    Filter,
}

impl Pass {
    /// The pass's two inputs and its output, in that order, as the convolution's tensors: 0 the
    /// input (x, dx), 1 the filters (w, dw), 2 the output (y, dy).
    pub fn operands(self) -> [usize; 3] {
        match self {
            Pass::Forward => [0, 1, 2],
            Pass::Data => [2, 1, 0],
            Pass::Filter => [0, 2, 1],
        }
    }
}

/// A value cuDNN's backend takes as an attribute, with the type it is declared as: the one
/// place a Rust type is paired with cuDNN's name for it.
trait Value: Copy {
    const TYPE: Type;
}
impl Value for i64 {
    const TYPE: Type = Type::CUDNN_TYPE_INT64;
}
impl Value for f32 {
    const TYPE: Type = Type::CUDNN_TYPE_FLOAT;
}
impl Value for sys::cudnnDataType_t {
    const TYPE: Type = Type::CUDNN_TYPE_DATA_TYPE;
}
impl Value for sys::cudnnConvolutionMode_t {
    const TYPE: Type = Type::CUDNN_TYPE_CONVOLUTION_MODE;
}
impl Value for sys::cudnnBackendHeurMode_t {
    const TYPE: Type = Type::CUDNN_TYPE_HEUR_MODE;
}
impl Value for sys::cudnnHandle_t {
    const TYPE: Type = Type::CUDNN_TYPE_HANDLE;
}
/// A device address (a variant pack's tensors and workspace).
impl Value for *mut c_void {
    const TYPE: Type = Type::CUDNN_TYPE_VOID_PTR;
}

/// One backend descriptor, destroyed when dropped.
struct Desc(cudnnBackendDescriptor_t);

impl Desc {
    fn new(kind: Kind) -> Result<Desc> {
        let mut d = std::ptr::null_mut();
        // SAFETY: cuDNN writes a new descriptor into `d`.
        unsafe { sys::cudnnBackendCreateDescriptor(kind, &mut d) }.result().map_err(dnn_err)?;
        Ok(Desc(d))
    }

    /// Sets attribute `name` to `values`.
    fn set<T: Value>(&self, name: Attr, values: &[T]) -> Result<()> {
        // SAFETY: a live descriptor; `values` holds that many elements of the type `T::TYPE` names.
        unsafe { sys::cudnnBackendSetAttribute(self.0, name, T::TYPE, values.len() as i64, values.as_ptr() as *const c_void) }
            .result()
            .map_err(dnn_err)
    }

    /// Sets attribute `name` to other descriptors.
    fn refer(&self, name: Attr, to: &[&Desc]) -> Result<()> {
        let raw: Vec<cudnnBackendDescriptor_t> = to.iter().map(|d| d.0).collect();
        let ty = Type::CUDNN_TYPE_BACKEND_DESCRIPTOR;
        // SAFETY: a live descriptor and `raw.len()` live descriptors to refer to.
        unsafe { sys::cudnnBackendSetAttribute(self.0, name, ty, raw.len() as i64, raw.as_ptr() as *const c_void) }
            .result()
            .map_err(dnn_err)
    }

    fn finalize(self) -> Result<Desc> {
        // SAFETY: a live descriptor whose required attributes were set.
        unsafe { sys::cudnnBackendFinalize(self.0) }.result().map_err(dnn_err)?;
        Ok(self)
    }
}

impl Drop for Desc {
    fn drop(&mut self) {
        // SAFETY: made by `Desc::new`, used by nothing after this; a failure leaks only.
        let _ = unsafe { sys::cudnnBackendDestroyDescriptor(self.0) };
    }
}

/// A tensor of fp16, channels last: `dims` in cuDNN's n, c, h, w order.
fn tensor(id: i64, [n, c, h, w]: [i64; 4]) -> Result<Desc> {
    let t = Desc::new(Kind::CUDNN_BACKEND_TENSOR_DESCRIPTOR)?;
    t.set(Attr::CUDNN_ATTR_TENSOR_DATA_TYPE, &[sys::cudnnDataType_t::CUDNN_DATA_HALF])?;
    t.set(Attr::CUDNN_ATTR_TENSOR_DIMENSIONS, &[n, c, h, w])?;
    t.set(Attr::CUDNN_ATTR_TENSOR_STRIDES, &[h * w * c, 1, w * c, c])?;
    t.set(Attr::CUDNN_ATTR_TENSOR_UNIQUE_ID, &[id])?;
    // The lab's buffers are whole allocations, aligned far beyond 16 bytes.
    t.set(Attr::CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, &[16i64])?;
    t.finalize()
}

/// One plan: an engine configuration made runnable, with the workspace it needs.
struct Plan {
    desc: Desc,
    workspace: usize,
}

/// One convolution pass as a graph, with the plans cuDNN made for it.
pub struct GraphConv {
    pass: Pass,
    plans: Vec<Plan>,
    /// The last variant pack, with the four pointers it was made for (the three tensors and the
    /// workspace; a pack serves every plan): the timed loop launches on the same buffers again
    /// and again.
    pack: Option<([u64; 4], Desc)>,
    /// What the plans refer to, kept alive as long as they are.
    _graph: Vec<Desc>,
}

impl GraphConv {
    /// The graph of `pass` on `handle` over the input, the filters and the output, each's
    /// dimensions in cuDNN's n, c, h, w order (k, c, r, s for the filters), and up to
    /// `PLAN_LIMIT` plans for it. No plan is not an error here: the legacy algorithms may still
    /// run the shape.
    pub fn new(handle: sys::cudnnHandle_t, [xd, wd, yd]: [[i64; 4]; 3], stride: i64, pad: i64, pass: Pass) -> Result<GraphConv> {
        let (x, w, y) = (tensor(X, xd)?, tensor(W, wd)?, tensor(Y, yd)?);
        let conv = Desc::new(Kind::CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)?;
        conv.set(Attr::CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, &[2i64])?;
        conv.set(Attr::CUDNN_ATTR_CONVOLUTION_COMP_TYPE, &[sys::cudnnDataType_t::CUDNN_DATA_FLOAT])?;
        let mode = sys::cudnnConvolutionMode_t::CUDNN_CROSS_CORRELATION;
        conv.set(Attr::CUDNN_ATTR_CONVOLUTION_CONV_MODE, &[mode])?;
        conv.set(Attr::CUDNN_ATTR_CONVOLUTION_DILATIONS, &[1i64, 1])?;
        conv.set(Attr::CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, &[stride, stride])?;
        conv.set(Attr::CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, &[pad, pad])?;
        conv.set(Attr::CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, &[pad, pad])?;
        let conv = conv.finalize()?;
        // The operation names each tensor in its pass's role; alpha and beta are floats, as the
        // computation is.
        use Attr::*;
        let (kind, roles, alpha, beta, desc) = match pass {
            Pass::Forward => (
                Kind::CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                [
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, &x),
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, &w),
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, &y),
                ],
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
            ),
            Pass::Data => (
                Kind::CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                [
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, &x),
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, &w),
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, &y),
                ],
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
            ),
            Pass::Filter => (
                Kind::CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                [
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, &x),
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, &w),
                    (CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, &y),
                ],
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
                CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
            ),
        };
        let op = Desc::new(kind)?;
        for (name, t) in roles {
            op.refer(name, &[t])?;
        }
        op.refer(desc, &[&conv])?;
        op.set(alpha, &[1.0f32])?;
        op.set(beta, &[0.0f32])?;
        let op = op.finalize()?;
        let graph = Desc::new(Kind::CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)?;
        graph.refer(CUDNN_ATTR_OPERATIONGRAPH_OPS, &[&op])?;
        graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, &[handle])?;
        let graph = graph.finalize()?;
        // The configurations made into plans, kept for them.
        let (mut plans, mut configs) = (Vec::new(), Vec::new());
        for mode in [sys::cudnnBackendHeurMode_t::CUDNN_HEUR_MODE_INSTANT, sys::cudnnBackendHeurMode_t::CUDNN_HEUR_MODE_FALLBACK] {
            if plans.len() == PLAN_LIMIT {
                break;
            }
            // Heuristics cuDNN cannot run for this graph (any of its statuses) add no plan.
            for config in engine_configs(&graph, mode).unwrap_or_default() {
                if plans.len() == PLAN_LIMIT {
                    break;
                }
                // A configuration cuDNN cannot make into a plan for this shape is passed over.
                if let Ok(plan) = plan(handle, &config) {
                    plans.push(plan);
                    configs.push(config);
                }
            }
        }
        // Dropped in order: each before what it refers to.
        let mut kept = configs;
        kept.extend([graph, op, conv, y, w, x]);
        Ok(GraphConv { pass, plans, pack: None, _graph: kept })
    }

    /// How many plans there are to time.
    pub fn plans(&self) -> usize {
        self.plans.len()
    }

    /// The workspace plan `i` needs, bytes.
    pub fn workspace(&self, i: usize) -> usize {
        self.plans[i].workspace
    }

    /// Plan `i` on the handle's stream: `a` and `b` the pass's inputs and `out` its output (x
    /// and w, dy and w, x and dy; y, dx, dw), `ws` a workspace of `workspace(i)` bytes.
    pub fn launch(&mut self, handle: sys::cudnnHandle_t, i: usize, [a, b, out, ws]: [u64; 4]) -> Result<()> {
        let key = [a, b, out, ws];
        if self.pack.as_ref().is_none_or(|(k, _)| *k != key) {
            let ids = self.pass.operands().map(|t| [X, W, Y][t]);
            let pack = Desc::new(Kind::CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)?;
            pack.set(Attr::CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, &ids)?;
            let pointers = [a, b, out].map(|p| p as *mut c_void);
            pack.set(Attr::CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, &pointers)?;
            pack.set(Attr::CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &[ws as *mut c_void])?;
            self.pack = Some((key, pack.finalize()?));
        }
        let pack = self.pack.as_ref().map_or(std::ptr::null_mut(), |(_, p)| p.0);
        // SAFETY: a finalized plan of this handle and a variant pack whose pointers hold the
        // tensors the graph describes (`ConvOp::launch` checks their lengths).
        unsafe { sys::cudnnBackendExecute(handle, self.plans[i].desc.0, pack) }.result().map_err(dnn_err)
    }
}

/// The engine configurations cuDNN's heuristics in `mode` list for `graph`, best first.
fn engine_configs(graph: &Desc, mode: sys::cudnnBackendHeurMode_t) -> Result<Vec<Desc>> {
    let heur = Desc::new(Kind::CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)?;
    heur.refer(Attr::CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, &[graph])?;
    heur.set(Attr::CUDNN_ATTR_ENGINEHEUR_MODE, &[mode])?;
    let heur = heur.finalize()?;
    let results = Attr::CUDNN_ATTR_ENGINEHEUR_RESULTS;
    let mut count = 0i64;
    // SAFETY: a finalized heuristics descriptor; asking for no elements returns their count.
    unsafe { sys::cudnnBackendGetAttribute(heur.0, results, Type::CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &mut count, std::ptr::null_mut()) }
        .result()
        .map_err(dnn_err)?;
    let configs = (0..count).map(|_| Desc::new(Kind::CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)).collect::<Result<Vec<_>>>()?;
    let mut raw: Vec<cudnnBackendDescriptor_t> = configs.iter().map(|c| c.0).collect();
    let mut got = 0i64;
    // SAFETY: `count` created engine-configuration descriptors for cuDNN to fill.
    unsafe {
        sys::cudnnBackendGetAttribute(
            heur.0,
            results,
            Type::CUDNN_TYPE_BACKEND_DESCRIPTOR,
            count,
            &mut got,
            raw.as_mut_ptr() as *mut c_void,
        )
    }
    .result()
    .map_err(dnn_err)?;
    Ok(configs.into_iter().take(got.max(0) as usize).collect())
}

/// An execution plan of `config` on `handle`, and its workspace.
fn plan(handle: sys::cudnnHandle_t, config: &Desc) -> Result<Plan> {
    let desc = Desc::new(Kind::CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)?;
    desc.set(Attr::CUDNN_ATTR_EXECUTION_PLAN_HANDLE, &[handle])?;
    desc.refer(Attr::CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, &[config])?;
    let desc = desc.finalize()?;
    let (mut got, mut bytes) = (0i64, 0i64);
    let size = Attr::CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE;
    // SAFETY: a finalized plan; one int64 to fill.
    unsafe { sys::cudnnBackendGetAttribute(desc.0, size, Type::CUDNN_TYPE_INT64, 1, &mut got, &mut bytes as *mut i64 as *mut c_void) }
        .result()
        .map_err(dnn_err)?;
    Ok(Plan { desc, workspace: usize::try_from(bytes).unwrap_or(0) })
}
