//! Results on disk: run files written line by line, read back merged, never overwritten; a file
//! that is not a run file is an error that names it.

mod common;

use std::path::{Path, PathBuf};

use kernel_lab::analysis::{baselines, store};
use kernel_lab::measure::verify::{check, Precision};
use kernel_lab::schema::device::DeviceInfo;
use kernel_lab::schema::entry::{Entry, L2Flush, Status};
use kernel_lab::schema::run::{Header, Record, SCHEMA};

fn device(ordinal: usize, uuid: &str) -> DeviceInfo {
    common::device("NVIDIA H200", ordinal, uuid, "gpu-host")
}

fn header(date: &str, dev: DeviceInfo) -> Header {
    common::bench_header(date, dev)
}

fn entry(variant: &str, rate: f64, nan: bool) -> Entry {
    let want = [1.0, 2.0];
    let out = if nan { [1.0, f32::NAN] } else { [1.0, 2.0] };
    Entry {
        status: if nan { Status::Failed } else { Status::Ok },
        verify: Some(check(&out, want.len(), &|i| (i, want[i]), Precision::Fp32)),
        ..common::sgemm_entry(variant, 1024, rate)
    }
}

fn write_run(dir: &Path, h: &Header, entries: &[Entry]) -> PathBuf {
    let mut w = store::Writer::create(dir, h).unwrap();
    for e in entries {
        w.append(&Record::Entry(Box::new(e.clone()))).unwrap();
    }
    w.append(&Record::End(Default::default())).unwrap();
    w.path
}

#[test]
fn a_run_round_trips_including_nan_errors() {
    let dir = tempfile::tempdir().unwrap();
    let h = header("2026-11-29T00:00:00Z", device(0, "GPU-a"));
    let path = write_run(dir.path(), &h, &[entry("a", 2.0, false), entry("b", 1.0, true)]);
    assert_eq!(path.parent().unwrap().file_name().unwrap(), "nvidia-h200-sm_90", "a folder per model");
    let run = store::read_run(&path).unwrap();
    assert_eq!(run.header, h);
    assert!(run.complete);
    let entries: Vec<&Entry> = run.entries().collect();
    assert_eq!(*entries[0], entry("a", 2.0, false));
    assert!(entries[1].verify.as_ref().unwrap().error.is_nan(), "NaN survives as null");
}

#[test]
fn a_rerun_adds_and_the_view_shows_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), &header("2026-11-29T00:00:00Z", device(0, "GPU-a")), &[entry("a", 1.0, false), entry("b", 1.0, false)]);
    write_run(dir.path(), &header("2026-11-30T00:00:00Z", device(0, "GPU-a")), &[entry("a", 3.0, false)]);
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(runs.len(), 2, "both runs are kept");
    let views = store::views(&runs, store::Group::Model);
    assert_eq!(views.len(), 1);
    let v = &views[0];
    let rate = |name: &str| v.entries.iter().find(|e| e.variant == name).unwrap().rate.unwrap();
    assert_eq!((rate("a"), rate("b")), (3.0, 1.0), "the newest a, and b from the first run");
    assert_eq!(v.runs.len(), 2);
}

#[test]
fn a_newer_note_on_the_same_subject_replaces_the_older_in_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let notes = |date: &str, texts: &[&str]| {
        let mut w = store::Writer::create(dir.path(), &header(date, device(0, "GPU-a"))).unwrap();
        for t in texts {
            w.append(&Record::Note { text: t.to_string() }).unwrap();
        }
        w.append(&Record::End(Default::default())).unwrap();
    };
    notes(
        "2026-11-29T00:00:00Z",
        &[
            "tensor 4096x4096x4096: cuBLASLt best (algo 66) ran 1.036x the default call",
            "tensor 8192x8192x8192: cuBLASLt best (algo 66) ran 1.025x the default call",
            "l2: l2_01_working_set: L2 inferred from the knee 54.0 MiB",
            "l2: l2_01_working_set_rotated: L2 inferred from the knee 79.0 MiB",
        ],
    );
    notes(
        "2026-11-30T00:00:00Z",
        &[
            "tensor 4096x4096x4096: cuBLASLt best (algo 66) ran 1.040x the default call",
            "l2: l2_01_working_set: L2 inferred from the knee 53.8 MiB",
        ],
    );
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    let mut notes = store::views(&runs, store::Group::Model).remove(0).notes;
    notes.sort();
    assert_eq!(
        notes,
        [
            "fp16 4096x4096x4096: cuBLASLt best (algo 66) ran 1.040x the default call",
            "fp16 8192x8192x8192: cuBLASLt best (algo 66) ran 1.025x the default call",
            "l2: l2_01_working_set: L2 inferred from the knee 53.8 MiB",
            "l2: l2_01_working_set_rotated: L2 inferred from the knee 79.0 MiB",
        ],
        "the newest note per shape or variant; the others kept (written under the family's old name, read under its new one)"
    );
}

