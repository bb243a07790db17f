//! Pruning a results folder. Reading merges a folder's runs, the newest record of each key
//! winning, so a run whose every record a newer run of its folder repeats (each entry's variant,
//! kind and shape, each note's subject, its transfers and multi-GPU results, each tuning's variant
//! and shape) changes nothing `report`, `compare` or `advise` read: it can go. Finished tune runs
//! fold first into the folder's tunings file (the newest record of each variant and shape), as the
//! reference results keep them; a run cut short stays, since `--resume` may take it up.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{LabError, Result};
use crate::schema::entry::Key;
use crate::schema::run::{Header, Record, Run, RunKind};
use crate::schema::tuning::TuneRecord;
use crate::store;

/// A folder's tunings file: a tune run of the newest record of each variant and shape.
pub const TUNINGS: &str = "tunings.jsonl";

/// What pruning a folder does.
#[derive(Debug, Default)]
pub struct Prune {
    /// Finished tune runs whose records join the tunings file.
    pub folded: Vec<PathBuf>,
    /// Runs a newer run of the folder supersedes record by record.
    pub superseded: Vec<PathBuf>,
    /// The tunings file as it is written, where tune runs fold into it: its path and lines.
    pub tunings: Option<(PathBuf, Vec<String>)>,
    /// Run files left, the tunings file among them.
    pub kept: usize,
}

/// A record a newer run may repeat.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Held {
    Entry(Key),
    Note(String),
    Transfers,
    Multi,
    Tuning(String, String, String),
}

fn held(run: &Run) -> HashSet<Held> {
    run.records
        .iter()
        .filter_map(|r| match r {
            Record::Entry(e) => Some(Held::Entry(e.key())),
            Record::Note { text } => Some(Held::Note(store::note_subject(text).to_string())),
            Record::Transfers(_) => Some(Held::Transfers),
            Record::Multi(_) => Some(Held::Multi),
            Record::Tuning(t) => Some(Held::Tuning(t.family.clone(), t.variant.clone(), t.shape.clone())),
            Record::Candidate { .. } | Record::End(_) => None,
        })
        .collect()
}

fn tunings_of(run: &Run) -> impl Iterator<Item = &TuneRecord> {
    run.records.iter().filter_map(|r| match r {
        Record::Tuning(t) => Some(t.as_ref()),
        _ => None,
    })
}

/// What pruning the run files under `dir` would do, folder by folder; nothing is changed.
pub fn plan(dir: &Path) -> Result<Prune> {
    let runs = store::read(&[dir.to_path_buf()])?;
    let mut folders: Vec<PathBuf> = runs.iter().filter_map(|r| r.path.parent().map(Path::to_path_buf)).collect();
    folders.sort();
    folders.dedup();
    let mut prune = Prune::default();
    for folder in folders {
        let mut mine: Vec<&Run> = runs.iter().filter(|r| r.path.parent() == Some(folder.as_path())).collect();
        mine.sort_by(|a, b| a.header.run.date.cmp(&b.header.run.date).then(a.path.cmp(&b.path)));
        // Reading merges a model's runs, not a folder's: runs of two models in one folder would
        // seem to repeat each other.
        let mut models: Vec<String> = mine.iter().map(|r| r.header.device.slug()).collect();
        models.sort();
        models.dedup();
        if models.len() > 1 {
            return Err(LabError::Usage(format!(
                "{} holds runs of {} GPU models ({}): prune takes folders of one model's runs, as bench writes them",
                folder.display(),
                models.len(),
                models.join(", ")
            )));
        }
        plan_folder(&folder, &mine, &mut prune)?;
    }
    Ok(prune)
}

fn plan_folder(folder: &Path, runs: &[&Run], prune: &mut Prune) -> Result<()> {
    let is_tunings = |r: &Run| r.path.file_name().is_some_and(|n| n == TUNINGS);
    let folding: Vec<&Run> = runs.iter().copied().filter(|r| r.complete && r.header.run.kind == RunKind::Tune && !is_tunings(r)).collect();
    let written = match folding.last() {
        Some(last) => {
            let existing = runs.iter().copied().find(|r| is_tunings(r));
            prune.tunings = Some((folder.join(TUNINGS), tunings_file(existing, &folding, last)?));
            prune.folded.extend(folding.iter().map(|r| r.path.clone()));
            true
        }
        None => false,
    };
    // Newest first: a run goes where every record it holds is held by a newer one kept.
    let mut covered: HashSet<Held> = HashSet::new();
    let mut kept = usize::from(written);
    for r in runs.iter().rev() {
        if folding.iter().any(|f| f.path == r.path) || (written && is_tunings(r)) {
            continue;
        }
        let mine = held(r);
        if r.complete && !is_tunings(r) && !mine.is_empty() && mine.is_subset(&covered) {
            prune.superseded.push(r.path.clone());
        } else {
            covered.extend(mine);
            kept += 1;
        }
    }
    prune.kept += kept;
    Ok(())
}

/// The lines of a folder's tunings file: the existing one's records and the `folding` runs', the
/// newest of each variant and shape, oldest first, under a header dated by the newest, so a
/// merge reads it after every run it holds a record of.
fn tunings_file(existing: Option<&Run>, folding: &[&Run], last: &Run) -> Result<Vec<String>> {
    let mut records: Vec<&TuneRecord> = Vec::new();
    for t in existing.into_iter().chain(folding.iter().copied()).flat_map(tunings_of) {
        match records.iter_mut().find(|x| x.family == t.family && x.variant == t.variant && x.shape == t.shape) {
            Some(x) if x.date <= t.date => *x = t,
            Some(_) => {}
            None => records.push(t),
        }
    }
    records.sort_by(|a, b| a.date.cmp(&b.date));
    let newest = records.last().map_or_else(|| last.header.run.date.clone(), |t| t.date.clone());
    let mut header: Header = existing.unwrap_or(last).header.clone();
    header.run.kind = RunKind::Tune;
    header.run.id = format!("{newest} tunings: the newest of each variant and shape");
    header.run.date = newest;
    header.run.git_commit = "per record".into();
    header.run.command = "kernel-lab prune: the newest tuning of each variant and shape".into();
    header.run.seed = None;
    header.run.policy = None;
    // The records come from several cards of the model.
    header.device.uuid = None;
    let json = |r: serde_json::Result<String>| r.map_err(|e| LabError::Results { path: last.path.display().to_string(), msg: e.to_string() });
    let mut lines = vec![json(serde_json::to_string(&header))?];
    for t in records {
        lines.push(json(serde_json::to_string(&Record::Tuning(Box::new(t.clone()))))?);
    }
    Ok(lines)
}

/// Does what `plan` said: the tunings file written whole beside itself and renamed over the old
/// one (never half-written), then the folded and superseded runs removed.
pub fn apply(prune: &Prune) -> Result<()> {
    let io = |p: &Path, what: &str, e: std::io::Error| LabError::Results { path: p.display().to_string(), msg: format!("cannot {what}: {e}") };
    if let Some((path, lines)) = &prune.tunings {
        let part = path.with_extension("jsonl.part");
        std::fs::write(&part, lines.join("\n") + "\n").map_err(|e| io(&part, "write", e))?;
        std::fs::rename(&part, path).map_err(|e| io(path, "replace", e))?;
    }
    for p in prune.folded.iter().chain(&prune.superseded) {
        std::fs::remove_file(p).map_err(|e| io(p, "remove", e))?;
    }
    Ok(())
}
