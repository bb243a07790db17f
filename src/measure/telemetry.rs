//! What the GPU did while a variant was timed, from NVML (loaded at run time; without it the
//! lab runs and records no telemetry): SM and memory clocks, power, temperature, throttle
//! reasons, and the energy the board drew. A background thread reads NVML every `PERIOD`
//! while the timed launches run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::Nvml;

use crate::schema::telemetry::Telemetry;

const PERIOD: Duration = Duration::from_millis(5);

/// Reasons that mean the clocks were held down by power or heat: a run that saw one is throttled.
const THROTTLING: &[(ThrottleReasons, &str)] = &[
    (ThrottleReasons::SW_POWER_CAP, "power cap"),
    (ThrottleReasons::HW_SLOWDOWN, "hardware slowdown"),
    (ThrottleReasons::SW_THERMAL_SLOWDOWN, "software thermal slowdown"),
    (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hardware thermal slowdown"),
    (ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN, "power brake"),
];

#[derive(Clone, Copy)]
struct Reading {
    sm_mhz: u32,
    mem_mhz: u32,
    power_mw: u32,
    temp_c: u32,
    reasons: u64,
}

fn nvml() -> Option<&'static Nvml> {
    static NVML: OnceLock<Option<Nvml>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().ok()).as_ref()
}

fn read(index: u32) -> Option<Reading> {
    let d = nvml()?.device_by_index(index).ok()?;
    Some(Reading {
        sm_mhz: d.clock_info(Clock::SM).ok()?,
        mem_mhz: d.clock_info(Clock::Memory).unwrap_or(0),
        power_mw: d.power_usage().unwrap_or(0),
        temp_c: d.temperature(TemperatureSensor::Gpu).unwrap_or(0),
        reasons: d.current_throttle_reasons().map(|r| r.bits()).unwrap_or(0),
    })
}

fn energy_mj(index: u32) -> Option<u64> {
    nvml()?.device_by_index(index).ok()?.total_energy_consumption().ok()
}

/// The SM clock now, MHz, and whether the board is held down by its power cap or heat; None
/// without NVML. What the burst regime checks after each sample.
pub fn clock_now(index: u32) -> Option<(u32, bool)> {
    let r = read(index)?;
    Some((r.sm_mhz, THROTTLING.iter().any(|(flag, _)| r.reasons & flag.bits() != 0)))
}

/// Reads NVML in the background from `start` until `finish`.
pub struct Sampler {
    index: u32,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Reading>>,
    energy_start: Option<u64>,
    started: Instant,
}

impl Sampler {
    /// None where NVML cannot read the GPU (no NVML, or an index it does not know).
    pub fn start(index: u32) -> Option<Sampler> {
        read(index)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut out = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                if let Some(r) = read(index) {
                    out.push(r);
                }
                std::thread::sleep(PERIOD);
            }
            out
        });
        Some(Sampler { index, stop, thread, energy_start: energy_mj(index), started: Instant::now() })
    }

    pub fn finish(self) -> Option<Telemetry> {
        let wall_s = self.started.elapsed().as_secs_f64();
        let energy = self.energy_start.zip(energy_mj(self.index)).map(|(a, b)| b.saturating_sub(a) as f64 / 1e3);
        self.stop.store(true, Ordering::Relaxed);
        let readings = self.thread.join().ok()?;
        summarize(&readings, energy, wall_s)
    }
}

fn summarize(readings: &[Reading], energy_j: Option<f64>, wall_s: f64) -> Option<Telemetry> {
    if readings.is_empty() {
        return None;
    }
    let median = |mut v: Vec<u32>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let mean_power = readings.iter().map(|r| r.power_mw as f64).sum::<f64>() / readings.len() as f64 / 1e3;
    let seen = readings.iter().fold(0u64, |acc, r| acc | r.reasons);
    Some(Telemetry {
        readings: readings.len(),
        sm_mhz_min: readings.iter().map(|r| r.sm_mhz).min().unwrap_or(0),
        sm_mhz_median: median(readings.iter().map(|r| r.sm_mhz).collect()),
        mem_mhz_median: median(readings.iter().map(|r| r.mem_mhz).collect()),
        power_w: energy_j.filter(|&e| e > 0.0 && wall_s > 0.0).map_or(mean_power, |e| e / wall_s),
        power_w_max: readings.iter().map(|r| r.power_mw).max().unwrap_or(0) as f64 / 1e3,
        temp_c_max: readings.iter().map(|r| r.temp_c).max().unwrap_or(0),
        energy_j,
        wall_s,
        throttle: THROTTLING.iter().filter(|(flag, _)| seen & flag.bits() != 0).map(|(_, name)| name.to_string()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries() {
        let r =
            |sm, power_mw, reasons: ThrottleReasons| Reading { sm_mhz: sm, mem_mhz: 3200, power_mw, temp_c: 50, reasons: reasons.bits() };
        let t = summarize(&[r(1980, 600_000, ThrottleReasons::empty()), r(1755, 700_000, ThrottleReasons::SW_POWER_CAP)], Some(13.0), 0.02)
            .unwrap();
        assert_eq!((t.sm_mhz_min, t.sm_mhz_median), (1755, 1980));
        assert!((t.power_w - 650.0).abs() < 1e-9, "energy / wall time: {}", t.power_w);
        assert_eq!(t.throttle, vec!["power cap".to_string()]);
        assert!(t.throttled());
        let t = summarize(&[r(1980, 500_000, ThrottleReasons::GPU_IDLE)], None, 0.01).unwrap();
        assert!(!t.throttled(), "idle is not throttling");
        assert!((t.power_w - 500.0).abs() < 1e-9, "no energy counter: the readings' mean");
        assert!(summarize(&[], None, 1.0).is_none());
    }
}
