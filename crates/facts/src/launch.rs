//! Each family's launch protocol: which defines the host reads and what they decide (the grid,
//! the argument path, dynamic shared memory, a thread-block cluster, the family's own
//! parameters). A variant's launch is parsed once from its configuration into a typed [`Launch`];
//! the build parses every manifest entry's, so a variant whose defines contradict its family's
//! protocol fails the build with the entry's line, and the tuner drops candidates that would.
//!
//! Defines not named here are the kernel's own (tile shapes, unrolling); the host never reads them.

use serde::{Deserialize, Serialize};

use crate::arch::{ArchReq, ARCHS};
use crate::family::{FamilyId, Protocol};
use crate::hopper::Layout;

/// How many blocks a launch has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Grid {
    /// ceil(cols / x) x ceil(rows / y) blocks: GEMM tiles of C (x = BN, y = BM), transpose tiles
    /// (x = TILE_X, y = TILE_Y).
    Tiles { x: u32, y: u32 },
    /// `blocks_per_sm` x the SM count: a grid-stride or persistent grid. With `resident`, no more
    /// per SM than fit at once (the l2 sweep and the peak loops need every block running).
    PerSm { blocks_per_sm: u32, resident: bool },
    /// One block per threads x `per_thread` elements.
    Elements { per_thread: u32 },
    /// One block per threads elements; multi-pass until one block is left (the reduction rungs
    /// without BLOCKS_PER_SM).
    PerThread,
    /// One block per `per_block` rows (the softmax and layernorm rungs: a thread, a warp or a
    /// block a row).
    Rows { per_block: u32 },
}

/// STREAM's four operations (the memory family's OP, lab.h's LAB_OP_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StreamOp {
    Copy,
    Scale,
    Add,
    Triad,
}

impl StreamOp {
    /// Input arrays it reads (b, or b and c).
    pub fn reads(self) -> u32 {
        match self {
            StreamOp::Copy | StreamOp::Scale => 1,
            StreamOp::Add | StreamOp::Triad => 2,
        }
    }
}

/// What a family's kernels take, and the constants its host code needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Params {
    Stream {
        op: StreamOp,
    },
    /// DATA picks the working set: 0 random bits, 1 floats in [0, 1).
    L2 {
        data: u32,
    },
    /// The single-pass rung leaves the total in dst[0] (one launch); the others run again on
    /// their partials.
    Reduce {
        single_pass: bool,
    },
    Transpose,
    Softmax,
    SoftmaxBwd,
    LayerNorm,
    LayerNormBwd,
    /// lab_gemm_f32_args / lab_gemm_tc_args, or with `tma_bk` lab_gemm_tma_args whose tensor maps
    /// load boxes BK deep; `tile` is (BM, BN), the block's tile of C (a persistent kernel's grid
    /// does not say it); `stream_k`: the kernel needs its args' stream-K scratch (and, sgemm,
    /// a 1-D grid of the whole waves' tiles and one stream-K block a resident slot);
    /// `pad_rows`: A and B reach it with rows zero-padded to whole float4s (lab_pad_rows);
    /// `split_k`: that many blocks (grid z) share each tile's K, adding into a zeroed C;
    /// `layout`: the tensor-map path's shared memory, planned by the build (`hopper::Layout`).
    Gemm {
        tma_bk: Option<u32>,
        tile: (u32, u32),
        stream_k: bool,
        pad_rows: bool,
        split_k: u32,
        layout: Option<Layout>,
    },
    /// lab_batchnorm_args, on a grid-stride grid.
    BatchNorm,
    /// lab_conv_args; the grid's tiles are the implicit GEMM's (`reads`).
    Conv,
    /// PREC is a lab.h LAB_* precision code; a task is ITERS x CHAINS x OPS operations; ACC
    /// accumulator elements per chain and TASK_THREADS threads per task (a warp unless a
    /// warpgroup); MMA_K the mma's K where the precision has more than one shape.
    Peak {
        prec: u32,
        iters: u32,
        chains: u32,
        ops: u32,
        acc: u32,
        task_threads: u32,
        mma_k: Option<u32>,
    },
}

/// What fits on a GPU at once, which a grid sized by residency (`Grid::PerSm`) follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fit {
    pub sms: u32,
    /// Blocks of the kernel one SM holds at once.
    pub blocks_per_sm: u32,
    /// Clusters of the kernel the GPU holds at once (a clustered kernel's; 0 otherwise).
    pub clusters: u32,
}

