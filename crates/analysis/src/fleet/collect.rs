//! Per task, what happened, told from both sides: Slurm's state of the array task and the status
//! file the task's script wrote when it ended (its GPU, the command's exit code, the results
//! files it stored). Then the merge: every results file in the fleet's results/ folder, read as
//! one set, rendered by the report's own code into report.md (with plots/) and report.html.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::slurm::{Jobs, State};
use super::Fleet;
use crate::report::{self, new_table, Format};
use crate::store::{self, Group};
use crate::error::{LabError, Result};

/// What a task's script wrote to status/task-N.json when it ended.
#[derive(Debug, Clone, Deserialize)]
pub struct Recorded {
    pub job: String,
    pub host: String,
    pub gpu: String,
    pub end: String,
    pub exit: i32,
    pub stored: usize,
}

/// One task, as `status` and `collect` tell it.
#[derive(Debug, Clone)]
pub struct Line {
    pub index: usize,
    pub name: String,
    /// "job_task" under Slurm; "-" for a task no job ran.
    pub job: String,
    pub state: String,
    pub exit: String,
    pub node: String,
    pub gpu: String,
    pub stored: String,
    pub finished: bool,
    pub failed: bool,
}

/// Slurm states of a job that has not ended.
const LIVE: [&str; 8] = ["PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "STAGE_OUT"];

fn recorded(dir: &Path, index: usize) -> Option<Recorded> {
    let text = std::fs::read_to_string(dir.join("status").join(format!("task-{index}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// The jobs `submit` recorded; None where the tasks were run by hand.
pub fn jobs(dir: &Path) -> Result<Option<Jobs>> {
    let path = dir.join("jobs.json");
    match std::fs::read_to_string(&path) {
        Err(_) => Ok(None),
        Ok(text) => {
            serde_json::from_str(&text).map(Some).map_err(|e| LabError::Results { path: path.display().to_string(), msg: e.to_string() })
        }
    }
}

/// One line per task, from Slurm's `states` (empty where the tasks ran by hand) and the status files.
pub fn lines(f: &Fleet, jobs: Option<&Jobs>, states: &std::collections::BTreeMap<String, State>) -> Vec<Line> {
    f.tasks
        .iter()
        .map(|t| {
            let key = jobs.and_then(|j| j.arrays.iter().find(|a| a.tasks.contains(&t.index))).map(|a| format!("{}_{}", a.job, t.index));
            let st = key.as_ref().and_then(|k| states.get(k));
            let rec = recorded(&f.dir, t.index);
            let live = st.is_some_and(|s| LIVE.contains(&s.state.as_str()));
            let (state, failed) = match (st, &rec) {
                (Some(s), _) if live => (format!("{} ({})", s.state, s.source), false),
                (Some(s), Some(r)) => (format!("{} ({})", s.state, s.source), s.state != "COMPLETED" || r.exit != 0),
                (Some(s), None) => (format!("{} ({}; no status file: the task's script did not finish)", s.state, s.source), true),
                (None, Some(r)) => (if r.exit == 0 { "ENDED".into() } else { "ENDED, FAILED".into() }, r.exit != 0),
                (None, None) if jobs.is_some() => ("MISSING (Slurm no longer knows the job; no status file)".into(), true),
                (None, None) => ("NOT RUN".into(), true),
            };
            Line {
                index: t.index,
                name: t.name.clone(),
                job: key.or_else(|| rec.as_ref().map(|r| r.job.clone())).unwrap_or_else(|| "-".into()),
                state,
                exit: match (&rec, st.and_then(|s| s.exit.clone())) {
                    (Some(r), _) => r.exit.to_string(),
                    (None, Some(x)) => x,
                    (None, None) => "-".into(),
                },
                node: st.and_then(|s| s.node.clone()).or_else(|| rec.as_ref().map(|r| r.host.clone())).unwrap_or_else(|| "-".into()),
                gpu: rec.as_ref().map(|r| if r.gpu.is_empty() { "none".to_string() } else { r.gpu.clone() }).unwrap_or_else(|| "-".into()),
                stored: rec.as_ref().map_or("-".into(), |r| format!("{} (ended {})", r.stored, r.end)),
                finished: !live && (st.is_some() || rec.is_some()),
                failed,
            }
        })
        .collect()
}

/// The lines as a table; the merge job's line after them, where there is one.
pub fn table(lines: &[Line], merge: Option<(&str, Option<&State>)>) -> String {
    let header = ["task", "name", "Slurm job", "state", "exit", "node", "GPU", "results stored"];
    let mut t = new_table(header.map(String::from).to_vec(), false);
    for l in lines {
        t.add_row(vec![
            l.index.to_string(),
            l.name.clone(),
            l.job.clone(),
            l.state.clone(),
            l.exit.clone(),
            l.node.clone(),
            l.gpu.clone(),
            l.stored.clone(),
        ]);
    }
    let merge = merge.map(|(id, s)| {
        let s = s.map_or("not known to Slurm any more".to_string(), |s| {
            format!("{}{}", s.state, s.exit.as_ref().map(|x| format!(", exit {x}")).unwrap_or_default())
        });
        format!("merge job {id}: {s}\n")
    });
    format!("{t}\n{}", merge.unwrap_or_default())
}

fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let err = |e: std::io::Error| LabError::Results { path: path.display().to_string(), msg: e.to_string() };
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// What the merge found and wrote.
pub struct Merged {
    pub runs: usize,
    pub columns: Vec<String>,
    /// report.md and report.html, where there were runs to report.
    pub reports: Vec<PathBuf>,
}

/// Every results file under the fleet's results/, as one report across GPUs: report.md (its
/// plots in plots/) and report.html, each written whole or not at all.
pub fn merge(dir: &Path, by: Group) -> Result<Merged> {
    let results = dir.join("results");
    let runs = if results.is_dir() { store::read(std::slice::from_ref(&results))? } else { Vec::new() };
    let columns: Vec<(String, store::View)> = store::views(&runs, by).into_iter().map(|v| ("results".to_string(), v)).collect();
    let labels = report::labels(&columns);
    if columns.is_empty() {
        return Ok(Merged { runs: 0, columns: labels, reports: Vec::new() });
    }
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots).map_err(|e| LabError::Results { path: plots.display().to_string(), msg: e.to_string() })?;
    let mut links = String::new();
    for (name, caption, svg) in report::plots::plot_files(&columns, &labels) {
        write_atomic(&plots.join(&name), &svg)?;
        links.push_str(&format!("![{caption}](plots/{name})\n\n"));
    }
    let md = format!("{}\nPlots:\n\n{links}", report::side_by_side(&columns, Format::Markdown, &[]));
    let (md_path, html_path) = (dir.join("report.md"), dir.join("report.html"));
    write_atomic(&md_path, &md)?;
    write_atomic(&html_path, &report::side_by_side(&columns, Format::Html, &[]))?;
    Ok(Merged { runs: runs.len(), columns: labels, reports: vec![md_path, html_path] })
}
