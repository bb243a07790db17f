//! `prune` on the CPU: which runs of a folder go (those a newer run repeats record by record),
//! which stay (a run cut short, a run with one record of its own), how tune runs fold into the
//! tunings file, and that what a report reads is the same before and after.

mod common;

use std::path::{Path, PathBuf};

use kernel_lab::analysis::prune;
use kernel_lab::analysis::store::{self, Group};
use kernel_lab::schema::run::{Header, Record, RunKind};

fn h200(date: &str, kind: RunKind) -> Header {
    let mut h = common::bench_header(date, common::device("NVIDIA H200", 0, "GPU-1234abcd", "gpu-host"));
    h.run.kind = kind;
    h
}

/// A run file in `dir`'s model folder, ended (`complete`) or cut short.
fn write(dir: &Path, date: &str, kind: RunKind, records: &[Record], complete: bool) -> PathBuf {
    let mut w = store::Writer::create(dir, &h200(date, kind)).unwrap();
    for r in records {
        w.append(r).unwrap();
    }
    if complete {
        w.append(&Record::End(Default::default())).unwrap();
    }
    w.path
}

fn entry(variant: &str, n: u64, rate: f64) -> Record {
    Record::Entry(Box::new(common::sgemm_entry(variant, n, rate)))
}

fn tuning(variant: &str, n: u64, date: &str, rate: f64) -> Record {
    Record::Tuning(Box::new(kernel_lab::schema::tuning::TuneRecord {
        date: date.into(),
        best_rate: Some(rate),
        ..common::tune_record("sgemm", variant, &[n; 3])
    }))
}

/// Rows of (variant, shape, rate).
type Rows = Vec<(String, String, Option<f64>)>;

/// What a report reads from `dir`: the merged entries and tunings.
fn read(dir: &Path) -> (Rows, Rows) {
    let runs = store::read(&[dir.to_path_buf()]).unwrap();
    let v = &store::views(&runs, Group::Model)[0];
    let mut entries: Vec<_> = v.entries.iter().map(|e| (e.variant.clone(), e.shape.clone(), e.rate)).collect();
    let mut tunings: Vec<_> = v.tuning.iter().map(|t| (t.variant.clone(), t.shape.clone(), t.best_rate)).collect();
    entries.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    tunings.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    (entries, tunings)
}

#[test]
fn a_run_goes_where_newer_runs_repeat_every_record_it_holds_and_a_report_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let old = write(d, "2026-01-01T00:00:00Z", RunKind::Bench, &[entry("sgemm_01", 1024, 1.0), entry("sgemm_02", 1024, 2.0)], true);
    let own = write(d, "2026-01-02T00:00:00Z", RunKind::Bench, &[entry("sgemm_01", 1024, 1.5), entry("sgemm_03", 512, 3.0)], true);
    let cut = write(d, "2026-01-03T00:00:00Z", RunKind::Bench, &[entry("sgemm_01", 1024, 1.7)], false);
    let new = write(d, "2026-01-04T00:00:00Z", RunKind::Bench, &[entry("sgemm_01", 1024, 1.8), entry("sgemm_02", 1024, 2.5)], true);
    let t1 = write(d, "2026-01-05T00:00:00Z", RunKind::Tune, &[tuning("sgemm_08", 4096, "2026-01-05T00:00:00Z", 40.0)], true);
    let t2 = write(
        d,
        "2026-01-06T00:00:00Z",
        RunKind::Tune,
        &[tuning("sgemm_08", 4096, "2026-01-06T00:00:00Z", 45.0), tuning("sgemm_08", 1024, "2026-01-06T00:00:00Z", 30.0)],
        true,
    );
    // A search killed, then taken up by t2 (same arguments): t2's run holds what it finished.
    let killed = write(d, "2026-01-05T12:00:00Z", RunKind::Tune, &[], false);
    // A search killed after every finished one: `tune` with its arguments would take it up.
    let searching = write(d, "2026-01-07T00:00:00Z", RunKind::Tune, &[], false);
    let before = read(d);

    let plan = prune::plan(d).unwrap();
    assert_eq!(plan.superseded, vec![killed.clone(), old.clone()], "the run whose every entry a newer run repeats, the search taken up");
    assert_eq!(plan.folded, vec![t1.clone(), t2.clone()]);
    assert!(old.exists() && t1.exists(), "planning changes nothing");
    prune::apply(&plan).unwrap();

    for gone in [&old, &t1, &t2, &killed] {
        assert!(!gone.exists(), "{} left", gone.display());
    }
    for kept in [&own, &cut, &new, &searching] {
        assert!(kept.exists(), "{} removed: a run of its own entry, or cut short", kept.display());
    }
    let tunings = old.parent().unwrap().join(prune::TUNINGS);
    let run = store::read_run(&tunings).unwrap();
    assert_eq!(run.header.run.kind, RunKind::Tune);
    assert_eq!(run.header.run.date, "2026-01-06T00:00:00Z", "dated by its newest record, so a merge reads it last");
    assert_eq!(read(d), before, "a report reads what it read before");
    assert_eq!(read(d).1.iter().find(|t| t.1 == "4096x4096x4096").unwrap().2, Some(45.0), "the newer tuning of a shape");

    // Pruned again: nothing more goes, and a later tune run folds into the tunings file.
    let again = prune::plan(d).unwrap();
    assert!(again.superseded.is_empty() && again.folded.is_empty() && again.tunings.is_empty());
    write(d, "2026-01-08T00:00:00Z", RunKind::Tune, &[tuning("sgemm_08", 1024, "2026-01-08T00:00:00Z", 33.0)], true);
    let before = read(d);
    prune::apply(&prune::plan(d).unwrap()).unwrap();
    assert_eq!(read(d), before);
    assert_eq!(store::read_run(&tunings).unwrap().records.len(), 2, "one record a variant and shape");
}

