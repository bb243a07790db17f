//! The curated reference results: each GPU model's folder under results/ stays small enough to
//! read (at most 20 run files, and 3 MiB with its tunings file, README and PyTorch steps) and says
//! where every run came from, in its README's table, one row a file and a file a row. Only what
//! git tracks counts: a local bench writes its runs into results/ as well.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const MAX_RUNS: usize = 20;
const MAX_BYTES: u64 = 3 << 20;

/// The tracked files under results/, by GPU model's folder: (path inside the folder, bytes).
fn tracked(root: &Path) -> BTreeMap<String, Vec<(String, u64)>> {
    let out = Command::new("git").args(["ls-files", "-z", "results"]).current_dir(root).output().expect("git runs");
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    let mut models: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for path in String::from_utf8(out.stdout).unwrap().split('\0').filter(|p| !p.is_empty()) {
        let Some((model, inside)) = path.strip_prefix("results/").and_then(|p| p.split_once('/')) else { continue };
        let bytes = root.join(path).metadata().map(|m| m.len()).unwrap_or(0);
        models.entry(model.to_string()).or_default().push((inside.to_string(), bytes));
    }
    models
}

/// A run file as the README's table names it: `2026-12-05T21-39-22Z-...-7664` for
/// `2026-12-05T21-39-22Z-vm-gpu0-7664.jsonl`.
fn row_name(run: &str) -> String {
    let stem = run.trim_end_matches(".jsonl");
    let date = stem.get(..20).unwrap_or_else(|| panic!("{run}: not a run file's name (date, host, GPU, process)"));
    format!("{date}-...-{}", stem.rsplit('-').next().unwrap())
}

#[test]
fn each_models_folder_is_curated_and_says_where_each_run_came_from() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let models = tracked(root);
    assert!(models.len() >= 2, "results/ holds {} GPU models' folders", models.len());
    for (model, files) in &models {
        let runs: BTreeSet<String> = files
            .iter()
            .map(|(f, _)| f)
            .filter(|f| f.ends_with(".jsonl") && !f.contains('/') && *f != "tunings.jsonl")
            .map(|f| row_name(f))
            .collect();
        let bytes: u64 = files.iter().map(|(_, b)| b).sum();
        assert!(runs.len() <= MAX_RUNS, "{model}: {} run files, more than {MAX_RUNS}", runs.len());
        assert!(bytes <= MAX_BYTES, "{model}: {bytes} bytes, more than {MAX_BYTES}");
        let readme = std::fs::read_to_string(root.join("results").join(model).join("README.md"))
            .unwrap_or_else(|_| panic!("{model} has no README.md"));
        let rows: BTreeSet<String> = readme
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split_once('`').map(|(name, _)| name.to_string()))
            .filter(|name| name.contains("-...-"))
            .collect();
        assert_eq!(rows, runs, "{model}/README.md: its table's rows (left) and the run files (right) differ");
    }
}
