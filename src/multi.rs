//! Several GPUs: how they are linked, peer copies (bandwidth and latency, peer access off and on,
//! and a kernel reading the other GPU's memory), NCCL collectives, and data-parallel scaling of
//! a GEMM step. Written for any number of GPUs; every transfer and collective is checked.
//!
//! NCCL runs in one process and one thread: `ncclCommInitAll` makes a communicator per GPU and
//! each collective is issued for every rank inside one group (nccl-tests' `-g N` mode). That
//! needs no launcher and keeps every rank's events in one place; with a handful of GPUs one
//! thread issues fast enough. NVLink multicast (NVLS) stays off: `NCCL_NVLS_ENABLE=0` unless the
//! environment says otherwise, and the lab never calls cuMulticastCreate.

use std::time::Instant;

use cudarc::driver::sys::{self as dsys, CUevent_flags};
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, DevicePtrMut};
use cudarc::nccl::safe::{group_end, group_start, Comm, NcclType, ReduceOp};
use half::bf16;
use serde::{Deserialize, Serialize};

use crate::device::Gpu;
use crate::error::{LabError, Result};
use crate::families::{self, Shape};
use crate::ffi::lab_stream_args;
use crate::stats::Summary;

/// How a pair of GPUs is connected, in `nvidia-smi topo -m`'s words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Link {
    /// The GPU itself.
    Same,
    /// This many NVLinks join the pair directly.
    NvLink(u32),
    /// PCIe: PIX (one switch), PXB (several switches), PHB (the host bridge), NODE (within a NUMA
    /// node), SYS (across the CPUs' interconnect).
    Pcie(String),
    Unknown,
}

impl Link {
    pub fn label(&self) -> String {
        match self {
            Link::Same => "X".into(),
            Link::NvLink(n) => format!("NV{n}"),
            Link::Pcie(level) => level.clone(),
            Link::Unknown => "?".into(),
        }
    }

    /// From NVML: the NVLinks between the pair, else their closest common PCIe ancestor.
    pub fn classify(nvlinks: u32, ancestor: Option<&str>) -> Link {
        if nvlinks > 0 {
            return Link::NvLink(nvlinks);
        }
        match ancestor {
            Some("internal") => Link::Same,
            Some("single") => Link::Pcie("PIX".into()),
            Some("multiple") => Link::Pcie("PXB".into()),
            Some("hostbridge") => Link::Pcie("PHB".into()),
            Some("node") => Link::Pcie("NODE".into()),
            Some("system") => Link::Pcie("SYS".into()),
            _ => Link::Unknown,
        }
    }
}

/// The GPU-to-GPU part of `nvidia-smi topo -m`'s matrix: one row per GPU, one label per GPU.
pub fn parse_topo_matrix(text: &str) -> std::result::Result<Vec<Vec<String>>, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().ok_or("empty topology")?;
    let gpus = header.split_whitespace().take_while(|c| c.starts_with("GPU")).count();
    if gpus == 0 {
        return Err(format!("no GPU columns in '{}'", header.trim()));
    }
    let rows: Vec<Vec<String>> =
        lines.filter(|l| l.starts_with("GPU")).map(|l| l.split_whitespace().skip(1).take(gpus).map(str::to_string).collect()).collect();
    if rows.len() != gpus || rows.iter().any(|r| r.len() != gpus) {
        return Err(format!("a {gpus}-GPU header but {} complete GPU rows", rows.len()));
    }
    Ok(rows)
}