#[test]
fn a_folder_that_cannot_be_read_is_an_error_that_names_it() {
    let err = prune::plan(Path::new("/nonexistent/results")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/results"), "{err}");
}

#[test]
fn a_folder_of_two_gpu_models_is_refused_not_pruned_across_them() {
    let dir = tempfile::tempdir().unwrap();
    let first = write(dir.path(), "2026-01-01T00:00:00Z", RunKind::Bench, &[entry("sgemm_01", 1024, 1.0)], true);
    let mut h100 = h200("2026-01-02T00:00:00Z", RunKind::Bench);
    h100.device.name = "NVIDIA H100 80GB HBM3".into();
    let mut w = store::Writer::create(dir.path(), &h100).unwrap();
    w.append(&entry("sgemm_01", 1024, 2.0)).unwrap();
    w.append(&Record::End(Default::default())).unwrap();
    // Copied into the H200's folder by hand, the H100's run would repeat the H200's entry.
    std::fs::rename(&w.path, first.parent().unwrap().join("copied.jsonl")).unwrap();
    let err = prune::plan(dir.path()).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{err}");
    assert!(err.to_string().contains("2 GPU models") && !err.to_string().contains('\n'), "{err}");
    assert!(first.exists());
}

#[test]
fn only_a_folder_is_pruned_and_never_the_named_baselines() {
    let dir = tempfile::tempdir().unwrap();
    let run = write(dir.path(), "2026-01-01T00:00:00Z", RunKind::Tune, &[tuning("sgemm_08", 4096, "2026-01-01T00:00:00Z", 1.0)], true);
    let file = prune::plan(&run).unwrap_err();
    assert!(file.to_string().contains("not a folder") && file.exit_code() == 2, "{file}");
    let baselines = run.parent().unwrap().join("baselines");
    std::fs::create_dir(&baselines).unwrap();
    std::fs::copy(&run, baselines.join("before.jsonl")).unwrap();
    let named = prune::plan(&baselines).unwrap_err();
    assert!(named.to_string().contains("baselines") && named.exit_code() == 2, "{named}");
    // From the folder above, the baselines are not read, so not pruned.
    let plan = prune::plan(dir.path()).unwrap();
    assert!(plan.superseded.iter().chain(&plan.folded).all(|p| !p.starts_with(&baselines)));
}
