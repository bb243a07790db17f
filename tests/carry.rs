//! `carry` without a GPU: a tuning made on an older tree is carried to the current hash only where
//! that tree hashes to the stored hash and nvcc makes the same cubin of it and of the current code.
//! Needs the toolkit's nvcc and NVRTC (`cargo make setup`) and the built kernel set, whose texts
//! are the current code here.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use kernel_lab::analysis::carry::{self, Outcome};
use kernel_lab::gpu::{jit, registry};
use kernel_lab::schema::run::{Record, RunKind};
use kernel_lab::schema::tuning::TuneRecord;

const VARIANT: &str = "sgemm_08_double_buffered";
const MODEL: &str = "nvidia-h200-sm_90";

fn spec() -> &'static registry::VariantSpec {
    registry::by_name(VARIANT).unwrap()
}

/// A configuration other than the manifest's, as a search picks.
fn best() -> registry::Config {
    spec().config().with("BK", 16)
}

/// An OLD_TREE: the kernel set's headers and the variant's source as `edit` leaves it; with the
/// hash a search on it would have stored.
fn old_tree(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, String) {
    old_tree_with(edit, |_, text| text.to_string())
}

/// As `old_tree`, each header (name, text) as `header` leaves it too.
fn old_tree_with(edit: impl Fn(&str) -> String, header: impl Fn(&str, &str) -> String) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let csrc = dir.path().join("csrc");
    std::fs::create_dir_all(csrc.join("include")).unwrap();
    let headers: Vec<(String, String)> = registry::set().unwrap().headers.iter().map(|(n, t)| (n.clone(), header(n, t))).collect();
    for (name, text) in &headers {
        std::fs::write(csrc.join("include").join(name), text).unwrap();
    }
    let source = edit(&spec().source);
    assert!(source != spec().source || headers != registry::set().unwrap().headers, "the edit applies to {VARIANT}'s texts");
    let file = csrc.join(&spec().file);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &source).unwrap();
    let defines = jit::hashed_defines(spec(), &best(), &source, &headers).unwrap();
    let hash = jit::hash_texts(&source, &headers, &defines, &jit::target(spec(), 90).name(), &jit::version().unwrap());
    (dir, hash)
}

