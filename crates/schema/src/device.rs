//! The device a run measured, as it described itself, and the ceilings derived from that.

use serde::{Deserialize, Serialize};

use crate::facts::arch;

/// The device's own description, stored with every run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DeviceInfo {
    /// The driver's index of the GPU on its machine.
    pub ordinal: usize,
    pub name: String,
    pub cc_major: u32,
    pub cc_minor: u32,
    pub sms: u32,
    pub l2_bytes: u64,
    pub smem_per_block_optin: u64,
    pub smem_per_sm: u64,
    pub total_mem_bytes: u64,
    /// Maximum SM clock, kHz, as the driver reports it (0 when it reports none).
    pub sm_clock_khz: u64,
    pub mem_clock_khz: u64,
    pub bus_width_bits: u64,
    /// e.g. "13.0"
    pub driver: String,
    /// The GPU's UUID ("GPU-8f3a..."), which tells two cards of one model apart; None in runs
    /// from before it was recorded.
    #[serde(default)]
    pub uuid: Option<String>,
    /// The machine's host name.
    #[serde(default)]
    pub host: Option<String>,
}

impl DeviceInfo {
    pub fn sm(&self) -> u32 {
        self.cc_major * 10 + self.cc_minor
    }

    pub fn arch_name(&self) -> String {
        format!("sm_{}", self.sm())
    }

    /// "nvidia-h200-sm_90": the model's results folder. Every card of a model shares it (the
    /// lent H200 may be a different card each time); runs name the card inside.
    pub fn slug(&self) -> String {
        let mut s: String = self.name.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        while s.contains("--") {
            s = s.replace("--", "-");
        }
        format!("{}-{}", s.trim_matches('-'), self.arch_name())
    }

    /// One card: "vm GPU 1 GPU-ffdd25f9" (host, index, the UUID's first digits), with what is known.
    pub fn card(&self) -> String {
        let mut parts: Vec<String> = self.host.iter().cloned().collect();
        parts.push(format!("GPU {}", self.ordinal));
        parts.extend(self.uuid.as_ref().map(|u| u.chars().take(12).collect::<String>()));
        parts.join(" ")
    }

    /// DRAM bandwidth from the reported memory clock and bus (two transfers per clock), GB/s.
    pub fn peak_dram_gbs(&self) -> Option<f64> {
        (self.mem_clock_khz > 0 && self.bus_width_bits > 0)
            .then(|| 2.0 * self.mem_clock_khz as f64 * 1e3 * self.bus_width_bits as f64 / 8.0 / 1e9)
    }

    /// fp32 FMA rate from SMs x clock x the architecture's lanes per SM, TFLOP/s.
    pub fn peak_fp32_tflops(&self) -> Option<f64> {
        let a = arch::lookup(self.cc_major, self.cc_minor)?;
        (self.sm_clock_khz > 0).then(|| self.sms as f64 * a.fp32_lanes_per_sm as f64 * 2.0 * self.sm_clock_khz as f64 * 1e3 / 1e12)
    }
}