/// nccl-tests' bus bandwidth: the algorithm bandwidth (bytes / time) times the share of the data
/// each rank must send over its links, so that it compares with the hardware's link rate.
pub fn bus_factor(collective: Collective, ranks: usize) -> f64 {
    let n = ranks as f64;
    match collective {
        Collective::AllReduce => 2.0 * (n - 1.0) / n,
        Collective::AllGather | Collective::ReduceScatter => (n - 1.0) / n,
        Collective::Broadcast => 1.0,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Collective {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
}

impl Collective {
    pub const ALL: [Collective; 4] = [Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter, Collective::Broadcast];
    pub fn label(self) -> &'static str {
        match self {
            Collective::AllReduce => "all-reduce",
            Collective::AllGather => "all-gather",
            Collective::ReduceScatter => "reduce-scatter",
            Collective::Broadcast => "broadcast",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PeerCopy {
    pub src: usize,
    pub dst: usize,
    pub peer_access: bool,
    /// Both directions at once (src -> dst and dst -> src); bytes count both.
    pub bidirectional: bool,
    pub bytes: u64,
    pub time: Summary,
    pub gbs: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelRead {
    pub src: usize,
    pub dst: usize,
    pub bytes: u64,
    /// The lab's vector copy on `dst` reading `src`'s memory directly, bytes read per second.
    pub kernel_gbs: f64,
    /// The copy engine moving the same bytes.
    pub copy_engine_gbs: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CollectiveRun {
    pub collective: Collective,
    pub dtype: String,
    /// nccl-tests' "size": the bytes of the whole result (all ranks' parts for all-gather).
    pub bytes: u64,
    pub time: Summary,
    pub algbw_gbs: f64,
    pub busbw_gbs: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScalingRun {
    pub gemm: String,
    pub gpus: usize,
    /// The global batch's GEMM, m x n x k; each GPU takes m / gpus rows.
    pub shape: String,
    pub gradient_bytes: u64,
    pub step: Summary,
    /// T(1) / (gpus x T(gpus)).
    pub efficiency: Option<f64>,
}

/// Everything `kernel-lab multi` measured, stored in the first GPU's results file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MultiResults {
    pub gpus: Vec<String>,
    pub links: Vec<Vec<Link>>,
    pub can_access_peer: Vec<Vec<bool>>,
    pub copies: Vec<PeerCopy>,
    /// Small copies (4 bytes), microseconds, per ordered pair and peer access.
    pub latency_us: Vec<(usize, usize, bool, f64)>,
    pub kernel_reads: Vec<KernelRead>,
    pub collectives: Vec<CollectiveRun>,
    pub scaling: Vec<ScalingRun>,
    pub nccl_version: String,
    /// The sheet's NVLink bandwidth per GPU (both directions together) for the first GPU, GB/s.
    #[serde(default)]
    pub nvlink_sheet_gbs: Option<u32>,
}

/// A PCI bus id as NVML writes it ("00000000:1B:00.0", or a 4-digit domain), made comparable.
pub fn pci_key(bus_id: &str) -> String {
    let id = bus_id.trim().to_ascii_lowercase();
    match id.split_once(':') {
        Some((domain, rest)) => format!("{:x}:{rest}", u32::from_str_radix(domain, 16).unwrap_or(0)),
        None => id,
    }
}

/// NVLinks between GPUs i and j of a run, from the PCI bus ids at the far end of each one's
/// active links (`remotes`), the run's GPUs' own ids (`buses`) and those of every GPU of the
/// machine (`machine`): links straight to j, else (on an NVSwitch fabric, as on HGX boards,
/// where `nvidia-smi topo -m` also says NV18) the links both have to something that is not a
/// GPU, the fewer of the two.
pub fn nvlinks_between(remotes: &[Vec<String>], buses: &[String], machine: &[String], i: usize, j: usize) -> u32 {
    let direct = remotes[i].iter().filter(|r| **r == buses[j]).count() as u32;
    if direct > 0 {
        return direct;
    }
    let to_switch = |g: usize| remotes[g].iter().filter(|r| !machine.contains(r)).count() as u32;
    to_switch(i).min(to_switch(j))
}

fn nvml_links(gpus: &[Gpu]) -> Vec<Vec<Link>> {
    use nvml_wrapper::enum_wrappers::device::TopologyLevel;
    let Ok(nvml) = nvml_wrapper::Nvml::init() else {
        return vec![vec![Link::Unknown; gpus.len()]; gpus.len()];
    };
    let devs: Vec<_> = gpus.iter().map(|g| nvml.device_by_index(g.info.ordinal as u32).ok()).collect();
    // Every GPU of the machine, so a link to one the run does not use is not taken for a switch.
    let all: Vec<String> = (0..nvml.device_count().unwrap_or(0))
        .filter_map(|i| nvml.device_by_index(i).ok()?.pci_info().ok().map(|p| pci_key(&p.bus_id)))
        .collect();
    let buses: Vec<String> =
        devs.iter().map(|d| d.as_ref().and_then(|d| d.pci_info().ok()).map(|p| pci_key(&p.bus_id)).unwrap_or_default()).collect();
    let remotes: Vec<Vec<String>> = devs
        .iter()
        .map(|d| {
            let Some(d) = d else { return Vec::new() };
            (0..18u32)
                .filter_map(|l| {
                    let link = d.link_wrapper_for(l);
                    link.is_active().unwrap_or(false).then(|| link.remote_pci_info().ok().map(|p| pci_key(&p.bus_id)))?
                })
                .collect()
        })
        .collect();
    (0..gpus.len())
        .map(|i| {
            (0..gpus.len())
                .map(|j| {
                    if i == j {
                        return Link::Same;
                    }
                    let (Some(a), Ok(b)) = (devs[i].as_ref(), nvml.device_by_index(gpus[j].info.ordinal as u32)) else {
                        return Link::Unknown;
                    };
                    let nvlinks = nvlinks_between(&remotes, &buses, &all, i, j);
                    let level = a.topology_common_ancestor(b).ok().map(|t| match t {
                        TopologyLevel::Internal => "internal",
                        TopologyLevel::Single => "single",
                        TopologyLevel::Multiple => "multiple",
                        TopologyLevel::HostBridge => "hostbridge",
                        TopologyLevel::Node => "node",
                        TopologyLevel::System => "system",
                    });
                    Link::classify(nvlinks, level)
                })
                .collect()
        })
        .collect()
}

fn can_access_peer(a: &Gpu, b: &Gpu) -> bool {
    let mut ok = 0;
    // SAFETY: writes one int; both devices exist.
    let r = unsafe { dsys::cuDeviceCanAccessPeer(&mut ok, a.ctx.cu_device(), b.ctx.cu_device()) };
    r == dsys::CUresult::CUDA_SUCCESS && ok == 1
}

/// Lets `a` read and write `b`'s memory (and so lets copies between them go peer to peer).
/// cudarc allocates from the device's stream-ordered memory pool (cuMemAllocAsync), which
/// context peer access does not open: b's pool is opened to a as well.
fn enable_peer_access(a: &Gpu, b: &Gpu) -> Result<()> {
    a.ctx.bind_to_thread()?;
    // SAFETY: a's context is current; b's context is live. "Already enabled" is not an error here.
    let r = unsafe { dsys::cuCtxEnablePeerAccess(b.ctx.cu_ctx(), 0) };
    if !matches!(r, dsys::CUresult::CUDA_SUCCESS | dsys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
        return Err(LabError::Usage(format!("cuCtxEnablePeerAccess({} -> {}): {r:?}", a.info.ordinal, b.info.ordinal)));
    }
    let mut pool = std::ptr::null_mut();
    let access = dsys::CUmemAccessDesc {
        location: dsys::CUmemLocation { type_: dsys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: a.ctx.cu_device() },
        flags: dsys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: writes one pool handle of a live device, then sets one access descriptor on it.
    unsafe {
        dsys::cuDeviceGetMemPool(&mut pool, b.ctx.cu_device()).result()?;
        dsys::cuMemPoolSetAccess(pool, &access, 1).result()?;
    }
    Ok(())
}

fn event(g: &Gpu) -> Result<CudaEvent> {
    Ok(g.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?)
}

/// Times `work` issued on every GPU's stream: events before and after on each; the slowest
/// GPU's time, ms.
fn time_on_all(gpus: &[Gpu], work: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    let starts = gpus
        .iter()
        .map(|g| {
            let e = event(g)?;
            e.record(&g.stream)?;
            Ok(e)
        })
        .collect::<Result<Vec<_>>>()?;
    work()?;
    let mut worst: f64 = 0.0;
    for (g, start) in gpus.iter().zip(&starts) {
        let end = event(g)?;
        end.record(&g.stream)?;
        end.synchronize()?;
        worst = worst.max(start.elapsed_ms(&end)? as f64);
    }
    Ok(worst)
}

/// Enough repetitions that one sample takes about `target_ms`, from one timed launch.
fn reps_for(one_ms: f64, target_ms: f64) -> usize {
    ((target_ms / one_ms.max(1e-4)).ceil() as usize).clamp(1, 1000)
}

const SAMPLES: usize = 15;

/// `bytes` from `src` to `dst` on `dst`'s stream, `reps` times between two events; ms per copy.
fn time_copy(gpus: &[Gpu], bufs: &[CudaSlice<u8>], src: usize, dst: usize, bytes: usize, reps: usize) -> Result<f64> {
    let g = &gpus[dst];
    let (s, _s) = bufs[src].device_ptr(&gpus[src].stream);
    let (d, _d) = bufs[dst].device_ptr(&g.stream);
    let ms = time_on_all(std::slice::from_ref(g), &mut || {
        let stream = g.cu_stream()?;
        for _ in 0..reps {
            // SAFETY: both buffers hold at least `bytes` bytes on their own devices.
            unsafe { cudarc::driver::result::memcpy_peer_async(g.ctx.cu_ctx(), d, gpus[src].ctx.cu_ctx(), s, bytes, stream) }?;
        }
        Ok(())
    })?;
    Ok(ms / reps as f64)
}

/// Both directions at once, by host wall clock around both streams; ms per pair of copies.
fn time_bidirectional(
    gpus: &[Gpu],
    bufs: &[CudaSlice<u8>],
    scratch: &[CudaSlice<u8>],
    a: usize,
    b: usize,
    bytes: usize,
    reps: usize,
) -> Result<f64> {
    let t0 = Instant::now();
    for _ in 0..reps {
        for (src, dst) in [(a, b), (b, a)] {
            let g = &gpus[dst];
            let (s, _s) = bufs[src].device_ptr(&gpus[src].stream);
            let (d, _d) = scratch[dst].device_ptr(&g.stream);
            // SAFETY: as in time_copy; the reverse copy lands in a separate scratch buffer.
            unsafe { cudarc::driver::result::memcpy_peer_async(g.ctx.cu_ctx(), d, gpus[src].ctx.cu_ctx(), s, bytes, g.cu_stream()?) }?;
        }
    }
    for g in [&gpus[a], &gpus[b]] {
        g.stream.synchronize()?;
    }
    Ok(t0.elapsed().as_secs_f64() * 1e3 / reps as f64)
}

/// The first `bytes` of `dst` equal those of `src` (both read back to the host).
fn same_bytes(gpus: &[Gpu], bufs: &[CudaSlice<u8>], src: usize, dst: usize, bytes: usize, what: &str) -> Result<()> {
    let a = gpus[src].stream.clone_dtoh(&bufs[src].slice(..bytes))?;
    let b = gpus[dst].stream.clone_dtoh(&bufs[dst].slice(..bytes))?;
    if a != b {
        let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(0);
        return Err(LabError::Usage(format!("{what}: GPU {dst} holds other bytes than GPU {src} from byte {i}")));
    }
    Ok(())
}

fn summary(samples: &[f64]) -> Result<Summary> {
    Summary::of(samples).ok_or_else(|| LabError::Usage("no timing samples".into()))
}

/// Peer copies for every ordered pair and size, peer access as it is now (`peer`).
fn peer_copies(gpus: &[Gpu], sizes: &[u64], peer: bool, out: &mut MultiResults) -> Result<()> {
    let max = *sizes.iter().max().unwrap_or(&0) as usize;
    let mut bufs = Vec::new();
    let mut scratch = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        let host: Vec<u8> = (0..max).map(|k| (k.wrapping_mul(31) ^ (i + 1).wrapping_mul(97)) as u8).collect();
        bufs.push(g.stream.clone_htod(&host)?);
        // SAFETY: only ever written by copies, then compared after the writes.
        scratch.push(unsafe { g.stream.alloc::<u8>(max) }?);
    }
    let n = gpus.len();
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            // Latency: 4-byte copies back to back on one stream, each waiting for the one before.
            let lat: Vec<f64> = (0..SAMPLES).map(|_| time_copy(gpus, &bufs, src, dst, 4, 100)).collect::<Result<_>>()?;
            out.latency_us.push((src, dst, peer, summary(&lat)?.median_ms * 1e3));
            for &bytes in sizes {
                let bytes = bytes as usize;
                // Poisoned first, so the check below sees what these copies delivered.
                families::poison(&gpus[dst], &mut bufs[dst])?;
                let reps = reps_for(time_copy(gpus, &bufs, src, dst, bytes, 1)?, 5.0);
                let ms: Vec<f64> = (0..SAMPLES).map(|_| time_copy(gpus, &bufs, src, dst, bytes, reps)).collect::<Result<_>>()?;
                let t = summary(&ms)?;
                out.copies.push(PeerCopy {
                    src,
                    dst,
                    peer_access: peer,
                    bidirectional: false,
                    bytes: bytes as u64,
                    gbs: bytes as f64 / t.median_ms / 1e6,
                    time: t,
                });
                same_bytes(gpus, &bufs, src, dst, bytes, "peer copy")?;
            }
        }
    }
    for a in 0..n {
        for b in (a + 1)..n {
            for &bytes in sizes.iter().filter(|&&b| b >= 1 << 20) {
                let bytes = bytes as usize;
                families::poison(&gpus[b], &mut scratch[b])?;
                let reps = reps_for(time_bidirectional(gpus, &bufs, &scratch, a, b, bytes, 1)?, 10.0);
                let ms: Vec<f64> =
                    (0..SAMPLES).map(|_| time_bidirectional(gpus, &bufs, &scratch, a, b, bytes, reps)).collect::<Result<_>>()?;
                let t = summary(&ms)?;
                out.copies.push(PeerCopy {
                    src: a,
                    dst: b,
                    peer_access: peer,
                    bidirectional: true,
                    bytes: 2 * bytes as u64,
                    gbs: 2.0 * bytes as f64 / t.median_ms / 1e6,
                    time: t,
                });
                let got_b = gpus[b].stream.clone_dtoh(&scratch[b].slice(..bytes))?;
                let want_b = gpus[a].stream.clone_dtoh(&bufs[a].slice(..bytes))?;
                if got_b != want_b {
                    return Err(LabError::Usage(format!("bidirectional copy {a} <-> {b}: GPU {b} received other bytes")));
                }
            }
        }
    }
    Ok(())
}

/// The lab's vector copy kernel on `dst` reading `src`'s memory (peer access on), against the
/// copy engine moving the same bytes.
fn kernel_reads(gpus: &mut [Gpu], bytes: usize, out: &mut MultiResults) -> Result<()> {
    let spec = crate::registry::by_name("memory_03_stream_vec4_copy")
        .ok_or_else(|| LabError::Usage("memory_03_stream_vec4_copy is not built".into()))?;
    let n = gpus.len();
    let floats = bytes / 4;
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            let host: Vec<f32> = families::random_f32(floats, (src * 7 + dst) as u64);
            let remote = gpus[src].stream.clone_htod(&host)?;
            // SAFETY: poisoned below, then written by the kernel before it is read back.
            let mut local = unsafe { gpus[dst].stream.alloc::<f32>(floats) }?;
            families::poison(&gpus[dst], &mut local)?;
            let kernel = gpus[dst].kernel(spec)?;
            let g = &gpus[dst];
            let blocks = g.info.sms * kernel.define("BLOCKS_PER_SM")? as u32;
            let (b, _b) = remote.device_ptr(&gpus[src].stream);
            let (a, _a) = local.device_ptr_mut(&g.stream);
            let args = lab_stream_args { a, b, c: b, scalar: 0.0, n: floats as u64 };
            let run = |reps: usize| -> Result<f64> {
                let ms = time_on_all(std::slice::from_ref(g), &mut || {
                    // SAFETY: memory kernels take lab_stream_args; b is src's buffer of n floats,
                    // readable from dst with peer access on; a is dst's buffer of n floats.
                    (0..reps).try_for_each(|_| unsafe { kernel.launch(&g.stream, (blocks, 1, 1), &args) })
                })?;
                Ok(ms / reps as f64)
            };
            let reps = reps_for(run(1)?, 20.0);
            let ms: Vec<f64> = (0..SAMPLES).map(|_| run(reps)).collect::<Result<_>>()?;
            drop((_a, _b));
            let got = g.stream.clone_dtoh(&local)?;
            if got != host {
                return Err(LabError::Usage(format!("GPU {dst}'s kernel read of GPU {src}'s memory copied other values")));
            }
            let kernel_gbs = bytes as f64 / summary(&ms)?.median_ms / 1e6;
            let copy_engine_gbs = out
                .copies
                .iter()
                .filter(|c| c.src == src && c.dst == dst && c.peer_access && !c.bidirectional && c.bytes as usize == bytes)
                .map(|c| c.gbs)
                .next()
                .unwrap_or(f64::NAN);
            out.kernel_reads.push(KernelRead { src, dst, bytes: bytes as u64, kernel_gbs, copy_engine_gbs });
        }
    }
    Ok(())
}

/// Rank r's element i: a small integer, exact in fp32 and bf16, and so are sums of a few ranks.
pub fn value(rank: usize, i: usize) -> f32 {
    ((rank + 1) * (1 + i % 7)) as f32
}

trait Elem: NcclType + cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy + Unpin + 'static {
    const NAME: &'static str;
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
}
impl Elem for f32 {
    const NAME: &'static str = "fp32";
    fn from_f32(x: f32) -> Self {
        x
    }
    fn to_f32(self) -> f32 {
        self
    }
}
impl Elem for bf16 {
    const NAME: &'static str = "bf16";
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

/// What rank r must hold after the collective at element i, with `part` elements per rank's part.
pub fn expected(c: Collective, ranks: usize, rank: usize, i: usize, part: usize) -> f32 {
    match c {
        Collective::AllReduce => (0..ranks).map(|r| value(r, i)).sum(),
        // Part q of the output is rank q's input.
        Collective::AllGather => value(i / part, i % part),
        // Rank r gets the sum of part r of every rank's input.
        Collective::ReduceScatter => (0..ranks).map(|r| value(r, rank * part + i)).sum(),
        Collective::Broadcast => value(0, i),
    }
}

fn collective_runs<T: Elem>(gpus: &[Gpu], comms: &[Comm], sizes: &[u64], out: &mut MultiResults) -> Result<()> {
    let ranks = gpus.len();
    let size_of = std::mem::size_of::<T>() as u64;
    for c in Collective::ALL {
        for &bytes in sizes {
            // nccl-tests' size is the full result; all-gather and reduce-scatter move parts of it.
            let total = (bytes / size_of).max(ranks as u64) as usize / ranks * ranks;
            let part = total / ranks;
            let (send_len, recv_len) = match c {
                Collective::AllReduce | Collective::Broadcast => (total, total),
                Collective::AllGather => (part, total),
                Collective::ReduceScatter => (total, part),
            };
            let mut sends = Vec::new();
            let mut recvs = Vec::new();
            for (r, g) in gpus.iter().enumerate() {
                let host: Vec<T> = (0..send_len).map(|i| T::from_f32(value(r, i))).collect();
                sends.push(g.stream.clone_htod(&host)?);
                recvs.push(g.stream.alloc_zeros::<T>(recv_len)?);
            }
            let issue = |recvs: &mut Vec<CudaSlice<T>>| -> Result<()> {
                group_start().map_err(nccl)?;
                for (r, comm) in comms.iter().enumerate() {
                    let (s, o) = (&sends[r], &mut recvs[r]);
                    match c {
                        Collective::AllReduce => comm.all_reduce(s, o, &ReduceOp::Sum).map(drop),
                        Collective::AllGather => comm.all_gather(s, o).map(drop),
                        Collective::ReduceScatter => comm.reduce_scatter(s, o, &ReduceOp::Sum).map(drop),
                        Collective::Broadcast => comm.broadcast(Some(s), o, 0).map(drop),
                    }
                    .map_err(nccl)?;
                }
                group_end().map(drop).map_err(nccl)
            };
            let time = |recvs: &mut Vec<CudaSlice<T>>, reps: usize| -> Result<f64> {
                Ok(time_on_all(gpus, &mut || (0..reps).try_for_each(|_| issue(recvs)))? / reps as f64)
            };
            for _ in 0..3 {
                issue(&mut recvs)?;
            }
            let reps = reps_for(time(&mut recvs, 1)?, 5.0).min(200);
            let ms: Vec<f64> = (0..SAMPLES).map(|_| time(&mut recvs, reps)).collect::<Result<_>>()?;
            for (r, g) in gpus.iter().enumerate() {
                let got = g.stream.clone_dtoh(&recvs[r])?;
                if let Some(i) = (0..recv_len).find(|&i| got[i].to_f32() != expected(c, ranks, r, i, part)) {
                    return Err(LabError::Usage(format!(
                        "{} {} of {} B: rank {r} element {i} is {} (want {})",
                        c.label(),
                        T::NAME,
                        total as u64 * size_of,
                        got[i].to_f32(),
                        expected(c, ranks, r, i, part)
                    )));
                }
            }
            let t = summary(&ms)?;
            let size = total as u64 * size_of;
            let algbw = size as f64 / t.median_ms / 1e6;
            out.collectives.push(CollectiveRun {
                collective: c,
                dtype: T::NAME.into(),
                bytes: size,
                algbw_gbs: algbw,
                busbw_gbs: algbw * bus_factor(c, ranks),
                time: t,
            });
        }
    }
    Ok(())
}

/// One stage of `measure`: said as it starts, and named in its error.
fn stage<T>(name: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
    eprintln!("multi: {name}");
    run().map_err(|e| LabError::Usage(format!("{name}: {e}")))
}

fn nccl(e: cudarc::nccl::result::NcclError) -> LabError {
    LabError::Usage(format!("NCCL: {e:?}"))
}

/// One data-parallel step on `g` GPUs: each multiplies its m / g rows, then the gradient-sized
/// buffer is all-reduced (not on one GPU, which has nothing to reduce). Median step time, ms.
fn scaling_step(gpus: &mut [Gpu], comms: &[Comm], lab_gemm: bool, mnk: (u64, u64, u64), grad_floats: usize) -> Result<Summary> {
    let fam = families::get("sgemm").ok_or_else(|| LabError::Usage("no sgemm family".into()))?;
    let spec = crate::registry::by_name("sgemm_08_double_buffered").ok_or_else(|| LabError::Usage("sgemm_08 is not built".into()))?;
    let g_n = gpus.len();
    let rows = mnk.0 / g_n as u64;
    let shape = Shape(vec![rows, mnk.1, mnk.2]);
    let mut cases = Vec::new();
    let mut kernels = Vec::new();
    let mut grads = Vec::new();
    let mut sums = Vec::new();
    for (r, g) in gpus.iter_mut().enumerate() {
        cases.push(fam.prepare(g, &shape, 1000 + r as u64)?);
        kernels.push(if lab_gemm { Some(g.kernel(spec)?) } else { None });
        let host: Vec<f32> = (0..grad_floats).map(|i| value(r, i)).collect();
        grads.push(g.stream.clone_htod(&host)?);
        sums.push(g.stream.alloc_zeros::<f32>(grad_floats)?);
    }
    let mut step = |cases: &mut Vec<Box<dyn families::Case>>| -> Result<f64> {
        time_on_all(gpus, &mut || {
            for (r, g) in gpus.iter().enumerate() {
                match &kernels[r] {
                    Some(k) => cases[r].launch(g, k)?,
                    None => cases[r].launch_baseline(g)?,
                }
            }
            if g_n > 1 {
                group_start().map_err(nccl)?;
                for (r, comm) in comms.iter().enumerate() {
                    comm.all_reduce(&grads[r], &mut sums[r], &ReduceOp::Sum).map_err(nccl)?;
                }
                group_end().map_err(nccl)?;
            }
            Ok(())
        })
    };
    for _ in 0..3 {
        step(&mut cases)?;
    }
    let ms: Vec<f64> = (0..20).map(|_| step(&mut cases)).collect::<Result<_>>()?;
    for (r, g) in gpus.iter().enumerate() {
        let c = cases[r].check(g, fam.precision())?;
        if !c.passed() {
            return Err(LabError::Usage(format!("scaling step: GPU {r}'s GEMM failed its check: {}", c.describe())));
        }
        if g_n > 1 {
            let got = g.stream.clone_dtoh(&sums[r])?;
            if let Some(i) = (0..grad_floats).find(|&i| got[i] != (0..g_n).map(|q| value(q, i)).sum::<f32>()) {
                return Err(LabError::Usage(format!("scaling step: GPU {r}'s all-reduced gradient is wrong at {i}")));
            }
        }
    }
    summary(&ms)
}

/// Measures everything on `gpus` (two or more).
pub fn measure(gpus: &mut [Gpu], copy_sizes: &[u64], collective_sizes: &[u64]) -> Result<MultiResults> {
    if gpus.len() < 2 {
        return Err(LabError::Usage(format!("the multi family needs 2 or more GPUs; this machine has {}", gpus.len())));
    }
    // Before NCCL starts: NVLS stays off unless the caller chose otherwise.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    // SAFETY: dlopen of libnccl by its usual names only.
    if !unsafe { cudarc::nccl::sys::is_culib_present() } {
        return Err(LabError::Usage("NCCL (libnccl.so.2) is not installed: the multi family needs it".into()));
    }
    let n = gpus.len();
    let mut out = MultiResults {
        gpus: gpus.iter().map(|g| format!("{} (GPU {})", g.info.name, g.info.ordinal)).collect(),
        links: nvml_links(gpus),
        can_access_peer: (0..n).map(|i| (0..n).map(|j| i == j || can_access_peer(&gpus[i], &gpus[j])).collect()).collect(),
        copies: Vec::new(),
        latency_us: Vec::new(),
        kernel_reads: Vec::new(),
        collectives: Vec::new(),
        scaling: Vec::new(),
        nccl_version: String::new(),
        nvlink_sheet_gbs: crate::sheet::for_device(&gpus[0].info.name, gpus[0].info.sms).and_then(|g| g.nvlink_gbs),
    };
    stage("peer copies, peer access off", || peer_copies(gpus, copy_sizes, false, &mut out))?;
    let mut peer = true;
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            if out.can_access_peer[i][j] {
                enable_peer_access(&gpus[i], &gpus[j])?;
            } else {
                peer = false;
            }
        }
    }
    if peer {
        stage("peer copies, peer access on", || peer_copies(gpus, copy_sizes, true, &mut out))?;
        let biggest = *copy_sizes.iter().max().unwrap_or(&(1 << 30));
        stage("kernel reads of the other GPU's memory", || kernel_reads(gpus, biggest as usize, &mut out))?;
    }
    let comms = Comm::from_devices(gpus.iter().map(|g| g.stream.clone()).collect()).map_err(nccl)?;
    let mut v = 0i32;
    // SAFETY: writes one int.
    unsafe { cudarc::nccl::sys::ncclGetVersion(&mut v) };
    out.nccl_version = format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
    stage(&format!("NCCL {} collectives, fp32", out.nccl_version), || collective_runs::<f32>(gpus, &comms, collective_sizes, &mut out))?;
    stage("NCCL collectives, bf16", || collective_runs::<bf16>(gpus, &comms, collective_sizes, &mut out))?;
    drop(comms);

    // Data-parallel scaling: a 16384 x 4096 x 4096 GEMM (a BERT-large batch of 32 x 512 tokens
    // through a 4096-wide layer) split along the batch, and its 4096 x 4096 fp32 gradient.
    let mnk = (16384, 4096, 4096);
    let grad = 4096 * 4096;
    for lab_gemm in [false, true] {
        let name = if lab_gemm { "sgemm_08_double_buffered" } else { "cuBLAS SGEMM" };
        let mut t1 = None;
        for g_n in 1..=n {
            let comms = if g_n > 1 {
                Comm::from_devices(gpus[..g_n].iter().map(|g| g.stream.clone()).collect()).map_err(nccl)?
            } else {
                Vec::new()
            };
            let s = stage(&format!("data-parallel step, {name} on {g_n} GPU(s)"), || {
                scaling_step(&mut gpus[..g_n], &comms, lab_gemm, mnk, grad)
            })?;
            let t1v = *t1.get_or_insert(s.median_ms);
            out.scaling.push(ScalingRun {
                gemm: name.into(),
                gpus: g_n,
                shape: format!("{}x{}x{}", mnk.0, mnk.1, mnk.2),
                gradient_bytes: grad as u64 * 4,
                efficiency: Some(t1v / (g_n as f64 * s.median_ms)),
                step: s,
            });
        }
    }
    Ok(out)
}
