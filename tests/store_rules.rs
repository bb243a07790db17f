//! The rules of the results store a user relies on beyond reading and merging (tests/store.rs):
//! what a run file is named and that a name is never reused, which results folder a view comes
//! from, the newest tuning of a variant and shape replacing the older, notes keyed by subject,
//! the runs of one model, the commit a run names, and a run that records nothing leaving no file.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use kernel_lab::analysis::store;
use kernel_lab::schema::device::DeviceInfo;
use kernel_lab::schema::run::{Header, Phases, Record, RunKind, SCHEMA};
use kernel_lab::schema::tuning::TuneRecord;

fn device(name: &str, host: &str) -> DeviceInfo {
    common::device(name, 3, "GPU-1234abcd", host)
}

fn header(date: &str, dev: DeviceInfo) -> Header {
    common::bench_header(date, dev)
}

fn h200(date: &str) -> Header {
    header(date, device("NVIDIA H200", "gpu-host"))
}

fn write(dir: &Path, h: &Header, records: Vec<Record>) -> PathBuf {
    let mut w = store::Writer::create(dir, h).unwrap();
    for r in &records {
        w.append(r).unwrap();
    }
    w.append(&Record::End(Default::default())).unwrap();
    w.path
}

fn entry(variant: &str, rate: f64) -> Record {
    Record::Entry(Box::new(common::sgemm_entry(variant, 1024, rate)))
}

#[test]
fn a_run_file_is_named_by_date_host_card_and_process_in_characters_every_system_takes() {
    let dir = tempfile::tempdir().unwrap();
    let h = header("2026-11-29T08:15:00Z", device("NVIDIA H200", "lab box.example/1"));
    let path = store::Writer::create(dir.path(), &h).unwrap().path;
    let pid = std::process::id();
    assert_eq!(path, dir.path().join("nvidia-h200-sm_90").join(format!("2026-11-29T08-15-00Z-lab-box-example-1-gpu3-{pid}.jsonl")));
    // Letters, digits, '-' and '_' pass through as they are.
    let h = header("2026_11_29", device("NVIDIA H200", "Node_7-b"));
    let path = store::Writer::create(dir.path(), &h).unwrap().path;
    assert_eq!(path.file_name().unwrap().to_string_lossy(), format!("2026_11_29-Node_7-b-gpu3-{pid}.jsonl"));
}

#[test]
fn a_second_run_of_one_process_in_one_second_gets_a_number_and_never_reuses_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let h = h200("2026-11-29T00:00:00Z");
    let first = write(dir.path(), &h, vec![entry("a", 1.0)]);
    // The first takes the plain name; checked before the others, so a numbering that gives two
    // tries one name fails here instead of searching for ever.
    let stem = format!("2026-11-29T00-00-00Z-gpu-host-gpu3-{}", std::process::id());
    assert_eq!(first.file_name().unwrap().to_string_lossy(), format!("{stem}.jsonl"));
    let second = write(dir.path(), &h, vec![entry("a", 2.0)]);
    let third = write(dir.path(), &h, vec![entry("a", 3.0)]);
    assert_eq!(second.file_name().unwrap().to_string_lossy(), format!("{stem}-2.jsonl"));
    assert_eq!(third.file_name().unwrap().to_string_lossy(), format!("{stem}-3.jsonl"));
    let rate = |p: &Path| store::read_run(p).unwrap().entries().next().unwrap().rate.unwrap();
    assert_eq!((rate(&first), rate(&second), rate(&third)), (1.0, 2.0, 3.0), "each run kept its own file");
}

#[test]
fn a_file_that_cannot_be_created_is_an_error_not_a_search_for_a_free_name() {
    let dir = tempfile::tempdir().unwrap();
    // A host name longer than a file name may be: every numbered name fails the same way, so
    // only "already exists" may move on to the next number. Run apart, so a search that never
    // ends fails this test instead of hanging it.
    let h = header("2026-11-29T00:00:00Z", device("NVIDIA H200", &"h".repeat(300)));
    let root = dir.path().to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(store::Writer::create(&root, &h).map(|w| w.path).map_err(|e| e.to_string()));
    });
    let got = rx.recv_timeout(Duration::from_secs(20)).expect("Writer::create returned");
    let e = got.expect_err("a name too long is an error");
    assert!(e.contains("cannot create"), "{e}");
}