#[test]
fn two_cards_of_one_model_share_a_folder_and_stay_apart() {
    let dir = tempfile::tempdir().unwrap();
    // Two processes at the same second, on two GPUs: two files, nothing lost.
    let same = "2026-11-30T00:00:00Z";
    let p0 = write_run(dir.path(), &header(same, device(0, "GPU-a")), &[entry("a", 1.0, false)]);
    let p1 = write_run(dir.path(), &header(same, device(1, "GPU-b")), &[entry("a", 2.0, false)]);
    assert_ne!(p0, p1);
    assert_eq!(p0.parent(), p1.parent());
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    let cards = store::views(&runs, store::Group::Card);
    assert_eq!(cards.len(), 2, "one view per card");
    let rates: Vec<f64> = cards.iter().map(|v| v.entries[0].rate.unwrap()).collect();
    assert!(rates.contains(&1.0) && rates.contains(&2.0), "{rates:?}");
    assert!(cards[0].label.contains("gpu-host GPU 0 GPU-a"), "{}", cards[0].label);
}

/// A run of entries a, b, c written whole, then `damage` applied to its lines; what `read_run`
/// keeps, and the warnings it gave.
fn damaged(damage: impl Fn(&mut Vec<String>)) -> (PathBuf, store::Run, Vec<String>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let h = header("2026-11-30T00:00:00Z", device(0, "GPU-a"));
    let path = write_run(dir.path(), &h, &[entry("a", 1.0, false), entry("b", 2.0, false), entry("c", 3.0, false)]);
    let mut lines: Vec<String> = std::fs::read_to_string(&path).unwrap().lines().map(String::from).collect();
    damage(&mut lines);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut warnings = Vec::new();
    let run = store::read_run_with(&path, &mut |w| warnings.push(w)).unwrap();
    (path, run, warnings, dir)
}

fn variants(run: &store::Run) -> Vec<&str> {
    run.entries().map(|e| e.variant.as_str()).collect()
}

#[test]
fn a_killed_run_keeps_what_it_finished_and_says_what_it_left_out() {
    // Killed in the middle of its fourth line (lines: header, a, b, c, end): c is torn, no End.
    let (path, run, warnings, _dir) = damaged(|l| {
        l.truncate(4);
        l[3].truncate(30);
    });
    assert!(!run.complete, "no End record");
    assert_eq!(variants(&run), ["a", "b"]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with(&format!("{}:4: ", path.display())), "file:line: {warnings:?}");
}

#[test]
fn a_torn_line_in_the_middle_is_left_out_and_the_rest_kept() {
    let (path, run, warnings, _dir) = damaged(|l| l[2].truncate(25));
    assert_eq!(variants(&run), ["a", "c"], "b's line is torn; c after it is kept");
    assert!(run.complete);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with(&format!("{}:3: ", path.display())), "{warnings:?}");
}

#[test]
fn foreign_lines_anywhere_are_left_out_with_a_warning_each() {
    let (path, run, warnings, _dir) = damaged(|l| {
        // A record kind this schema does not have, in the middle.
        l.insert(2, "{\"record\":\"telemetry\",\"watts\":300}".into());
        // A field of the wrong type (rate as text), last before End.
        let bad = l[4].replace("\"rate\":3.0", "\"rate\":\"fast\"");
        assert_ne!(bad, l[4]);
        l[4] = bad;
        // A blank line holds nothing and is passed over unsaid.
        l.insert(1, String::new());
    });
    assert_eq!(variants(&run), ["a", "b"], "the foreign line and c's mistyped one are left out");
    assert!(run.complete, "the End after them is kept");
    let at: Vec<String> = warnings.iter().map(|w| w.split(": ").next().unwrap().to_string()).collect();
    assert_eq!(at, [format!("{}:4", path.display()), format!("{}:6", path.display())], "{warnings:?}");
    assert!(warnings[1].contains("fast") || warnings[1].contains("invalid type"), "{warnings:?}");
}

