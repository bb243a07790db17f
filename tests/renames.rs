//! The table of retired names (csrc/renames.toml): every new name is a variant of this build, no
//! old name is one, and results written under old names read as the new ones, so `compare` and
//! `history` see one variant across the rename.

use kernel_lab::facts::renames;
use kernel_lab::gpu::registry;
use kernel_lab::schema::run::Record;

#[test]
fn every_new_name_is_current_and_no_old_name_is() {
    let all = registry::all().unwrap();
    let families = registry::families().unwrap();
    assert!(renames::variants().count() > 0);
    for (old, new) in renames::variants() {
        assert!(all.iter().any(|v| v.name == new), "{old} -> {new}: no such variant in this build");
        assert!(!all.iter().any(|v| v.name == old), "{old} is retired but names a variant of this build");
        let v = registry::by_name(new).unwrap();
        assert_eq!(renames::rung(old), Some(v.rung), "{old} -> {new}: the rung read back is the manifest's");
        assert_eq!(registry::by_name(old).unwrap().name, new, "an old name given by a user stands for the new one");
    }
    for (old, new) in renames::families() {
        assert!(families.contains(&new) && !families.contains(&old), "{old} -> {new}");
        assert_eq!(registry::family(old).unwrap(), new);
    }
}

/// The committed test results were written before the rename: read, they hold no retired name.
#[test]
fn stored_results_read_with_the_current_names() {
    let runs = kernel_lab::analysis::store::read(&[concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nvidia-h200-sm_90").into()]).unwrap();
    let mut renamed = 0;
    for run in &runs {
        let raw = std::fs::read_to_string(&run.path).unwrap();
        renamed += renames::variants().filter(|(old, _)| raw.contains(&format!("\"{old}\""))).count();
        for r in &run.records {
            let (family, variant) = match r {
                Record::Entry(e) => (e.family.as_str(), e.variant.as_str()),
                Record::Tuning(t) => (t.family.as_str(), t.variant.as_str()),
                Record::Candidate { family, variant, .. } => (family.as_str(), variant.as_str()),
                Record::Note { text } => {
                    assert!(!text.starts_with("tensor "), "{text}");
                    continue;
                }
                _ => continue,
            };
            assert_eq!(renames::family(family), family, "{}: family {family} read under its old name", run.path.display());
            assert_eq!(renames::variant(variant), variant, "{}: {variant} read under its old name", run.path.display());
            if let Record::Entry(e) = r {
                if let Ok(v) = registry::by_name(&e.variant) {
                    assert_eq!(e.rung, v.rung, "{}: {}'s rung", run.path.display(), e.variant);
                }
            }
        }
    }
    assert!(renamed > 0, "the test data holds results written under old names");
}

#[test]
fn notes_take_new_names_where_they_name_a_family_or_variant() {
    assert_eq!(
        renames::note("tensor 4096x4096x4096: cuBLASLt best (algo 66) ran 1.036x the default call"),
        "fp16 4096x4096x4096: cuBLASLt best (algo 66) ran 1.036x the default call"
    );
    assert_eq!(
        renames::note("bf16: bf16_02_pingpong ran ahead of tensor_07_pingpong"),
        "bf16: bf16_07_pingpong ran ahead of fp16_07_pingpong"
    );
    assert_eq!(renames::note("a tensor map of B"), "a tensor map of B", "a plain word stays");
    assert_eq!(renames::note("l2: l2_01_working_set: knee at 54 MiB"), "l2: l2_01_working_set: knee at 54 MiB");
}

/// `history` follows a variant across its rename: asked by its old name or its new one, it shows
/// the same measurements, stored under the old name.
#[test]
fn history_answers_to_the_old_name_and_the_new() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nvidia-h200-sm_90");
    let history = |name: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kernel-lab"))
            .args(["history", name, "--results-dir", data, "--format", "csv"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let new = history("bf16_07_pingpong");
    assert!(new.lines().count() > 1, "{new}");
    assert_eq!(history("bf16_02_pingpong"), new);
}

/// `scripts/sass-diff.py compare` reads a dump from before a rename under the new names (file,
/// symbol, PTX parameter and mangled static names), on either side, and still tells code apart.
#[test]
fn sass_diff_compares_across_a_rename() {
    let (old, new) = ("tensor_07_pingpong", "fp16_07_pingpong");
    assert_eq!(renames::variant(old), new);
    let text = |name: &str, op: &str| {
        format!("\tcode for sm_90a\n\t\tFunction : {name}\n.param .b8 {name}_param_0[512]\n.shared .b8 _ZZ{}{name}E1s[64];\n        {op} R0, R1 ;\n", name.len())
    };
    let dump = |name: &str, op: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(format!("{name}.sm_90a.sass")), text(name, op)).unwrap();
        dir
    };
    let compare = |a: &std::path::Path, b: &std::path::Path| {
        let out = std::process::Command::new("python3")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/sass-diff.py"))
            .args(["compare", a.to_str().unwrap(), b.to_str().unwrap()])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let (before, after, changed) = (dump(old, "MOV"), dump(new, "MOV"), dump(new, "IADD"));
    for (a, b) in [(before.path(), after.path()), (after.path(), before.path())] {
        let (code, out) = compare(a, b);
        assert_eq!(code, Some(0), "{out}");
        assert!(out.starts_with("1 pairs identical, 0 differ"), "{out}");
    }
    let (code, out) = compare(before.path(), changed.path());
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&format!("differs: {new}.sm_90a")), "{out}");
}