#[test]
fn runs_of_one_model_in_two_results_folders_make_two_views_each_naming_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("main"), dir.path().join("experiment"));
    write(&a, &h200("2026-11-29T00:00:00Z"), vec![entry("x", 1.0)]);
    write(&b, &h200("2026-11-30T00:00:00Z"), vec![entry("x", 2.0)]);
    let runs = store::read(&[a.clone(), b.clone()]).unwrap();
    let views = store::views(&runs, store::Group::Model);
    let got: Vec<(PathBuf, f64)> = views.iter().map(|v| (v.source.clone(), v.entries[0].rate.unwrap())).collect();
    assert_eq!(got, [(a, 1.0), (b, 2.0)], "not merged: each folder's newest stays its own");
}

fn tuning(family: &str, variant: &str, shape: &str, date: &str) -> Record {
    Record::Tuning(Box::new(TuneRecord {
        shape: shape.into(),
        date: date.into(),
        tried: 10,
        best_median_ms: Some(1.0),
        best_rate: Some(1.0),
        ..common::tune_record(family, variant, &[1024; 3])
    }))
}

#[test]
fn a_newer_tuning_replaces_only_the_one_of_its_family_variant_and_shape() {
    let dir = tempfile::tempdir().unwrap();
    let old = "2026-11-29T00:00:00Z";
    let new = "2026-11-30T00:00:00Z";
    write(
        dir.path(),
        &h200(old),
        vec![
            tuning("sgemm", "v1", "1024x1024x1024", old),
            // Each differs from the retuned one in one of the three: each is kept.
            tuning("hgemm", "v1", "1024x1024x1024", old),
            tuning("sgemm", "v2", "1024x1024x1024", old),
            tuning("sgemm", "v1", "2048x2048x2048", old),
        ],
    );
    write(dir.path(), &h200(new), vec![tuning("sgemm", "v1", "1024x1024x1024", new)]);
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    let view = store::views(&runs, store::Group::Model).remove(0);
    let mut got: Vec<String> = view.tuning.iter().map(|t| format!("{} {} {} {}", t.family, t.variant, t.shape, t.date)).collect();
    got.sort();
    assert_eq!(
        got,
        [
            format!("hgemm v1 1024x1024x1024 {old}"),
            format!("sgemm v1 1024x1024x1024 {new}"),
            format!("sgemm v1 2048x2048x2048 {old}"),
            format!("sgemm v2 1024x1024x1024 {old}"),
        ]
    );
}

#[test]
fn each_entry_names_the_run_that_measured_it() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &h200("2026-11-29T00:00:00Z"), vec![entry("a", 1.0), entry("b", 1.0)]);
    write(dir.path(), &h200("2026-11-30T00:00:00Z"), vec![entry("a", 2.0), entry("c", 2.0)]);
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    let v = store::views(&runs, store::Group::Model).remove(0);
    let mut got: Vec<(String, usize)> = v.entries.iter().zip(&v.entry_runs).map(|(e, r)| (e.variant.clone(), *r)).collect();
    got.sort();
    assert_eq!(got, [("a".to_string(), 1), ("b".to_string(), 0), ("c".to_string(), 1)]);
}

fn notes_of(texts_by_run: &[&[&str]]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for (i, texts) in texts_by_run.iter().enumerate() {
        let records = texts.iter().map(|t| Record::Note { text: t.to_string() }).collect();
        write(dir.path(), &h200(&format!("2026-11-2{}T00:00:00Z", i + 1)), records);
    }
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    let mut notes = store::views(&runs, store::Group::Model).remove(0).notes;
    notes.sort();
    notes
}

#[test]
fn a_note_is_about_its_text_before_the_first_colon_and_the_names_after_it() {
    // The subject ends at the first ": " whose next part holds a space: a shape, or a family
    // with a variant's name.
    assert_eq!(
        notes_of(&[
            &["fp16 512: ab x", "l2: v_1: knee at 54 MiB", "l2: v_2: knee at 70 MiB", "no subject here"],
            &["fp16 512: ac y", "l2: v_1: no knee", "plain note"]
        ]),
        ["fp16 512: ac y", "l2: v_1: no knee", "l2: v_2: knee at 70 MiB", "no subject here", "plain note"]
    );
    // A short first part and a long second: the names are found past the first ": ", not
    // before it or at twice its place.
    assert_eq!(
        notes_of(&[
            &["a: b: old x", "a: c: kept y", "family_with_a_long_name: v: one"],
            &["a: b: new x", "family_with_a_long_name: w: two"]
        ]),
        ["a: b: new x", "a: c: kept y", "family_with_a_long_name: v: one", "family_with_a_long_name: w: two"]
    );
}