/// A variant's launch, typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    pub grid: Grid,
    pub params: Params,
    /// LAB_DYN_SMEM: dynamic shared memory per block, bytes (the kernel sizes its buffer with it).
    pub dyn_smem_bytes: u32,
    /// CLUSTER_X/Y/Z: thread-block cluster shape (sm_90+); [1, 1, 1] without one. The host rounds
    /// the grid up to whole clusters; the kernel guards the blocks past the edge.
    pub cluster: [u32; 3],
}

/// The defines a protocol reads: what `kernel-lab list` and the README's protocol table show.
pub fn reads(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Stream => "OP (LAB_OP_*); BLOCKS_PER_SM for a grid-stride grid of that many blocks per SM, else UNROLL and VEC (elements per thread)",
        Protocol::L2 => "BLOCKS_PER_SM (a resident grid); DATA (0 random bits, 1 floats)",
        Protocol::Reduce => "BLOCKS_PER_SM for a grid-stride grid, else one block per BLOCK_X elements per pass; SINGLE_PASS (needs BLOCKS_PER_SM)",
        Protocol::Transpose => "TILE_X, TILE_Y (the tile one block moves)",
        Protocol::Softmax | Protocol::SoftmaxBwd | Protocol::LayerNorm => ROWS,
        Protocol::LayerNormBwd => "BLOCKS_PER_SM (a resident grid: each block a slab of rows, the grid meeting at a barrier); ROWS_PER_BLOCK (rows of its slab a block takes at a time: BLOCK_X / ROWS_PER_BLOCK threads a row)",
        Protocol::Sgemm => "BM, BN (the tile of C one block computes); PAD_ROWS = 1: A and B arrive with rows zero-padded to whole float4s (a copy inside the timed work where they are not); SPLIT_K: blocks (grid z) sharing each tile's K, adding into C, which the host zeroes first (timed); STREAMK = 1: a 1-D grid whose last blocks (the SMs times the blocks an SM holds) split the last partial wave's k-steps, with the args' scratch",
        Protocol::TensorCore => TENSOR_CORE,
        Protocol::BatchNorm => "BLOCKS_PER_SM (a grid-stride grid of that many blocks per SM)",
        Protocol::Conv => "BM, BN (the block's tile of the implicit GEMM: BM output pixels, the grid's x, by BN output channels, its y)",
        Protocol::Peak => "PREC (LAB_*), ITERS, CHAINS, OPS, BLOCKS_PER_SM; ACC, TASK_THREADS, MMA_K where they apply",
    }
}

/// The row-wise families' protocol.
const ROWS: &str = "ROWS_PER_BLOCK (rows a block takes: BLOCK_X / ROWS_PER_BLOCK threads a row)";

/// The Tensor Core GEMM families' protocol.
const TENSOR_CORE: &str =
    "BM, BN; TMA = 1 with BK for the tensor-map path (sm_90+); PERSISTENT = 1 for one block an SM, or with CLUSTER_Y one cluster for each that fits (STREAMK = 1 splits its last wave, without a cluster); without TMA, STREAMK = 1 is the sgemm protocol's: a 1-D grid whose last blocks split the last partial wave's k-steps, the args lab_gemm_f32_args with its scratch (with PERSISTENT = 1 only those blocks, each walking whole tiles first)";

/// The argument struct of lab.h a kernel of `family` with `launch` takes: what the host passes
/// it, and what the build holds each kernel's signature to (a static_assert beside its source).
pub fn abi(family: FamilyId, launch: &Launch) -> &'static str {
    match (family.protocol(), launch.params) {
        (Protocol::Stream, _) => "lab_stream_args",
        (Protocol::L2, _) => "lab_l2_args",
        (Protocol::Reduce, _) => "lab_reduce_args",
        (Protocol::Transpose, _) => "lab_transpose_args",
        (Protocol::Softmax, _) => "lab_softmax_args",
        (Protocol::SoftmaxBwd, _) => "lab_softmax_bwd_args",
        (Protocol::LayerNorm, _) => "lab_layernorm_args",
        (Protocol::LayerNormBwd, _) => "lab_layernorm_bwd_args",
        (Protocol::Peak, _) => "lab_peak_args",
        (Protocol::Conv, _) => "lab_conv_args",
        (Protocol::BatchNorm, _) => "lab_batchnorm_args",
        (Protocol::Sgemm, _) => "lab_gemm_f32_args",
        // The Tensor Core families: the tensor-map path, else stream-K on the sgemm protocol's
        // args with their scratch, else the plain Tensor Core GEMM's.
        (Protocol::TensorCore, Params::Gemm { tma_bk: Some(_), .. }) => "lab_gemm_tma_args",
        (Protocol::TensorCore, Params::Gemm { stream_k: true, .. }) => "lab_gemm_f32_args",
        (Protocol::TensorCore, _) => "lab_gemm_tc_args",
    }
}