#[test]
fn a_damaged_file_is_reported_on_with_its_warning_on_stderr() {
    let (path, _, _, dir) = damaged(|l| l[2].truncate(25));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kernel-lab"))
        .args(["report", "--format", "csv", "--results-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&format!("warning: {}:3: ", path.display())), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 1 + 2, "a header and a and c: {text}");
}

#[test]
fn bad_files_are_errors_that_name_them() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let err = |p: &Path| store::read(&[p.to_path_buf()]).unwrap_err().to_string();
    assert!(err(&dir.path().join("none.jsonl")).contains("cannot read"));
    assert!(err(&write("x.jsonl", "{nope")).contains("not JSON"));
    assert!(err(&write("y.jsonl", "{\"a\":1}")).contains("no schema number"));
    let e = err(&write("z.jsonl", "{\"schema\":999}"));
    assert!(e.contains("schema 999") && e.contains("z.jsonl"), "{e}");
    let e = err(&write("w.json", "{\"schema\":0}"));
    assert!(e.contains("not a run file") && e.contains("w.json"), "{e}");
    // A header of this schema that is not a run's header is foreign too: the file is an error.
    let e = err(&write("v.jsonl", &format!("{{\"schema\":{SCHEMA},\"run\":1}}\n")));
    assert!(e.contains("v.jsonl") && e.contains("does not match results schema"), "{e}");
}

#[test]
fn a_named_baseline_is_a_copy_read_only_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let run = write_run(dir.path(), &header("2026-11-30T00:00:00Z", device(0, "GPU-a")), &[entry("a", 1.0, false)]);
    let saved = baselines::save(&run, "before").unwrap();
    assert_eq!(saved, run.parent().unwrap().join("baselines/before.jsonl"));
    assert_eq!(std::fs::read(&saved).unwrap(), std::fs::read(&run).unwrap());
    assert_eq!(store::read(&[dir.path().to_path_buf()]).unwrap().len(), 1, "the copy is not read again as a run");
    assert_eq!(baselines::find(dir.path(), "before").unwrap(), saved);
    assert!(baselines::find(dir.path(), "after").unwrap_err().to_string().contains("there: before (nvidia-h200-sm_90)"));
    for bad in ["", "../x", "a/b", ".hidden"] {
        assert!(baselines::save(&run, bad).is_err(), "{bad:?}");
    }
    // A second save of the name replaces the first.
    let run2 = write_run(dir.path(), &header("2026-12-01T00:00:00Z", device(0, "GPU-a")), &[entry("a", 2.0, false)]);
    baselines::save(&run2, "before").unwrap();
    assert_eq!(std::fs::read(&saved).unwrap(), std::fs::read(&run2).unwrap());
}

#[test]
fn a_json_file_in_a_results_folder_is_an_error_that_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = write_run(dir.path(), &header("2026-11-30T00:00:00Z", device(0, "GPU-a")), &[entry("a", 1.0, false)]);
    let folder = run.parent().unwrap();
    std::fs::write(folder.join("old.json"), "{\"schema\":1}").unwrap();
    let e = store::read(&[dir.path().to_path_buf()]).unwrap_err().to_string();
    assert!(e.contains("old.json") && e.contains("not a run file"), "{e}");
    // A README beside the runs is not a results file and is passed over.
    std::fs::remove_file(folder.join("old.json")).unwrap();
    std::fs::write(folder.join("README.md"), "# runs").unwrap();
    assert_eq!(store::read(&[dir.path().to_path_buf()]).unwrap().len(), 1);
}

/// The H200 runs kept as test data (copied from the reference results) name the flush each entry
/// was timed after, as every run writes it now.
#[test]
fn the_h200_runs_name_their_flush() {
    let runs = store::read(&[Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nvidia-h200-sm_90")]).unwrap();
    let timed: Vec<_> = runs.iter().flat_map(|r| r.entries()).filter_map(|e| e.timing).collect();
    assert!(timed.len() > 100, "{} timed entries", timed.len());
    assert!(timed.iter().all(|t| t.flush == Some(L2Flush::Loads)), "every entry names its flush");
}

#[test]
fn pytorchs_steps_beside_a_models_runs_are_not_read_as_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_run(dir.path(), &header("2026-11-29T00:00:00Z", device(0, "GPU-a")), &[entry("a", 1.0, false)]);
    let pytorch = path.parent().unwrap().join(store::PYTORCH);
    std::fs::create_dir_all(&pytorch).unwrap();
    std::fs::write(pytorch.join("steps.jsonl"), "{\"workload\":\"resnet50\",\"mode\":\"train\"}\n").unwrap();
    assert_eq!(store::read(&[dir.path().to_path_buf()]).unwrap().len(), 1, "the run, not the steps");
    // Named on its own, the same file is not a run.
    assert!(store::read(&[pytorch.join("steps.jsonl")]).is_err());
}
