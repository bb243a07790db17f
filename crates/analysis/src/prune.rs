//! Pruning a results folder. Reading merges a GPU model's runs, the newest run's record of each
//! key winning, so a run whose every record a newer run of its folder repeats (each entry's
//! variant, kind and shape, each note's subject, its transfers and multi-GPU results, each
//! tuning's variant and shape) changes nothing `report`, `compare` or `advise` read by model: it
//! can go. Finished tune runs fold first into the folder's tunings file, as the reference results
//! keep them; a tune run cut short stays while `tune` would take it up (it is the newest with its
//! arguments), as does a cut-short bench. The plan is checked before anything changes: the
//! folder's runs as they would be left must read as they read now, or the folder is refused.
//!
//! What it costs: the tuner's cache keeps, of each variant and shape, the candidates of the
//! newest search only, so a later `tune` may measure an older search's configurations again.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use crate::baselines::BASELINES;
use crate::error::{LabError, Result};
use crate::schema::entry::Key;
use crate::schema::run::{Header, Record, Run, RunKind};
use crate::schema::tuning::TuneRecord;
use crate::store::{self, Group, View};

/// A folder's tunings file: a tune run of the newest record of each variant and shape.
pub const TUNINGS: &str = "tunings.jsonl";

/// What pruning a results folder does.
#[derive(Debug, Default)]
pub struct Prune {
    /// Finished tune runs whose records join the tunings file.
    pub folded: Vec<PathBuf>,
    /// Runs a newer run of the folder supersedes record by record, and tune runs cut short that
    /// `tune` would no longer take up.
    pub superseded: Vec<PathBuf>,
    /// The tunings files as they are written, where tune runs fold into them: path and lines.
    pub tunings: Vec<(PathBuf, Vec<String>)>,
    /// Run files left, the tunings files among them.
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

/// A tune run's arguments, as `tune` matches an unfinished search to take up.
fn arguments(run: &Run) -> &str {
    run.header.run.command.split_once(' ').map_or("", |(_, rest)| rest)
}

/// What pruning every folder of run files under `dir` (a folder) would do; nothing is changed.
pub fn plan(dir: &Path) -> Result<Prune> {
    let refuse = |why: &str| Err(LabError::Usage(format!("{}: {why}", dir.display())));
    if !dir.is_dir() {
        return refuse("not a folder: prune takes a results folder");
    }
    if dir.components().any(|c| c.as_os_str() == BASELINES) {
        return refuse("a folder of named baselines, which compare --baseline reads by name: prune leaves them be");
    }
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
    let tune = |r: &Run| r.header.run.kind == RunKind::Tune && !is_tunings(r);
    let folding: Vec<&Run> = runs.iter().copied().filter(|r| tune(r) && r.complete).collect();
    let existing = runs.iter().copied().find(|r| is_tunings(r));
    let written = match folding.last() {
        Some(last) => Some(tunings_file(existing, &folding, last)?),
        None => None,
    };
    // Newest first: a run goes where every record it holds is held by a newer one kept; a tune
    // run cut short goes where a newer tune run with its arguments finished.
    let mut covered: HashSet<Held> = HashSet::new();
    let mut finished_args: HashSet<&str> = HashSet::new();
    let (mut superseded, mut left) = (Vec::new(), Vec::new());
    for r in runs.iter().copied().rev() {
        if tune(r) && r.complete {
            finished_args.insert(arguments(r));
            continue;
        }
        if is_tunings(r) && written.is_some() {
            continue;
        }
        let mine = held(r);
        let repeated = r.complete && !is_tunings(r) && !mine.is_empty() && mine.is_subset(&covered);
        let taken_up = tune(r) && !r.complete && finished_args.contains(arguments(r));
        if repeated || taken_up {
            superseded.push(r.path.clone());
        } else {
            covered.extend(mine);
            left.push(r);
        }
    }
    // The check: what is left must read as the folder reads now.
    let after: Vec<Run> = written.iter().map(|(run, _)| run.clone()).chain(left.iter().map(|r| (*r).clone())).collect();
    let before: Vec<Run> = runs.iter().map(|r| (*r).clone()).collect();
    if let Some(why) = reads_differently(&before, &after) {
        return Err(LabError::Usage(format!("{}: pruning would change what is read ({why}); nothing was changed", folder.display())));
    }
    prune.kept += after.len();
    prune.superseded.extend(superseded);
    if let Some((_, lines)) = written {
        prune.tunings.push((folder.join(TUNINGS), lines));
        prune.folded.extend(folding.iter().map(|r| r.path.clone()));
    }
    Ok(())
}

/// The tunings file with the `folding` runs folded in, as a run and as its lines: of each variant
/// and shape the record of the run read last (the runs in the order reading takes them, by their
/// header's date), under a header dated as the last of them, so reading takes it in their place.
fn tunings_file(existing: Option<&Run>, folding: &[&Run], last: &Run) -> Result<(Run, Vec<String>)> {
    let mut runs: Vec<&Run> = existing.into_iter().chain(folding.iter().copied()).collect();
    runs.sort_by(|a, b| a.header.run.date.cmp(&b.header.run.date));
    let mut records: BTreeMap<(String, String, String), &TuneRecord> = BTreeMap::new();
    for r in &runs {
        for rec in &r.records {
            if let Record::Tuning(t) = rec {
                records.insert((t.family.clone(), t.variant.clone(), t.shape.clone()), t);
            }
        }
    }
    let mut records: Vec<&TuneRecord> = records.into_values().collect();
    records.sort_by(|a, b| a.date.cmp(&b.date));
    let date = runs.last().map_or_else(|| last.header.run.date.clone(), |r| r.header.run.date.clone());
    let mut header: Header = existing.unwrap_or(last).header.clone();
    header.run.kind = RunKind::Tune;
    header.run.id = format!("{date} tunings: the newest of each variant and shape");
    header.run.date = date;
    header.run.git_commit = "per record".into();
    header.run.command = "kernel-lab prune: the newest tuning of each variant and shape".into();
    header.run.seed = None;
    header.run.policy = None;
    // The records come from several cards of the model.
    header.device.uuid = None;
    let body: Vec<Record> = records.into_iter().map(|t| Record::Tuning(Box::new(t.clone()))).collect();
    let json = |r: serde_json::Result<String>| r.map_err(|e| LabError::Results { path: last.path.display().to_string(), msg: e.to_string() });
    let mut lines = vec![json(serde_json::to_string(&header))?];
    for r in &body {
        lines.push(json(serde_json::to_string(r))?);
    }
    let path = last.path.with_file_name(TUNINGS);
    Ok((Run { path, header, records: body, complete: false }, lines))
}

/// Where two sets of one model's runs read differently: their merged entries, tunings, notes,
/// transfers or multi-GPU results (the runs and cards they came from aside).
fn reads_differently(before: &[Run], after: &[Run]) -> Option<String> {
    let view = |runs: &[Run]| store::views(runs, Group::Model).into_iter().next();
    let (Some(a), Some(b)) = (view(before), view(after)) else {
        return (!before.is_empty()).then(|| "no run would be left".into());
    };
    let entries = |v: &View| v.entries.iter().map(|e| (e.key(), serde_json::to_string(e).unwrap_or_default())).collect::<BTreeMap<_, _>>();
    let tunings = |v: &View| {
        v.tuning.iter().map(|t| ((t.family.clone(), t.variant.clone(), t.shape.clone()), t.date.clone())).collect::<BTreeMap<_, _>>()
    };
    let notes = |v: &View| v.notes.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    if entries(&a) != entries(&b) {
        return Some("the merged entries".into());
    }
    if tunings(&a) != tunings(&b) {
        return Some("the tunings".into());
    }
    if notes(&a) != notes(&b) || a.transfers != b.transfers || a.multi != b.multi {
        return Some("the notes, transfers or multi-GPU results".into());
    }
    None
}

/// Does what `plan` said: each tunings file written whole beside itself, on disk, and renamed
/// over the old one (never half-written), then the folded and superseded runs removed.
pub fn apply(prune: &Prune) -> Result<()> {
    let io = |p: &Path, what: &str, e: std::io::Error| LabError::Results { path: p.display().to_string(), msg: format!("cannot {what}: {e}") };
    for (path, lines) in &prune.tunings {
        replace_lines(path, lines)?;
    }
    for p in prune.folded.iter().chain(&prune.superseded) {
        std::fs::remove_file(p).map_err(|e| io(p, "remove", e))?;
    }
    Ok(())
}

/// A results file replaced by `lines`: written whole beside itself, synced to disk, then renamed
/// over it, so a reader finds the old file or the new one and never half of one.
pub(crate) fn replace_lines(path: &Path, lines: &[String]) -> Result<()> {
    let io = |p: &Path, what: &str, e: std::io::Error| LabError::Results { path: p.display().to_string(), msg: format!("cannot {what}: {e}") };
    let part = path.with_extension("jsonl.part");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&part)?;
        std::io::Write::write_all(&mut f, (lines.join("\n") + "\n").as_bytes())?;
        f.sync_all()
    };
    write().map_err(|e| io(&part, "write", e))?;
    std::fs::rename(&part, path).map_err(|e| io(path, "replace", e))
}