#[test]
fn the_runs_of_a_model_are_those_in_its_folder_and_none_before_its_first_run() {
    let dir = tempfile::tempdir().unwrap();
    let dev = device("NVIDIA H200", "gpu-host");
    assert!(store::runs_of_model(dir.path(), &dev).unwrap().is_empty(), "no folder yet: no runs, no error");
    write(dir.path(), &h200("2026-11-29T00:00:00Z"), vec![entry("a", 1.0)]);
    write(dir.path(), &header("2026-11-29T00:00:00Z", device("NVIDIA H100 80GB HBM3", "gpu-host")), vec![entry("a", 9.0)]);
    let runs = store::runs_of_model(dir.path(), &dev).unwrap();
    assert_eq!(runs.len(), 1, "only the H200's");
    assert_eq!(runs[0].entries().next().unwrap().rate, Some(1.0));
}

#[test]
fn a_run_that_records_nothing_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let r = store::Recorder::new(dir.path(), h200("2026-11-29T00:00:00Z"));
    assert_eq!(r.finish(Vec::new()).unwrap(), None);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "not even a folder");
}

#[test]
fn a_recorded_run_is_on_disk_as_it_goes_and_ends_with_its_phases() {
    let dir = tempfile::tempdir().unwrap();
    let h = h200("2026-11-29T00:00:00Z");
    let mut r = store::Recorder::new(dir.path(), h.clone());
    r.append(entry("a", 1.0)).unwrap();
    let files: Vec<PathBuf> = std::fs::read_dir(dir.path().join("nvidia-h200-sm_90")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "the file exists at the first record");
    let run = store::read_run(&files[0]).unwrap();
    assert!(!run.complete, "no end yet");
    assert_eq!(run.entries().count(), 1, "the record is on disk before the run ends");
    let path = r.finish(vec![("measure".into(), 1.5)]).unwrap().expect("a file was written");
    assert_eq!(path, files[0]);
    let run = store::read_run(&path).unwrap();
    assert_eq!(run.header, h);
    assert!(run.complete);
    match run.records.last() {
        Some(Record::End(Phases { wall_s, phases })) => {
            assert!(*wall_s >= 0.0 && *wall_s < 600.0, "{wall_s}");
            assert_eq!(phases, &[("measure".to_string(), 1.5)]);
        }
        other => panic!("last record {other:?}"),
    }
}

/// Set in the child processes of `a_run_names_the_kernels_commit_only_where_it_differs`: the kernel
/// set is read once per process, so each case runs in a process of its own.
const CHILD: &str = "STORE_RULES_KERNELS_COMMIT";

#[test]
fn a_run_names_the_kernels_commit_only_where_it_differs() {
    let program = kernel_lab::analysis::store::PROGRAM_COMMIT;
    if let Ok(kernels) = std::env::var(CHILD) {
        let h = store::new_header(RunKind::Bench, &device("NVIDIA H200", "gpu-host"), Some(7), None, None);
        let want = if kernels == program { program.to_string() } else { format!("{program} (kernels {kernels})") };
        assert_eq!(h.run.git_commit, want);
        assert_eq!(h.run.nvcc, "12.9.1");
        assert_eq!((h.schema, h.run.seed, h.run.kind), (SCHEMA, Some(7), RunKind::Bench));
        return;
    }
    for kernels in ["0123456789ab", program] {
        let dir = tempfile::tempdir().unwrap();
        let set = kernel_lab::facts::kernels::KernelSet {
            schema: kernel_lab::facts::kernels::SCHEMA,
            git_commit: kernels.into(),
            nvcc_version: "12.9.1".into(),
            toolkit_lib: PathBuf::new(),
            archs: Vec::new(),
            skipped: Vec::new(),
            sources: Vec::new(),
            headers: Vec::new(),
            variants: Vec::new(),
        };
        set.write(dir.path()).unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "a_run_names_the_kernels_commit_only_where_it_differs", "--test-threads=1"])
            .env(kernel_lab::facts::kernels::ENV, dir.path())
            .env(CHILD, kernels)
            .output()
            .unwrap();
        assert!(out.status.success(), "kernels {kernels}: {}", String::from_utf8_lossy(&out.stdout));
        assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "the case ran");
    }
}
