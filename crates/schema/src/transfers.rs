//! Host <-> device transfers as measured: per size, direction and kind of host memory, the PCIe
//! link, and the overlap of a transfer with a kernel.

use serde::{Deserialize, Serialize};

use super::stats::Summary;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Direction {
    H2D,
    D2H,
}

/// Host memory a transfer reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostMemory {
    /// Ordinary memory: the driver stages it through a pinned buffer of its own.
    Pageable,
    /// Page-locked memory the copy engine reads directly.
    Pinned,
}

/// One direction, one kind of host memory, one size.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Transfer {
    pub direction: Direction,
    pub host: HostMemory,
    pub bytes: u64,
    pub time: Summary,
    /// Bytes moved / median time.
    pub gbs: f64,
}

/// A transfer and a kernel, alone and at once on two streams.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Overlap {
    pub transfer_bytes: u64,
    pub kernel: String,
    pub kernel_launches: u32,
    pub kernel_ms: f64,
    pub transfer_ms: f64,
    pub both_ms: f64,
    /// The share of the shorter of the two hidden behind the other: 1 is full overlap, 0 none.
    pub hidden: f64,
}

/// One small kernel launched back to back on one stream: what the host pays a launch, what the GPU
/// takes a kernel where the launches wait queued ahead of it (as in an eager framework's step, whose
/// host runs ahead of the GPU), and the same launches as one CUDA graph.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Launches {
    pub kernel: String,
    /// The bytes the kernel copies, one block's worth.
    pub bytes: u64,
    /// Launches a sample.
    pub launches: u32,
    /// The host's time in the launch calls, microseconds a launch.
    pub host_us: f64,
    /// The GPU's time from the end of a long kernel to the end of the launches queued behind it,
    /// microseconds a kernel: each kernel's run and the gap before the next.
    pub queued_us: f64,
    /// The same launches captured as one CUDA graph, microseconds a kernel.
    pub graph_us: f64,
}

/// The PCIe link as NVML reports it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pcie {
    pub gen_current: u32,
    pub gen_max: u32,
    pub width_current: u32,
    pub width_max: u32,
}

impl Pcie {
    /// The link's data rate per direction, GB/s: per-lane transfer rate x lanes, less encoding.
    pub fn theoretical_gbs(&self) -> Option<f64> {
        let (gts, enc) = match self.gen_current {
            1 => (2.5, 0.8),
            2 => (5.0, 0.8),
            3 => (8.0, 128.0 / 130.0),
            4 => (16.0, 128.0 / 130.0),
            5 => (32.0, 128.0 / 130.0),
            6 => (64.0, 242.0 / 256.0),
            _ => return None,
        };
        Some(gts * enc * self.width_current as f64 / 8.0)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Transfers {
    pub date: String,
    pub git_commit: String,
    pub pcie: Option<Pcie>,
    pub transfers: Vec<Transfer>,
    pub overlap: Option<Overlap>,
    /// Absent from runs made before the lab measured launches.
    pub launches: Option<Launches>,
}
