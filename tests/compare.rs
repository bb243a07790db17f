//! Comparisons of runs: paired ratios judged against both sides' intervals and a threshold;
//! `compare` and `history` on H200 runs (tests/data).

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
    let out = lab(&["compare", "--base", "tests/data/nvidia-h200-sm_90", "--new", "tests/data/nvidia-h200-sm_90"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("0 slower"), "{text}{}", String::from_utf8_lossy(&out.stderr));
    // Two runs on two cards, the sgemm rungs at 4096³ in each: compared by their paired ratios.
    let out = lab(&[
        "compare",
        "--base",
        "tests/data/nvidia-h200-sm_90/2026-11-30T18-54-07Z-vm-gpu0-454.jsonl",
        "--new",
        "tests/data/nvidia-h200-sm_90/2026-11-30T21-19-56Z-vm-gpu0-1208.jsonl",
        "--format",
        "json",
    ]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert!(rows.as_array().unwrap().iter().any(|r| r["basis"] == "paired-ratio"), "the variants by their pairs");
    assert_eq!(
        out.status.code() == Some(1),
        rows.as_array().unwrap().iter().any(|r| r["verdict"] == "SLOWER"),
        "exit 1 exactly when slower"
    );
    let out = lab(&["history", "sgemm_08_double_buffered", "--shape", "4096x4096x4096", "--results-dir", "tests/data"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.matches("4096x4096x4096").count() >= 3, "{text}");
    let bad = |args: &[&str], want: &str| {
        let out = lab(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want) && err.trim_end().lines().count() == 1, "{args:?}: {err}");
    };
    let h200 = "tests/data/nvidia-h200-sm_90";
    bad(&["compare", "--base", h200, "--new", "/no/such"], "cannot read");
    bad(&["compare", "--base", h200, "--new", h200, "--threshold=-1"], "--threshold");
    // tests/data holds two results folders of the H200: the lab's build and an NVRTC-only one.
    bad(&["compare", "--base", "tests/data", "--new", h200], "several GPU models");
    bad(&["compare", "--base", h200, "--new", h200, "--format", "html"], "invalid value 'html'");
    bad(&["compare", "--base", h200], "--new");
    bad(&["compare", "--baseline", "nope", "--results-dir", "tests/data"], "no baseline 'nope'");
    bad(&["history", "nope_99"], "measured 'nope_99'");
    bad(&["bench", "--regime", "cold"], "invalid value 'cold'");
    bad(&["bench", "--target", "0"], "--target must be");
}

/// An sgemm entry with a paired ratio of `ratio` in [low, high] and launches of `ms` (the
/// subject's median) and `baseline_ms`.
fn pair(ratio: f64, low: f64, high: f64, ms: f64, baseline_ms: f64) -> Entry {
    let e = paired("v", ratio, 0.0);
    Entry { time: Summary::of(&[ms]), paired: Some(Paired { ratio: Interval { value: ratio, low, high }, pairs: 20, baseline_ms }), ..e }
}

#[test]
fn the_threshold_is_a_strict_edge_on_either_side() {
    // Binary-exact values, so the change is exactly 0.25: a change equal to the threshold is SAME.
    let old = pair(1.0, 0.999, 1.001, 2.8, 2.7);
    let up = pair(1.25, 1.249, 1.251, 2.8, 2.7);
    let down = pair(0.75, 0.749, 0.751, 2.8, 2.7);
    for (new, verdict) in [(&up, Verdict::Faster), (&down, Verdict::Slower)] {
        let at = compare(std::slice::from_ref(&old), std::slice::from_ref(new), 0.25);
        assert_eq!((at[0].change.abs(), at[0].verdict), (0.25, Verdict::Same));
        assert_eq!(compare(std::slice::from_ref(&old), std::slice::from_ref(new), 0.2499)[0].verdict, verdict);
    }
    // Apart, and faster by less than the threshold: SAME, not FASTER.
    let a_little = pair(1.01, 1.009, 1.011, 2.8, 2.7);
    assert_eq!(verdict(old.clone(), a_little.clone()), Verdict::Same);
    assert_eq!(compare(std::slice::from_ref(&old), &[a_little], 0.0)[0].verdict, Verdict::Faster, "a zero threshold: any change apart");
    // Over the threshold, the intervals touching: SAME; a hair apart: judged.
    assert_eq!(verdict(old.clone(), pair(1.1, 1.001, 1.2, 2.8, 2.7)), Verdict::Same);
    assert_eq!(verdict(old.clone(), pair(1.1, 1.0011, 1.2, 2.8, 2.7)), Verdict::Faster);
    assert_eq!(verdict(old.clone(), pair(0.9, 0.8, 0.999, 2.8, 2.7)), Verdict::Same);
    assert_eq!(verdict(old, pair(0.9, 0.8, 0.9989, 2.8, 2.7)), Verdict::Slower);
}

#[test]
fn a_row_carries_both_intervals_and_the_change_against_the_newest_base() {
    let rows = compare(&[pair(0.8, 0.7, 0.9, 2.8, 2.7), pair(1.0, 0.99, 1.01, 2.8, 2.7)], &[pair(0.5, 0.49, 0.51, 2.8, 2.7)], 0.02);
    let r = &rows[0];
    assert_eq!((r.basis, r.verdict, r.change), (Basis::PairedRatio, Verdict::Slower, -0.5));
    assert_eq!((r.old.value, r.old.low, r.old.high), (1.0, 0.7, 1.01), "the newest's value, the span of both intervals");
    assert_eq!((r.new.value, r.new.low, r.new.high), (0.5, 0.49, 0.51));
    assert_eq!((r.family.as_str(), r.variant.as_str(), r.shape.as_str()), ("sgemm", "v", "4096x4096x4096"));
}

#[test]
fn launches_under_50_us_on_either_side_or_either_run_are_not_judged() {
    let old = pair(1.0, 0.99, 1.01, 2.8, 2.7);
    let new = pair(1.5, 1.49, 1.51, 2.8, 2.7);
    assert_eq!(verdict(old.clone(), new.clone()), Verdict::Faster);
    // The subject's own time, or its baseline's, under 50 µs, in the new run or the old.
    for (o, n) in [
        (old.clone(), pair(1.5, 1.49, 1.51, 0.0499, 2.7)),
        (old.clone(), pair(1.5, 1.49, 1.51, 2.8, 0.0499)),
        (pair(1.0, 0.99, 1.01, 0.0499, 2.7), new.clone()),
        (pair(1.0, 0.99, 1.01, 2.8, 0.0499), new.clone()),
    ] {
        assert_eq!(verdict(o, n), Verdict::Unjudged);
    }
    // 50 µs itself is judged.
    assert_eq!(verdict(old.clone(), pair(1.5, 1.49, 1.51, 0.05, 0.05)), Verdict::Faster);
    // The hot regime times short launches; schema-1 entries (no timing record) are judged whatever
    // their length, as they were before the rule.
    let hot = |e: Entry| with_regime(e, Regime::Hot);
    assert_eq!(compare(&[hot(old.clone())], &[hot(pair(1.5, 1.49, 1.51, 0.01, 0.01))], 0.02)[0].verdict, Verdict::Faster);
    assert_eq!(compare(&[hot(pair(1.0, 0.99, 1.01, 0.01, 0.01))], &[hot(new)], 0.02)[0].verdict, Verdict::Faster);
    let mut untimed = pair(1.5, 1.49, 1.51, 0.01, 0.01);
    untimed.timing = None;
    let mut untimed_old = old;
    untimed_old.timing = None;
    assert_eq!(compare(&[untimed_old], &[untimed], 0.02)[0].verdict, Verdict::Faster);
}

/// A baseline-less entry (a baseline itself) at `rate` TFLOP/s whose median time's interval is
/// ±`half` of it, timed in `regime`.
fn rate_entry(rate: f64, half: f64, regime: Regime) -> Entry {
    let e = paired("cuBLAS", 1.0, 0.0);
    let ms = e.work.flops / (rate * 1e12) * 1e3;
    let median = Interval { value: ms, low: ms * (1.0 - half), high: ms * (1.0 + half) };
    Entry {
        paired: None,
        vs_baseline: None,
        rate: Some(rate),
        time: Summary::of(&[ms]),
        timing: Some(Timing { regime, flush: Some(L2Flush::Loads), dropped: 0, median, launches: 1 }),
        ..e
    }
}

#[test]
fn a_rates_interval_is_its_times_with_the_ends_swapped() {
    let e = rate_entry(500.0, 0.01, Regime::Burst);
    let rows = compare(std::slice::from_ref(&e), &[rate_entry(500.0, 0.01, Regime::Burst)], 0.02);
    let (r, t) = (&rows[0], e.timing.unwrap().median);
    assert_eq!((r.basis, r.verdict, r.change), (Basis::Rate, Verdict::Same, 0.0));
    // The fastest time is the highest rate.
    assert_eq!((r.old.value, r.old.low, r.old.high), (500.0, e.work.rate(e.unit, t.high), e.work.rate(e.unit, t.low)));
    assert!(r.old.low < 500.0 && 500.0 < r.old.high && (r.old.high - 500.0 / 0.99).abs() < 1e-9, "{:?}", r.old);
    // Rates 3% apart whose intervals (±3%) overlap are the same; with ±1% they are apart.
    let judge = |half: f64| compare(&[rate_entry(500.0, half, Regime::Burst)], &[rate_entry(515.0, half, Regime::Burst)], 0.02)[0].verdict;
    assert_eq!((judge(0.03), judge(0.01)), (Verdict::Same, Verdict::Faster));
    let judge = |half: f64| compare(&[rate_entry(500.0, half, Regime::Burst)], &[rate_entry(485.0, half, Regime::Burst)], 0.02)[0].verdict;
    assert_eq!((judge(0.03), judge(0.01)), (Verdict::Same, Verdict::Slower));
    // A median time of 0 has no rate interval: a point.
    let mut zero = rate_entry(500.0, 0.01, Regime::Burst);
    zero.timing = zero.timing.map(|t| Timing { median: Interval { low: 0.0, ..t.median }, ..t });
    let rows = compare(&[zero.clone()], &[zero], 0.02);
    assert_eq!((rows[0].basis, rows[0].old.low, rows[0].old.high), (Basis::Point, 500.0, 500.0));
}

#[test]
fn a_paired_ratio_against_a_rate_is_judged_by_the_point_values() {
    // The variant was timed alone in the old run (a rate) and in pairs in the new one.
    let mut alone = rate_entry(50.0, 0.01, Regime::Burst);
    (alone.variant, alone.vs_baseline) = ("v".into(), Some(0.9));
    let mut paired_now = pair(0.8, 0.79, 0.81, 2.8, 2.7);
    paired_now.timing = paired_now.timing.map(|t| Timing { regime: Regime::Burst, ..t });
    let rows = compare(&[alone], &[paired_now], 0.02);
    let r = &rows[0];
    assert_eq!((r.basis, r.old.value, r.new.value, r.verdict), (Basis::Point, 0.9, 0.8, Verdict::Slower));
    assert_eq!((r.old.low, r.old.high), (0.9, 0.9));
}

#[test]
fn verdicts_are_written_in_capitals_and_bases_in_words() {
    let labels =
        [Verdict::Faster, Verdict::Slower, Verdict::Same, Verdict::Unjudged].map(|v| (v.label(), serde_json::to_string(&v).unwrap()));
    assert_eq!(labels.clone().map(|(l, _)| l), ["FASTER", "SLOWER", "SAME", "UNJUDGED"]);
    assert!(labels.iter().all(|(l, j)| *j == format!("\"{l}\"")));
    assert_eq!([Basis::PairedRatio, Basis::Rate, Basis::Point].map(|b| b.label()), ["paired ratio", "rate", "point"]);
    assert_eq!(serde_json::to_string(&Basis::PairedRatio).unwrap(), "\"paired-ratio\"");
}
