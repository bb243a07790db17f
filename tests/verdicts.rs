//! Verdicts from run files to exit code: synthetic runs written with the store's writer into a
//! temporary folder, read back as a user's `compare` would, and which run measured each entry.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use kernel_lab::analysis::store;
use kernel_lab::schema::device::DeviceInfo;
use kernel_lab::schema::entry::{Entry, L2Flush, Paired, Timing};
use kernel_lab::schema::run::{Header, Record, Regime};
use kernel_lab::schema::stats::{Interval, Summary};

fn device() -> DeviceInfo {
    common::device("NVIDIA H200", 0, "GPU-a", "gpu-host")
}

fn header(date: &str) -> Header {
    common::bench_header(date, device())
}

/// An sgemm variant at 4096³ paired with cuBLAS at `ratio` ± 0.5%, 2.8 ms a launch.
fn paired(variant: &str, ratio: f64) -> Entry {
    Entry {
        time: Summary::of(&[2.8]),
        vs_baseline: Some(ratio),
        timing: Some(Timing {
            regime: Regime::Sustained,
            flush: Some(L2Flush::Loads),
            dropped: 0,
            median: Interval { value: 2.8, low: 2.79, high: 2.81 },
            launches: 1,
        }),
        paired: Some(Paired { ratio: Interval { value: ratio, low: ratio * 0.995, high: ratio * 1.005 }, pairs: 20, baseline_ms: 2.7 }),
        ..common::sgemm_entry(variant, 4096, 40.0 * ratio)
    }
}

/// A complete run of `entries` dated `date` under `dir`; its file.
fn run(dir: &Path, date: &str, entries: &[Entry]) -> PathBuf {
    let mut w = store::Writer::create(dir, &header(date)).unwrap();
    for e in entries {
        w.append(&Record::Entry(Box::new(e.clone()))).unwrap();
    }
    w.append(&Record::End(Default::default())).unwrap();
    w.path
}

fn lab(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_kernel-lab")).args(args).output().unwrap()
}

/// `compare base new` with `more` arguments: its exit code, stdout and stderr.
fn compare(base: &Path, new: &Path, more: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["compare", "--base", base.to_str().unwrap(), "--new", new.to_str().unwrap()];
    args.extend(more);
    let out = lab(&args);
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn compare_exits_1_on_slower_and_0_otherwise() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, slower, faster, same) =
        (tmp.path().join("base"), tmp.path().join("slower"), tmp.path().join("faster"), tmp.path().join("same"));
    run(&base, "2026-11-29T00:00:00Z", &[paired("a", 0.9), paired("b", 0.5)]);
    run(&slower, "2026-11-30T00:00:00Z", &[paired("a", 0.8), paired("b", 0.5)]);
    run(&faster, "2026-11-30T00:00:00Z", &[paired("a", 1.0), paired("b", 0.5)]);
    run(&same, "2026-11-30T00:00:00Z", &[paired("a", 0.901), paired("b", 0.5)]);

    let (code, out, err) = compare(&base, &slower, &[]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("2 entries: 0 faster, 1 slower, 1 the same, 0 unjudged"), "{out}");
    let row = out.lines().find(|l| l.contains(" a ")).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains("SLOWER") && row.contains("-11.1%") && row.contains("paired ratio"), "{row}");

    let (code, out, err) = compare(&base, &faster, &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("1 faster, 0 slower, 1 the same"), "{out}");
    let (code, out, _) = compare(&base, &same, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("0 faster, 0 slower, 2 the same"), "{out}");
    // A threshold above the change: nothing slower, exit 0.
    let (code, out, _) = compare(&base, &slower, &["--threshold", "12"]);
    assert_eq!(code, Some(0), "{out}");
    // A run file on either side, as well as a folder.
    let file = std::fs::read_dir(slower.join("nvidia-h200-sm_90")).unwrap().next().unwrap().unwrap().path();
    assert_eq!(compare(&base, &file, &[]).0, Some(1));

    // JSON: one document on stdout, a row per entry; the summary on stderr; the same exit code.
    let (code, out, err) = compare(&base, &slower, &["--format", "json"]);
    assert_eq!(code, Some(1), "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).expect("stdout is one JSON document");
    let verdicts: Vec<(&str, &str, &str)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["variant"].as_str().unwrap(), r["basis"].as_str().unwrap(), r["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(verdicts, [("a", "paired-ratio", "SLOWER"), ("b", "paired-ratio", "SAME")]);
    assert!(err.contains("1 slower"), "{err}");
    // Markdown: the same verdicts in a table.
    let (code, out, _) = compare(&base, &slower, &["--format", "markdown"]);
    assert!(code == Some(1) && out.contains("| SLOWER") && out.contains("| SAME"), "{out}");
}

#[test]
fn compare_judges_against_every_base_run_and_says_when_nothing_is_in_common() {
    let tmp = tempfile::tempdir().unwrap();
    let (base, new, other) = (tmp.path().join("base"), tmp.path().join("new"), tmp.path().join("other"));
    // Two base runs of unchanged code, 0.85 and 0.9: 0.86 now is inside their span, so the same,
    // though 4% below the newest.
    run(&base, "2026-11-28T00:00:00Z", &[paired("a", 0.85)]);
    run(&base, "2026-11-29T00:00:00Z", &[paired("a", 0.9)]);
    run(&new, "2026-11-30T00:00:00Z", &[paired("a", 0.86)]);
    let (code, out, err) = compare(&base, &new, &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("-4.4%") && out.contains("1 the same"), "{out}");
    // Nothing in common: a usage error, one line, exit 2.
    run(&other, "2026-11-30T00:00:00Z", &[paired("z", 0.86)]);
    let (code, out, err) = compare(&base, &other, &[]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("no entry in common") && err.trim_end().lines().count() == 1, "{err}");
}

#[test]
fn a_view_says_which_run_measured_each_entry() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "2026-11-28T00:00:00Z", &[paired("a", 0.8), paired("b", 0.7)]);
    run(tmp.path(), "2026-11-30T00:00:00Z", &[paired("c", 0.6), paired("a", 0.9)]);
    // Written last, dated between the two: a view orders its runs by date.
    run(tmp.path(), "2026-11-29T00:00:00Z", &[paired("b", 0.75)]);
    let runs = store::read(&[tmp.path().to_path_buf()]).unwrap();
    let views = store::views(&runs, store::Group::Model);
    let v = &views[0];
    let dates: Vec<&str> = v.runs.iter().map(|r| r.date.as_str()).collect();
    assert_eq!(dates, ["2026-11-28T00:00:00Z", "2026-11-29T00:00:00Z", "2026-11-30T00:00:00Z"]);
    let measured: Vec<(&str, f64, &str)> =
        v.entries.iter().zip(&v.entry_runs).map(|(e, &r)| (e.variant.as_str(), e.vs_baseline.unwrap(), dates[r])).collect();
    assert_eq!(
        measured,
        [("a", 0.9, "2026-11-30T00:00:00Z"), ("b", 0.75, "2026-11-29T00:00:00Z"), ("c", 0.6, "2026-11-30T00:00:00Z")],
        "each entry with the run of its newest measurement"
    );
    assert_eq!(v.entry_runs.len(), v.entries.len());
}
