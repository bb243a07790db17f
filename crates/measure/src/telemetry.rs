//! What the GPU did while a variant was timed, from NVML (loaded at run time; without it the
//! lab runs and records no telemetry): SM and memory clocks, power, temperature, throttle
//! reasons, and the energy the board drew. A background thread reads NVML every `PERIOD`
//! while the timed launches run, the board's energy counter and instantaneous power with the
//! rest.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::{Clock, TemperatureSensor};
use nvml_wrapper::enums::device::SampleValue;
use nvml_wrapper::structs::device::FieldId;
use nvml_wrapper::Nvml;

use crate::schema::telemetry::{PowerSource, Telemetry};

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
    /// NVML's instantaneous power field (mW), where it has one; an H200 refreshes it every
    /// 100 ms. power_mw is a one-second average on Ampere and later but
    /// GA100 (NVML's documentation).
    instant_mw: Option<u64>,
    /// The energy counter (mJ), and when it was read (seconds into the window).
    energy_mj: Option<u64>,
    at_s: f64,
}

fn nvml() -> Option<&'static Nvml> {
    static NVML: OnceLock<Option<Nvml>> = OnceLock::new();
    NVML.get_or_init(|| Nvml::init().ok()).as_ref()
}

fn read(index: u32, at_s: f64) -> Option<Reading> {
    let d = nvml()?.device_by_index(index).ok()?;
    Some(Reading {
        sm_mhz: d.clock_info(Clock::SM).ok()?,
        mem_mhz: d.clock_info(Clock::Memory).unwrap_or(0),
        power_mw: d.power_usage().unwrap_or(0),
        temp_c: d.temperature(TemperatureSensor::Gpu).unwrap_or(0),
        reasons: d.current_throttle_reasons().map(|r| r.bits()).unwrap_or(0),
        instant_mw: instant_power_mw(&d),
        energy_mj: d.total_energy_consumption().ok(),
        at_s,
    })
}

/// NVML_FI_DEV_POWER_INSTANT.
const POWER_INSTANT: FieldId = FieldId(186);

fn instant_power_mw(d: &nvml_wrapper::Device) -> Option<u64> {
    match d.field_values_for(&[POWER_INSTANT]).ok()?.pop()?.ok()?.value.ok()? {
        SampleValue::U32(v) => Some(v as u64),
        SampleValue::U64(v) => Some(v),
        _ => None,
    }
    .filter(|&mw| mw > 0)
}

/// The SM clock now, MHz, and whether the board is held down by its power cap or heat; None
/// without NVML. What the burst regime checks after each sample.
pub fn clock_now(index: u32) -> Option<(u32, bool)> {
    let d = nvml()?.device_by_index(index).ok()?;
    let reasons = d.current_throttle_reasons().map(|r| r.bits()).unwrap_or(0);
    Some((d.clock_info(Clock::SM).ok()?, THROTTLING.iter().any(|(flag, _)| reasons & flag.bits() != 0)))
}

/// Reads NVML in the background from `start` until `finish`.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Reading>>,
    started: Instant,
}

impl Sampler {
    /// None where NVML cannot read the GPU (no NVML, or an index it does not know).
    pub fn start(index: u32) -> Option<Sampler> {
        read(index, 0.0)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            let mut out = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                if let Some(r) = read(index, started.elapsed().as_secs_f64()) {
                    out.push(r);
                }
                std::thread::sleep(PERIOD);
            }
            out
        });
        Some(Sampler { stop, thread, started })
    }

    pub fn finish(self) -> Option<Telemetry> {
        let wall_s = self.started.elapsed().as_secs_f64();
        self.stop.store(true, Ordering::Relaxed);
        let readings = self.thread.join().ok()?;
        summarize(&readings, wall_s)
    }
}

/// Mean power between the energy counter's first and last steps inside the window. On an H200
/// the counter steps every 24-154 ms (median 100), so a difference read at the window's edges
/// counts a whole step's energy for part of its time: 804 W over 0.23 s under a 700 W cap. None
/// where it stepped fewer than twice.
fn stepped_power(readings: &[Reading]) -> Option<f64> {
    let steps: Vec<(f64, u64)> = readings
        .windows(2)
        .filter_map(|w| match (w[0].energy_mj, w[1].energy_mj) {
            (Some(a), Some(b)) if b > a => Some((w[1].at_s, b)),
            _ => None,
        })
        .collect();
    let (&(t0, e0), &(t1, e1)) = (steps.first()?, steps.last()?);
    (t1 > t0).then(|| (e1 - e0) as f64 / 1e3 / (t1 - t0))
}

