//! The curated reference results: each GPU model's folder under results/ stays small enough to
//! read (at most 20 run files and 3 MiB, the tunings file besides) and says where every run
//! came from, in its README's table, one row a file.

use std::path::Path;

const MAX_RUNS: usize = 20;
const MAX_BYTES: u64 = 3 << 20;

fn size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { size(&p) } else { p.metadata().unwrap().len() })
        .sum()
}

#[test]
fn each_models_folder_is_curated_and_says_where_each_run_came_from() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    let mut models = 0;
    for dir in std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        models += 1;
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap_or_else(|_| panic!("{name} has no README.md"));
        let runs: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.ends_with(".jsonl") && f != "tunings.jsonl")
            .collect();
        assert!(runs.len() <= MAX_RUNS, "{name}: {} run files, more than {MAX_RUNS}", runs.len());
        assert!(size(&dir) <= MAX_BYTES, "{name}: {} bytes, more than {MAX_BYTES}", size(&dir));
        for run in &runs {
            // A row names a file by its date and its last part: `2026-12-05T21-39-22Z-...-7664`.
            let stem = run.trim_end_matches(".jsonl");
            let (date, last) = (&stem[..20], stem.rsplit('-').next().unwrap());
            let row = format!("| `{date}-...-{last}` |");
            assert!(readme.contains(&row), "{name}/README.md has no row for {run} ({row})");
        }
    }
    assert!(models >= 2, "results/ holds {models} GPU models' folders");
}
