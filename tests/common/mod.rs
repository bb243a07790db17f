//! What several test files build: a measured sgemm entry, for each file to adjust.

use kernel_lab::schema::entry::{Entry, Kind, Status, Unit, Work};
use kernel_lab::schema::stats::Summary;

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