fn summarize(readings: &[Reading], wall_s: f64) -> Option<Telemetry> {
    if readings.is_empty() {
        return None;
    }
    let median = |mut v: Vec<u32>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let mean_power = readings.iter().map(|r| r.power_mw as f64).sum::<f64>() / readings.len() as f64 / 1e3;
    let seen = readings.iter().fold(0u64, |acc, r| acc | r.reasons);
    // None unless every reading has one.
    let instant: Option<u64> = readings.iter().map(|r| r.instant_mw).sum();
    // Instant readings, where NVML has them for the whole window, are the direct measure; the
    // counter's steps are next (a step's timing is known to the reading period); the power
    // readings, a trailing average on recent boards, last.
    let (power_w, source) = if let Some(mw) = instant {
        (mw as f64 / readings.len() as f64 / 1e3, PowerSource::Instant)
    } else if let Some(w) = stepped_power(readings) {
        (w, PowerSource::Counter)
    } else {
        (mean_power, PowerSource::Readings)
    };
    Some(Telemetry {
        readings: readings.len(),
        sm_mhz_min: readings.iter().map(|r| r.sm_mhz).min().unwrap_or(0),
        sm_mhz_median: median(readings.iter().map(|r| r.sm_mhz).collect()),
        mem_mhz_median: median(readings.iter().map(|r| r.mem_mhz).collect()),
        power_w,
        power_source: Some(source),
        power_w_max: readings.iter().map(|r| r.power_mw).max().unwrap_or(0) as f64 / 1e3,
        temp_c_max: readings.iter().map(|r| r.temp_c).max().unwrap_or(0),
        energy_j: (source != PowerSource::Readings).then_some(power_w * wall_s),
        wall_s,
        throttle: THROTTLING.iter().filter(|(flag, _)| seen & flag.bits() != 0).map(|(_, name)| name.to_string()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(at_s: f64, sm: u32, power_mw: u32, reasons: ThrottleReasons, energy_mj: Option<u64>) -> Reading {
        Reading { sm_mhz: sm, mem_mhz: 3200, power_mw, temp_c: 50, reasons: reasons.bits(), instant_mw: None, energy_mj, at_s }
    }

    #[test]
    fn summaries() {
        let none = ThrottleReasons::empty();
        let t =
            summarize(&[r(0.0, 1980, 600_000, none, None), r(0.005, 1755, 700_000, ThrottleReasons::SW_POWER_CAP, None)], 0.02).unwrap();
        assert_eq!((t.sm_mhz_min, t.sm_mhz_median), (1755, 1980));
        assert!((t.power_w - 650.0).abs() < 1e-9, "no energy counter: the readings' mean: {}", t.power_w);
        assert_eq!(t.energy_j, None);
        assert_eq!(t.throttle, vec!["power cap".to_string()]);
        assert!(t.throttled());
        let t = summarize(&[r(0.0, 1980, 500_000, ThrottleReasons::GPU_IDLE, None)], 0.01).unwrap();
        assert!(!t.throttled(), "idle is not throttling");
        assert!(summarize(&[], 1.0).is_none());
    }

    #[test]
    fn power_from_instant_readings_else_the_counters_steps() {
        // 650 W, the counter stepping 13 J every 20 ms, at 5 ms and 25 ms into a 45 ms window:
        // its edges' difference (26 J over 45 ms) would read 578 W.
        let e = |i: u64| Some(1_000_000 + 13_000 * (i >= 1) as u64 + 13_000 * (i >= 5) as u64);
        let readings: Vec<Reading> = (0..9).map(|i| r(i as f64 * 0.005, 1700, 400_000, ThrottleReasons::empty(), e(i))).collect();
        let t = summarize(&readings, 0.045).unwrap();
        assert!((t.power_w - 650.0).abs() < 1e-6, "{}", t.power_w);
        assert!((t.energy_j.unwrap() - 650.0 * 0.045).abs() < 1e-6);
        assert_eq!(t.power_source, Some(PowerSource::Counter));
        let one_step = summarize(&readings[..4], 0.02).unwrap();
        assert!((one_step.power_w - 400.0).abs() < 1e-9, "one step: the readings' mean");
        assert_eq!((one_step.power_source, one_step.energy_j), (Some(PowerSource::Readings), None));
        // Instant readings in every reading win over the counter; missing from one, they do not.
        let mut with_instant: Vec<Reading> = readings.iter().map(|x| Reading { instant_mw: Some(690_000), ..*x }).collect();
        let t = summarize(&with_instant, 0.045).unwrap();
        assert_eq!((t.power_w, t.power_source), (690.0, Some(PowerSource::Instant)));
        with_instant[3].instant_mw = None;
        assert_eq!(summarize(&with_instant, 0.045).unwrap().power_source, Some(PowerSource::Counter));
    }
}
