//! Named baselines: a finished run kept under a name beside its GPU model's runs
//! (`bench --save-baseline NAME`), for `compare --baseline NAME` to find again.

use std::path::{Path, PathBuf};

use crate::error::{LabError, Result};

fn err(path: &Path, msg: String) -> LabError {
    LabError::Results { path: path.display().to_string(), msg }
}

/// The folder, inside a GPU model's folder, of its named baselines: `<model>-<arch>/baselines/NAME.jsonl`.
pub const BASELINES: &str = "baselines";

/// A baseline's name: what a file name can hold on every system, and not a path.
pub fn check_name(name: &str) -> Result<&str> {
    let ok = !name.is_empty() && !name.starts_with('.') && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(name)
    } else {
        Err(LabError::Usage(format!("baseline name '{name}': use letters, digits, '-', '_' and '.' (not first)")))
    }
}

/// Saves the finished run `run` as the baseline `name` of its GPU model: a copy of the file beside
/// the model's runs, `<model>-<arch>/baselines/NAME.jsonl`, replacing an earlier baseline of that
/// name (as criterion's `--save-baseline` does). A copy, not a link: the baseline stays what it
/// was if the run files are pruned or moved, at the cost of one run file's bytes.
pub fn save(run: &Path, name: &str) -> Result<PathBuf> {
    let name = check_name(name)?;
    let model = run.parent().ok_or_else(|| err(run, "a run file has a folder".into()))?;
    let folder = model.join(BASELINES);
    std::fs::create_dir_all(&folder).map_err(|e| err(&folder, format!("cannot create folder: {e}")))?;
    let path = folder.join(format!("{name}.jsonl"));
    // Written whole under another name, then renamed: a reader never sees half a baseline.
    let part = folder.join(format!(".{name}.jsonl.part"));
    std::fs::copy(run, &part).map_err(|e| err(&part, format!("cannot write: {e}")))?;
    std::fs::rename(&part, &path).map_err(|e| err(&path, format!("cannot write: {e}")))?;
    Ok(path)
}

/// The baseline `name` under the results folder `dir`: one GPU model's, or an error naming the
/// ones there are.
pub fn find(dir: &Path, name: &str) -> Result<PathBuf> {
    let name = check_name(name)?;
    let models = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path());
    let files = models.flat_map(|m| std::fs::read_dir(m.join(BASELINES)).into_iter().flatten().flatten().map(|e| e.path()));
    let mut all: Vec<(String, PathBuf)> = files
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| Some((p.file_stem()?.to_string_lossy().into_owned(), p)))
        .filter(|(stem, _)| !stem.starts_with('.'))
        .collect();
    all.sort();
    let found: Vec<&PathBuf> = all.iter().filter(|(stem, _)| stem == name).map(|(_, p)| p).collect();
    let model = |p: &Path| p.ancestors().nth(2).and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match found.as_slice() {
        [one] => Ok(one.to_path_buf()),
        [] => {
            let known: Vec<String> = all.iter().map(|(stem, p)| format!("{stem} ({})", model(p))).collect();
            let there = if known.is_empty() { "none".into() } else { known.join(", ") };
            Err(LabError::Usage(format!(
                "no baseline '{name}' under {} (`bench --save-baseline NAME` saves one; there: {there})",
                dir.display()
            )))
        }
        several => Err(LabError::Usage(format!(
            "baseline '{name}' is saved for several GPU models under {}: compare with --base {}",
            dir.display(),
            several.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" or --base ")
        ))),
    }
}