/// The defines the build derives for a kernel of `family` with `launch`, on nvcc's and NVRTC's
/// command lines alike. `LAB_ARGS` names `abi`'s struct: a kernel that serves two launches
/// (fp16_04: the Tensor Core GEMM's struct, or the sgemm protocol's with STREAMK = 1) takes it
/// rather than choosing by an `#if` of its own, so the kernel and the host read the choice from
/// one function. `LAB_ELEM` names the element type of a family that does not store fp32
/// (`FamilyId::storage`); fp32 families' command lines go without it. LAB_RING_BYTES,
/// LAB_SLICE_BYTES and LAB_C_BUFS are a Hopper GEMM's shared-memory plan (`hopper::Layout`).
pub fn generated_defines(family: FamilyId, launch: &Launch) -> Vec<String> {
    let mut d = vec![format!("-DLAB_ARGS={}", abi(family, launch))];
    if family.storage() != crate::family::Storage::Fp32 {
        d.push(format!("-DLAB_ELEM={}", family.storage().c_type()));
    }
    if let Params::Gemm { layout: Some(layout), .. } = launch.params {
        d.extend(layout.defines());
    }
    d
}

/// The names `generated_defines` may define: where a kernel's source and the headers it includes
/// name none of them, they change nothing it compiles to (`jit::hash` leaves them out there).
pub const GENERATED: [&str; 5] = ["LAB_ARGS", "LAB_ELEM", "LAB_RING_BYTES", "LAB_SLICE_BYTES", "LAB_C_BUFS"];

/// Every family: LAB_DYN_SMEM (dynamic shared memory) and CLUSTER_X/Y/Z (sm_90+).
pub const COMMON: &str = "LAB_DYN_SMEM (dynamic shared memory, bytes); CLUSTER_X, CLUSTER_Y, CLUSTER_Z (a cluster, sm_90+)";

impl Launch {
    /// Whether blocks of one launch wait for each other: the layer-norm backward's grid barrier,
    /// a persistent stream-K block waiting for the pieces of its tile. Such a grid is resident
    /// (no larger than fits at once) and launched cooperatively, so all its blocks run together;
    /// other resident grids (the l2 sweep, persistent tiles without stream-K) launch plainly.
    pub fn blocks_wait_for_each_other(&self) -> bool {
        let resident = matches!(self.grid, Grid::PerSm { resident: true, .. });
        resident && matches!(self.params, Params::LayerNormBwd | Params::Gemm { stream_k: true, .. })
    }

