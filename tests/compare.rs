//! Comparisons of runs: paired ratios judged against both sides' intervals and a threshold;
//! `compare` and `history` on the committed runs.

mod common;

use kernel_lab::analysis::compare::{compare, Basis, Verdict};
use kernel_lab::schema::entry::{Entry, L2Flush, Paired, Status, Timing, Work};
use kernel_lab::schema::run::Regime;
use kernel_lab::schema::stats::{Interval, Summary};

/// An sgemm entry whose paired ratio to cuBLAS is `ratio` ± `half` (a share of it).
fn paired(variant: &str, ratio: f64, half: f64) -> Entry {
    let i = Interval { value: ratio, low: ratio * (1.0 - half), high: ratio * (1.0 + half) };
    Entry {
        rung: 8,
        seed: 1,
        time: Summary::of(&[2.8, 2.8, 2.9]),
        work: Work { flops: 1.374e11, bytes_read: 1.3e8, bytes_written: 6.7e7 },
        vs_baseline: Some(ratio),
        peak: None,
        vs_peak: None,
        source_hash: None,
        timing: Some(Timing {
            regime: Regime::Sustained,
            flush: Some(L2Flush::Loads),
            dropped: 0,
            median: Interval { value: 2.8, low: 2.79, high: 2.81 },
            launches: 1,
        }),
        paired: Some(Paired { ratio: i, pairs: 20, baseline_ms: 2.7 }),
        ..common::sgemm_entry(variant, 4096, 48.0 * ratio)
    }
}

fn verdict(old: Entry, new: Entry) -> Verdict {
    let rows = compare(&[old], &[new], 0.02);
    assert_eq!(rows.len(), 1);
    rows[0].verdict
}

#[test]
fn paired_ratios_are_judged_against_both_intervals_and_the_threshold() {
    let base = paired("v", 0.94, 0.004);
    assert_eq!(verdict(base.clone(), paired("v", 0.943, 0.004)), Verdict::Same, "inside each other's interval");
    assert_eq!(verdict(base.clone(), paired("v", 0.94 * 0.97, 0.004)), Verdict::Slower, "3% slower, intervals apart");
    assert_eq!(verdict(base.clone(), paired("v", 0.94 * 0.5, 0.004)), Verdict::Slower, "2x slower");
    assert_eq!(verdict(base.clone(), paired("v", 0.94 * 1.05, 0.004)), Verdict::Faster);
    assert_eq!(verdict(base.clone(), paired("v", 0.94 * 0.985, 0.001)), Verdict::Same, "apart, but under the 2% threshold");
    assert_eq!(verdict(base, paired("v", 0.94 * 0.97, 0.03)), Verdict::Same, "3% slower inside a ±3% interval is noise");
}

#[test]
fn several_base_runs_widen_what_counts_as_noise() {
    let bases = [paired("v", 0.90, 0.004), paired("v", 0.94, 0.004)];
    let rows = compare(&bases, &[paired("v", 0.91, 0.004)], 0.02);
    assert_eq!((rows[0].verdict, (rows[0].change * 100.0).round()), (Verdict::Same, -3.0), "3% below the newest, inside the runs' span");
    assert_eq!(compare(&bases, &[paired("v", 0.85, 0.004)], 0.02)[0].verdict, Verdict::Slower);
}

#[test]
fn launches_under_50_us_are_shown_not_judged() {
    let short = |ratio: f64| {
        let e = paired("v", ratio, 0.004);
        Entry { paired: e.paired.map(|p| Paired { baseline_ms: 0.015, ..p }), ..e }
    };
    assert_eq!(compare(&[short(0.10)], &[short(0.112)], 0.02)[0].verdict, Verdict::Unjudged);
    let mut hot = short(0.112);
    hot.timing = hot.timing.map(|t| Timing { regime: Regime::Hot, ..t });
    let mut hot_base = short(0.10);
    hot_base.timing = hot.timing;
    assert_eq!(compare(&[hot_base], &[hot], 0.02)[0].verdict, Verdict::Faster, "the hot regime times short launches");
}

#[test]
fn entries_without_intervals_are_judged_by_the_threshold() {
    let mut old = paired("v", 1.0, 0.01);
    let mut new = paired("v", 0.95, 0.01);
    for e in [&mut old, &mut new] {
        (e.paired, e.timing) = (None, None);
    }
    let rows = compare(&[old.clone()], &[new.clone()], 0.02);
    assert_eq!((rows[0].basis, rows[0].verdict), (Basis::Point, Verdict::Slower));
    new.rate = Some(old.rate.unwrap() * 0.99);
    assert_eq!(compare(&[old], &[new], 0.02)[0].verdict, Verdict::Same);
}