/// A results folder whose H200 tunings file holds `best()` at n³ under each (n, hash).
fn results(hashes: &[(u64, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join(MODEL);
    std::fs::create_dir_all(&folder).unwrap();
    let mut header = common::bench_header("2026-01-01T00:00:00Z", common::device("NVIDIA H200", 0, "GPU-1234abcd", "gpu-host"));
    header.run.kind = RunKind::Tune;
    let mut lines = vec![serde_json::to_string(&header).unwrap()];
    for &(n, hash) in hashes {
        let t = TuneRecord { best: Some(best()), best_hash: Some(hash.into()), ..common::tune_record("sgemm", VARIANT, &[n; 3]) };
        lines.push(serde_json::to_string(&Record::Tuning(Box::new(t))).unwrap());
    }
    // A search that picked nothing is not considered.
    lines.push(serde_json::to_string(&Record::Tuning(Box::new(common::tune_record("sgemm", VARIANT, &[64; 3])))).unwrap());
    let file = folder.join("tunings.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    (dir, file)
}

/// The tuning records of a tunings file, in order.
fn tunings(file: &Path) -> Vec<TuneRecord> {
    let run = kernel_lab::analysis::store::read_run(file).unwrap();
    run.records.into_iter().filter_map(|r| if let Record::Tuning(t) = r { Some(*t) } else { None }).collect()
}

/// A line that changes no machine code: an unused constant, which is code to the hash.
fn neutral(source: &str) -> String {
    format!("{source}\nstatic constexpr int lab_unused = 1;\n")
}

/// An edit to the kernel's arithmetic: its block row index moved by one.
fn arithmetic(source: &str) -> String {
    source.replace("(p, blockIdx.y, blockIdx.x)", "(p, blockIdx.y ^ 1u, blockIdx.x)")
}

fn outcomes(c: &carry::Carry) -> Vec<Outcome> {
    c.considered.iter().map(|c| c.outcome.clone()).collect()
}

#[test]
fn a_sass_neutral_edit_is_carried_to_the_current_hash() {
    let (old, old_hash) = old_tree(neutral);
    let now = jit::hash(spec(), &best(), 90).unwrap();
    assert_ne!(old_hash, now, "an unused constant is code to the hash");
    let (dir, file) = results(&[(1024, &old_hash), (2048, &now)]);
    let plan = carry::plan(dir.path(), old.path()).unwrap();
    assert_eq!(outcomes(&plan), vec![Outcome::Carried { from: old_hash.clone(), to: now.clone() }, Outcome::Current]);
    assert_eq!(plan.writes.len(), 1);
    carry::apply(&plan).unwrap();
    let after = tunings(&file);
    assert_eq!((after[0].best_hash.as_deref(), after[0].carried_from.as_deref()), (Some(now.as_str()), Some(old_hash.as_str())));
    assert_eq!(
        (after[1].best_hash.as_deref(), after[1].carried_from.as_deref()),
        (Some(now.as_str()), None),
        "a current tuning is left be"
    );
    assert_eq!(after.len(), 3);
    assert!(!file.with_extension("jsonl.part").exists());
    // Carried once, it is current: a second pass changes nothing.
    let again = carry::plan(dir.path(), old.path()).unwrap();
    assert_eq!(outcomes(&again), vec![Outcome::Current, Outcome::Current]);
    assert!(again.writes.is_empty());
}

#[test]
fn an_edit_that_changes_the_code_stays_stale() {
    let (old, old_hash) = old_tree(arithmetic);
    let (dir, file) = results(&[(1024, &old_hash)]);
    let before = std::fs::read(&file).unwrap();
    let plan = carry::plan(dir.path(), old.path()).unwrap();
    match &outcomes(&plan)[..] {
        [Outcome::Stale(why)] => assert!(why.contains("another cubin"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(plan.writes.is_empty());
    carry::apply(&plan).unwrap();
    assert!(std::fs::read(&file).unwrap() == before, "the file is left as it was");
}

#[test]
fn a_tree_that_does_not_hash_to_the_stored_hash_proves_nothing() {
    let (old, _) = old_tree(neutral);
    let (dir, _) = results(&[(1024, "0123456789abcdef")]);
    let plan = carry::plan(dir.path(), old.path()).unwrap();
    assert_eq!(outcomes(&plan), vec![Outcome::Stale("OLD_TREE is not the code it was tuned on".into())]);
    assert!(plan.writes.is_empty());
}

#[test]
fn what_lies_beside_the_instructions_is_compared_too() {
    // Launch bounds change no instruction of the listing, but a launch of the old block size fails.
    let (old, old_hash) = old_tree(|s| s.replace("__launch_bounds__(THREADS)", "__launch_bounds__(THREADS / 2)"));
    let (dir, _) = results(&[(1024, &old_hash)]);
    match &outcomes(&carry::plan(dir.path(), old.path()).unwrap())[..] {
        [Outcome::Stale(why)] => assert!(why.contains("another cubin"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_change_to_code_only_nvrtc_compiles_is_not_carried() {
    // lab_base.h's __CUDACC_RTC__ branch, which nvcc never reads.
    let (old, old_hash) = old_tree_with(
        |s| s.to_string(),
        |name, text| {
            if name == "lab_base.h" {
                text.replace("typedef int int32_t;", "typedef signed int int32_t;")
            } else {
                text.to_string()
            }
        },
    );
    let (dir, _) = results(&[(1024, &old_hash)]);
    match &outcomes(&carry::plan(dir.path(), old.path()).unwrap())[..] {
        [Outcome::Stale(why)] => assert!(why.contains("__CUDACC_RTC__"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_the_results_folders_own_model_folders_are_read() {
    // A folder holding another checkout (its results/<model>/tunings.jsonl two levels down) is
    // not searched into: carry rewrites only what it was pointed at.
    let (old, old_hash) = old_tree(neutral);
    let (inner, _) = results(&[(1024, &old_hash)]);
    let outer = tempfile::tempdir().unwrap();
    std::fs::rename(inner.path(), outer.path().join("checkout")).unwrap();
    let e = carry::plan(outer.path(), old.path()).unwrap_err().to_string();
    assert!(e.contains("holds no tunings.jsonl"), "{e}");
    // The model folder itself may be named.
    let (dir, _) = results(&[(1024, &old_hash)]);
    assert_eq!(carry::plan(&dir.path().join(MODEL), old.path()).unwrap().considered.len(), 1);
}

fn kernel_lab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kernel-lab")).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_dry_run_changes_nothing_and_a_run_carries() {
    let (old, old_hash) = old_tree(neutral);
    let (dir, file) = results(&[(1024, &old_hash)]);
    let before = std::fs::read(&file).unwrap();
    let (from, at) = (old.path().to_str().unwrap(), dir.path().to_str().unwrap());
    let (code, out, err) = kernel_lab(&["carry", "--from", from, "--results-dir", at, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("carried: {MODEL} {VARIANT} 1024x1024x1024 ({old_hash} -> ")), "{out}");
    assert!(out.contains("1 tunings: 0 current, would carry 1, 0 left stale"), "{out}");
    assert!(std::fs::read(&file).unwrap() == before, "--dry-run leaves the file as it was, byte for byte");
    let (code, out, err) = kernel_lab(&["carry", "--from", from, "--results-dir", at]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 tunings: 0 current, carried 1, 0 left stale"), "{out}");
    assert_eq!(tunings(&file)[0].best_hash, Some(jit::hash(spec(), &best(), 90).unwrap()));
}

#[test]
fn errors_are_one_line_and_a_usage_code() {
    let (dir, file) = results(&[(1024, "0123456789abcdef")]);
    let before = std::fs::read(&file).unwrap();
    let at = dir.path().to_str().unwrap();
    let (empty, (old, _)) = (tempfile::tempdir().unwrap(), old_tree(neutral));
    let (empty, old) = (empty.path().to_str().unwrap(), old.path().to_str().unwrap());
    // No csrc/include in OLD_TREE; no results folder; a folder without a tunings file.
    for args in [
        vec!["carry", "--from", empty, "--results-dir", at],
        vec!["carry", "--from", old, "--results-dir", "/nonexistent/results"],
        vec!["carry", "--from", old, "--results-dir", empty],
    ] {
        let (code, out, err) = kernel_lab(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: ") && !err.contains("panicked"), "{err}");
    }
    assert!(std::fs::read(&file).unwrap() == before, "the file is left as it was");
}

/// A variant renamed since its search (csrc/renames.toml): OLD_TREE holds its file under the old
/// family folder and name, with the old entry symbol. It is proven against the current code like
/// any other, and the carried record takes the new names; an edit to its code still stays stale.
#[test]
fn a_renamed_variant_is_carried_under_its_new_name() {
    const NEW: &str = "fp16_01_wmma_naive";
    let old_name = kernel_lab::facts::renames::former(NEW).expect("fp16_01_wmma_naive was renamed");
    let old_family = kernel_lab::facts::renames::families().find(|(_, new)| *new == "fp16").unwrap().0;
    let spec = registry::by_name(NEW).unwrap();
    let best = spec.config();
    // A tree holding the headers and `source` at csrc/`file`, with the hash a search on it stores.
    let tree = |file: &str, source: String| {
        let dir = tempfile::tempdir().unwrap();
        let csrc = dir.path().join("csrc");
        std::fs::create_dir_all(csrc.join("include")).unwrap();
        let headers = registry::set().unwrap().headers.clone();
        for (name, text) in &headers {
            std::fs::write(csrc.join("include").join(name), text).unwrap();
        }
        std::fs::create_dir_all(csrc.join(file).parent().unwrap()).unwrap();
        std::fs::write(csrc.join(file), &source).unwrap();
        let defines = jit::hashed_defines(spec, &best, &source, &headers).unwrap();
        let hash = jit::hash_texts(&source, &headers, &defines, &jit::target(spec, 90).name(), &jit::version().unwrap());
        (dir, hash)
    };
    // Before the rename: the old folder, file and entry symbol.
    let old_file = format!("{old_family}/{old_name}.cu");
    let before = |edit: &dyn Fn(&str) -> String| tree(&old_file, edit(&spec.source.replace(NEW, old_name)));
    let stored = |hash: &str| {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(MODEL);
        std::fs::create_dir_all(&folder).unwrap();
        let mut header = common::bench_header("2026-01-01T00:00:00Z", common::device("NVIDIA H200", 0, "GPU-1234abcd", "gpu-host"));
        header.run.kind = RunKind::Tune;
        let t =
            TuneRecord { best: Some(best.clone()), best_hash: Some(hash.into()), ..common::tune_record(old_family, old_name, &[1024; 3]) };
        let lines = [serde_json::to_string(&header).unwrap(), serde_json::to_string(&Record::Tuning(Box::new(t))).unwrap()];
        std::fs::write(folder.join("tunings.jsonl"), lines.join("\n") + "\n").unwrap();
        (dir, folder.join("tunings.jsonl"))
    };
    let now = jit::hash(spec, &best, 90).unwrap();

    let (old, old_hash) = before(&|s| s.to_string());
    let (dir, file) = stored(&old_hash);
    let plan = carry::plan(dir.path(), old.path()).unwrap();
    assert_eq!(outcomes(&plan), vec![Outcome::Carried { from: old_hash.clone(), to: now.clone() }]);
    carry::apply(&plan).unwrap();
    let line = std::fs::read_to_string(&file).unwrap().lines().nth(1).unwrap().to_string();
    let Record::Tuning(t) = serde_json::from_str::<Record>(&line).unwrap() else { panic!("a tuning record: {line}") };
    assert_eq!((t.family.as_str(), t.variant.as_str(), t.best_hash.as_deref()), ("fp16", NEW, Some(now.as_str())));

    // A tuning made after the rename, on a tree that holds the file under its new path and name,
    // is proven from that file.
    let (after, after_hash) = tree(&spec.file, neutral(&spec.source));
    let (dir, _) = stored(&after_hash);
    let plan = carry::plan(dir.path(), after.path()).unwrap();
    assert_eq!(outcomes(&plan), vec![Outcome::Carried { from: after_hash, to: now.clone() }]);

    let (old, old_hash) = before(&|s| s.replace("(BLOCK_X * BLOCK_Y)", "(BLOCK_X * BLOCK_Y / 2)"));
    let (dir, _) = stored(&old_hash);
    let plan = carry::plan(dir.path(), old.path()).unwrap();
    assert!(matches!(&outcomes(&plan)[..], [Outcome::Stale(why)] if why.contains("another cubin")), "{:?}", outcomes(&plan));
}