    /// The launch of a configuration (`value` looks up a define or BLOCK_X/Y/Z) of `family`,
    /// declared for `arch`; Err says which define is missing or contradicts the protocol.
    pub fn parse(family: &str, arch: &ArchReq, value: &dyn Fn(&str) -> Option<i64>) -> Result<Launch, String> {
        let get = |name: &str| value(name);
        let need = |name: &str| -> Result<u32, String> {
            let v = get(name).ok_or_else(|| format!("the {family} protocol needs the define {name}"))?;
            u32::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| format!("{name} = {v} must be a positive 32-bit integer"))
        };
        let flag = |name: &str| -> Result<bool, String> {
            match get(name) {
                None | Some(0) => Ok(false),
                Some(1) => Ok(true),
                Some(v) => Err(format!("{name} = {v}: the {family} protocol takes 0 or 1")),
            }
        };
        let per_sm = |resident: bool| need("BLOCKS_PER_SM").map(|blocks_per_sm| Grid::PerSm { blocks_per_sm, resident });
        let id = FamilyId::parse(family).ok_or_else(|| {
            format!("family '{family}' has no launch protocol: add its row (name, role, protocol, storage) to crates/facts/src/family.rs, and its module to crates/measure/src/families")
        })?;
        let (grid, params) = match id.protocol() {
            Protocol::Stream => {
                let op = match get("OP") {
                    Some(0) => StreamOp::Copy,
                    Some(1) => StreamOp::Scale,
                    Some(2) => StreamOp::Add,
                    Some(3) => StreamOp::Triad,
                    Some(v) => return Err(format!("OP = {v} is not a LAB_OP_* operation (0 copy, 1 scale, 2 add, 3 triad)")),
                    None => return Err("the memory protocol needs the define OP".into()),
                };
                let grid = match get("BLOCKS_PER_SM") {
                    Some(_) => per_sm(false)?,
                    None => Grid::Elements { per_thread: need("UNROLL")? * need("VEC")? },
                };
                (grid, Params::Stream { op })
            }
            Protocol::L2 => {
                let data = match get("DATA") {
                    Some(d @ (0 | 1)) => d as u32,
                    Some(v) => return Err(format!("DATA = {v}: the l2 protocol takes 0 (random bits) or 1 (floats)")),
                    None => return Err("the l2 protocol needs the define DATA".into()),
                };
                (per_sm(true)?, Params::L2 { data })
            }
            Protocol::Reduce => {
                let single_pass = flag("SINGLE_PASS")?;
                let grid = match get("BLOCKS_PER_SM") {
                    Some(_) => per_sm(false)?,
                    None if single_pass => return Err("SINGLE_PASS = 1 needs BLOCKS_PER_SM (one launch, a fixed grid)".into()),
                    None => Grid::PerThread,
                };
                (grid, Params::Reduce { single_pass })
            }
            Protocol::Transpose => (Grid::Tiles { x: need("TILE_X")?, y: need("TILE_Y")? }, Params::Transpose),
            Protocol::Softmax => (Grid::Rows { per_block: need("ROWS_PER_BLOCK")? }, Params::Softmax),
            Protocol::SoftmaxBwd => (Grid::Rows { per_block: need("ROWS_PER_BLOCK")? }, Params::SoftmaxBwd),
            Protocol::LayerNorm => (Grid::Rows { per_block: need("ROWS_PER_BLOCK")? }, Params::LayerNorm),
            Protocol::LayerNormBwd => {
                need("ROWS_PER_BLOCK")?;
                (per_sm(true)?, Params::LayerNormBwd)
            }
            Protocol::Sgemm => {
                let stream_k = flag("STREAMK")?;
                let split_k = get("SPLIT_K").map_or(Ok(1), |_| need("SPLIT_K"))?;
                if stream_k && split_k > 1 {
                    return Err(format!("STREAMK = 1 takes SPLIT_K = 1, not {split_k} (stream-K splits K itself)"));
                }
                let tile = (need("BM")?, need("BN")?);
                (
                    Grid::Tiles { x: tile.1, y: tile.0 },
                    Params::Gemm { tma_bk: None, tile, stream_k, pad_rows: flag("PAD_ROWS")?, split_k, layout: None },
                )
            }
            Protocol::TensorCore => {
                let tma_bk = if flag("TMA")? {
                    if !arch_at_least(arch, 90) {
                        return Err(format!("TMA = 1 needs an sm_90 or newer arch requirement, not {}", arch.describe()));
                    }
                    Some(need("BK")?)
                } else {
                    None
                };
                // PERSISTENT = 1: one resident block an SM, walking the tiles; STREAMK = 1 splits
                // its last wave. The host reads these two for the grid and the args; the kernel's
                // own choices (PINGPONG, SLICED_C and what they need) are its static_asserts'.
                let persistent = flag("PERSISTENT")?;
                let stream_k = flag("STREAMK")?;
                // Without TMA, STREAMK = 1 is the sgemm protocol's stream-K, one tile a block or
                // (PERSISTENT) one block a stream-K slot walking the whole tiles first.
                if persistent && !stream_k && tma_bk.is_none() {
                    return Err("PERSISTENT = 1 without TMA needs STREAMK = 1 (the walk gives its last partial wave to stream-K)".into());
                }
                if stream_k && !persistent && tma_bk.is_some() {
                    return Err("STREAMK = 1 with TMA = 1 needs PERSISTENT = 1 (stream-K splits a persistent grid's last wave)".into());
                }
                if stream_k && get("CLUSTER_Y").is_some_and(|c| c > 1) {
                    return Err("STREAMK = 1 takes no cluster (a stream-K piece belongs to one block)".into());
                }
                let grid = if persistent {
                    Grid::PerSm { blocks_per_sm: 1, resident: true }
                } else {
                    Grid::Tiles { x: need("BN")?, y: need("BM")? }
                };
                // The tensor-map path's shared memory: the plan the kernel is built with, refused
                // here where it does not fit.
                let layout = tma_bk.map(|_| Layout::plan(id, value)).transpose()?;
                (grid, Params::Gemm { tma_bk, tile: (need("BM")?, need("BN")?), stream_k, pad_rows: false, split_k: 1, layout })
            }
            Protocol::BatchNorm => (per_sm(false)?, Params::BatchNorm),
            // Pixels along x, whose 2^31 blocks hold any batch; channels along y.
            Protocol::Conv => (Grid::Tiles { x: need("BM")?, y: need("BN")? }, Params::Conv),
            Protocol::Peak => {
                let prec = get("PREC").ok_or("the peak protocol needs the define PREC")?;
                let prec = u32::try_from(prec).map_err(|_| format!("PREC = {prec} is not a LAB_* precision"))?;
                let optional = |name: &str, default: u32| get(name).map_or(Ok(default), |_| need(name));
                let params = Params::Peak {
                    prec,
                    iters: need("ITERS")?,
                    chains: need("CHAINS")?,
                    ops: need("OPS")?,
                    acc: optional("ACC", 4)?,
                    task_threads: optional("TASK_THREADS", 32)?,
                    mma_k: get("MMA_K").map(|_| need("MMA_K")).transpose()?,
                };
                (per_sm(true)?, params)
            }
        };
        let dyn_smem_bytes = match get("LAB_DYN_SMEM") {
            None => 0,
            Some(_) => need("LAB_DYN_SMEM")?,
        };
        let largest = largest_smem_optin(arch);
        if dyn_smem_bytes > largest {
            return Err(format!("LAB_DYN_SMEM = {dyn_smem_bytes} is over the {largest} bytes a block may have on {}", arch.describe()));
        }
        let mut cluster = [1u32; 3];
        for (c, name) in cluster.iter_mut().zip(["CLUSTER_X", "CLUSTER_Y", "CLUSTER_Z"]) {
            if get(name).is_some() {
                *c = need(name)?;
            }
        }
        if cluster != [1, 1, 1] {
            if !arch_at_least(arch, 90) {
                return Err(format!("a cluster needs an sm_90 or newer arch requirement, not {}", arch.describe()));
            }
            let blocks: u32 = cluster.iter().product();
            if blocks > 8 {
                return Err(format!("a cluster of {blocks} blocks is over the portable 8"));
            }
        }
        Ok(Launch { grid, params, dyn_smem_bytes, cluster })
    }

    /// The grid for a problem of `cols` x `rows` (Tiles; Rows reads `rows`) or `elements` (Elements, PerThread) on a
    /// GPU where `fit` holds, rounded up to whole clusters. A resident grid of clusters is the
    /// clusters that fit at once (what the GPU's partition into clusters allows, not the SM count
    /// over the cluster's size), the cluster's x blocks along x and its y and z blocks as the
    /// grid's y and z.
    pub fn grid(&self, cols: u64, rows: u64, elements: u64, threads: u32, fit: Fit) -> (u32, u32, u32) {
        if let (Grid::PerSm { resident: true, .. }, true) = (self.grid, self.cluster != [1, 1, 1]) {
            return (fit.clusters.max(1) * self.cluster[0], self.cluster[1], self.cluster[2]);
        }
        let sms = fit.sms as u64;
        let g = match self.grid {
            Grid::Tiles { x, y } => (cols.div_ceil(x as u64), rows.div_ceil(y as u64), 1),
            Grid::PerSm { blocks_per_sm, resident: true } => (sms * blocks_per_sm.min(fit.blocks_per_sm).max(1) as u64, 1, 1),
            Grid::PerSm { blocks_per_sm, resident: false } => (sms * blocks_per_sm as u64, 1, 1),
            Grid::Elements { per_thread } => (elements.div_ceil(threads as u64 * per_thread as u64).max(1), 1, 1),
            Grid::PerThread => (elements.div_ceil(threads as u64).max(1), 1, 1),
            Grid::Rows { per_block } => (rows.div_ceil(per_block as u64).max(1), 1, 1),
        };
        let round = |n: u64, c: u32| n.div_ceil(c as u64) * c as u64;
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        (clamp(round(g.0, self.cluster[0])), clamp(round(g.1, self.cluster[1])), clamp(round(g.2, self.cluster[2])))
    }
}

fn arch_at_least(arch: &ArchReq, sm: u32) -> bool {
    match *arch {
        ArchReq::AtLeast(min) => min >= sm,
        ArchReq::Exact { sm: s, .. } => s >= sm,
    }
}

/// The most dynamic shared memory a block may opt in to on every architecture `arch` admits.
fn largest_smem_optin(arch: &ArchReq) -> u32 {
    ARCHS.iter().filter(|a| arch.admits(a.sm)).map(|a| a.smem_per_block_optin).min().unwrap_or(0)
}
