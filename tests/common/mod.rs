//! What several test files build: an H200 as a run describes it, a bench run's header, a measured
//! sgemm entry, a tuning record, for each file to adjust. Each test binary uses some of them.
#![allow(dead_code)]

use kernel_lab::schema::device::DeviceInfo;
use kernel_lab::schema::entry::{Entry, Kind, Status, Unit, Work};
use kernel_lab::schema::run::{Header, Policy, RunInfo, RunKind, SCHEMA};
use kernel_lab::schema::stats::Summary;
use kernel_lab::schema::tuning::TuneRecord;

/// A GPU called `name` with an H200's figures: index `ordinal`, card `uuid`, on `host`.
pub fn device(name: &str, ordinal: usize, uuid: &str, host: &str) -> DeviceInfo {
    DeviceInfo {
        ordinal,
        name: name.into(),
        cc_major: 9,
        cc_minor: 0,
        sms: 132,
        l2_bytes: 60 << 20,
        smem_per_block_optin: 232448,
        smem_per_sm: 233472,
        total_mem_bytes: 150_000_000_000,
        sm_clock_khz: 1_980_000,
        mem_clock_khz: 3_201_000,
        bus_width_bits: 6016,
        driver: "13.0".into(),
        uuid: Some(uuid.into()),
        host: Some(host.into()),
    }
}

/// The header of a bench run on `dev` started at `date` (RFC 3339): seed 7, the quick policy.
pub fn bench_header(date: &str, dev: DeviceInfo) -> Header {
    let run = RunInfo {
        id: format!("{date} {}", dev.card()),
        kind: RunKind::Bench,
        date: date.into(),
        git_commit: "abc".into(),
        lab_version: "0.1.0".into(),
        nvcc: "13.0.88".into(),
        driver: "13.0".into(),
        command: "kernel-lab bench".into(),
        seed: Some(7),
        policy: Some(Policy::quick()),
        hang_limit_s: None,
    };
    Header { schema: SCHEMA, run, device: dev }
}

/// An ok sgemm entry at n³ with `rate`, unverified, without intervals.
pub fn sgemm_entry(variant: &str, n: u64, rate: f64) -> Entry {
    Entry {
        family: "sgemm".into(),
        variant: variant.into(),
        kind: Kind::Variant,
        rung: 1,
        config: None,
        tuned_at: None,
        shape: format!("{n}x{n}x{n}"),
        dims: vec![n; 3],
        status: Status::Ok,
        reason: None,
        seed: 7,
        verify: None,
        verify_after: None,
        time: Summary::of(&[1.0, 1.1, 0.9]),
        work: Work { flops: 2e9, bytes_read: 8e6, bytes_written: 4e6 },
        unit: Unit::Tflops,
        rate: Some(rate),
        vs_baseline: Some(0.5),
        peak: Some(67.0),
        vs_peak: Some(0.03),
        source_hash: Some("00ff".into()),
        telemetry: None,
        remeasured: false,
        compiled_here: None,
        timing: None,
        paired: None,
        paired_best: None,
        wall: None,
        vendor_algo: None,
    }
}

/// A tuning of `variant` of `family` at `dims` that tried nothing yet: no candidates, no pick.
pub fn tune_record(family: &str, variant: &str, dims: &[u64]) -> TuneRecord {
    TuneRecord {
        family: family.into(),
        variant: variant.into(),
        shape: dims.iter().map(u64::to_string).collect::<Vec<_>>().join("x"),
        dims: dims.to_vec(),
        date: "2026-01-01T00:00:00Z".into(),
        git_commit: "abc".into(),
        budget_s: 60.0,
        space: 10,
        ..TuneRecord::default()
    }
}
