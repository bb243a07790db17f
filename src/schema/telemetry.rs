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
    /// Mean board power over the timed launches: from the energy counter between its first and
    /// last steps in the window where it stepped twice or more (Volta and later), else the mean
    /// of the power readings. Runs before session 44 divided the counter's difference at the
    /// window's edges by the window, off by up to a step's energy over short windows.
    pub power_w: f64,
    pub power_w_max: f64,
    pub temp_c_max: u32,
    /// Energy over the timed launches, joules (with the L2 flushes between them): the counter's
    /// mean power times the window; None where the counter did not step twice.
    pub energy_j: Option<f64>,
    pub wall_s: f64,
    /// The throttling reasons NVML reported at least once.
    pub throttle: Vec<String>,
}

impl Telemetry {
    pub fn throttled(&self) -> bool {
        !self.throttle.is_empty()
    }
}
