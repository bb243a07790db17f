//! What `kernel-lab multi` measured across several GPUs: links, peer copies, kernel reads of
//! peer memory, NCCL collectives, data-parallel scaling.

use serde::{Deserialize, Serialize};

use super::stats::Summary;

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