#[test]
fn sustained_rates_without_a_pair_are_shown_not_judged() {
    // Rates of 2mnk at 4096³ with a median time ±0.3%.
    let unpaired = |rate: f64, regime: Regime| {
        let e = paired("cuBLAS", 1.0, 0.01);
        let ms = e.work.flops / (rate * 1e12) * 1e3;
        let median = Interval { value: ms, low: ms * 0.997, high: ms * 1.003 };
        Entry {
            paired: None,
            rate: Some(rate),
            timing: Some(Timing { regime, flush: Some(L2Flush::Loads), dropped: 0, median, launches: 1 }),
            ..e
        }
    };
    let rows = compare(&[unpaired(715.0, Regime::Sustained)], &[unpaired(688.0, Regime::Sustained)], 0.02);
    assert_eq!((rows[0].basis, rows[0].verdict), (Basis::Rate, Verdict::Unjudged));
    let rows = compare(&[unpaired(715.0, Regime::Burst)], &[unpaired(688.0, Regime::Burst)], 0.02);
    assert_eq!(rows[0].verdict, Verdict::Slower, "the burst regime controls the power state");
}

fn with_regime(mut e: Entry, regime: Regime) -> Entry {
    e.timing = e.timing.map(|t| Timing { regime, ..t });
    e
}

#[test]
fn entries_timed_in_different_regimes_or_after_different_flushes_are_not_compared() {
    let hot = with_regime(paired("v", 0.5, 0.01), Regime::Hot);
    assert!(compare(&[paired("v", 0.9, 0.01)], std::slice::from_ref(&hot), 0.02).is_empty());
    let mut memset = paired("v", 0.9, 0.01);
    memset.timing = memset.timing.map(|t| Timing { flush: Some(L2Flush::Memset), ..t });
    assert!(compare(&[memset.clone()], &[paired("v", 0.9, 0.01)], 0.02).is_empty(), "another flush, another measurement");
    let mut untimed = paired("v", 0.9, 0.01);
    untimed.timing = None;
    assert_eq!(compare(&[untimed.clone()], &[memset], 0.02).len(), 1, "schema 1 was timed back to back after a memset");
    assert!(compare(&[untimed], &[hot], 0.02).is_empty());
}

#[test]
fn only_keys_on_both_sides_and_measured_are_compared() {
    let mut failed = paired("w", 0.5, 0.01);
    failed.status = Status::Failed;
    let rows = compare(&[paired("v", 0.9, 0.01), paired("x", 0.9, 0.01)], &[paired("v", 0.9, 0.01), failed, paired("y", 1.0, 0.01)], 0.02);
    assert_eq!(rows.iter().map(|r| r.variant.as_str()).collect::<Vec<_>>(), ["v"]);
}

fn lab(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kernel-lab")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap()
}

#[test]
fn compare_and_history_on_the_committed_runs() {
    // The same results against themselves: the same, exit 0.
    let out = lab(&["compare", "results/nvidia-h200-sm_90", "results/nvidia-h200-sm_90"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("0 slower"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    // GPU 0's schema-1 file against GPU 1's: other cards, some entries differ by more than 2%.
    let out = lab(&[
        "compare",
        "tests/data/schema1/nvidia-h200-sm_90.json",
        "tests/data/schema1/h200-gpu1/nvidia-h200-sm_90.json",
        "--format",
        "json",
    ]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert!(rows.as_array().unwrap().iter().all(|r| r["basis"] == "point"), "schema 1 kept no intervals");
    assert_eq!(
        out.status.code() == Some(1),
        rows.as_array().unwrap().iter().any(|r| r["verdict"] == "SLOWER"),
        "exit 1 exactly when slower"
    );
    let out = lab(&["history", "sgemm_08_double_buffered", "--shape", "4096x4096x4096"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.matches("4096x4096x4096").count() >= 3, "{text}");
    let bad = |args: &[&str], want: &str| {
        let out = lab(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want) && err.trim_end().lines().count() == 1, "{args:?}: {err}");
    };
    bad(&["compare", "results/nvidia-h200-sm_90", "/no/such"], "cannot read");
    bad(&["compare", "results/nvidia-h200-sm_90", "results/nvidia-h200-sm_90", "--threshold=-1"], "--threshold");
    bad(&["compare", "results", "results/nvidia-h200-sm_90"], "several GPU models");
    bad(&["compare", "results/nvidia-h200-sm_90", "results/nvidia-h200-sm_90", "--format", "csv"], "invalid value 'csv'");
    bad(&["history", "nope_99"], "measured 'nope_99'");
    bad(&["bench", "--regime", "cold"], "invalid value 'cold'");
    bad(&["bench", "--target", "0"], "--target must be");
}
