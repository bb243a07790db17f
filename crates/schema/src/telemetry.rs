//! What NVML saw while a variant was timed: clocks, power, temperature, throttling, energy.

use serde::{Deserialize, Serialize};

/// The summary stored with an entry.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Telemetry {
    /// NVML readings taken while the timed launches ran.
    pub readings: usize,
    pub sm_mhz_min: u32,
    pub sm_mhz_median: u32,
    pub mem_mhz_median: u32,
    /// Mean board power over the timed launches, from what `power_source` names. Runs that name
    /// no source (older files) divided the energy counter's difference at the window's edges by
    /// the window: off by up to a step's energy (about 100 ms of power) over short windows.
    pub power_w: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_source: Option<PowerSource>,
    pub power_w_max: f64,
    pub temp_c_max: u32,
    /// Energy over the timed launches, joules (with the L2 flushes between them): the mean power
    /// times the window; None where that power is the readings' mean.
    pub energy_j: Option<f64>,
    pub wall_s: f64,
    /// The throttling reasons NVML reported at least once.
    pub throttle: Vec<String>,
}

/// Where a mean power comes from.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PowerSource {
    /// NVML's instantaneous power field, in every reading of the window.
    Instant,
    /// The energy counter, between its first and last steps inside the window.
    Counter,
    /// The mean of NVML's power readings (a trailing average on recent boards).
    Readings,
}

impl Telemetry {
    pub fn throttled(&self) -> bool {
        !self.throttle.is_empty()
    }
}
