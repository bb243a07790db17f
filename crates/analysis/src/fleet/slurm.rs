//! What the fleet asks of Slurm, through its own commands: sbatch to submit, then squeue (tasks
//! queued or running), sacct (tasks that ended, where the cluster keeps accounting) or, without
//! accounting, `scontrol show job` (ended tasks the controller still remembers).

use std::collections::BTreeMap;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::Fleet;
use crate::error::{LabError, Result};

/// One array job: its Slurm id and the fleet's tasks in it (their indices are its array indices).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayJob {
    pub job: String,
    pub tasks: Vec<usize>,
}

/// What `submit` got back from Slurm, kept in the fleet's folder as jobs.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Jobs {
    pub arrays: Vec<ArrayJob>,
    pub merge: String,
}

/// The sbatch calls, one array job per distinct placement (tasks that ask for the same resources
/// share one), then the merge job after all of them: each as its arguments.
pub fn plan(f: &Fleet) -> Vec<(Vec<String>, Vec<usize>)> {
    let mut groups: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    for t in &f.tasks {
        let args = t.place.args();
        match groups.iter_mut().find(|g| g.0 == args) {
            Some(g) => g.1.push(t.index),
            None => groups.push((args, vec![t.index])),
        }
    }
    groups
        .into_iter()
        .map(|(args, tasks)| {
            let list: Vec<String> = tasks.iter().map(usize::to_string).collect();
            let mut all = vec!["--parsable".to_string(), format!("--array={}", list.join(","))];
            all.extend(args);
            all.push(f.dir.join("fleet.sbatch").display().to_string());
            (all, tasks)
        })
        .collect()
}

/// The merge job's sbatch arguments, after the array jobs `after`.
pub fn merge_args(f: &Fleet, after: &[String]) -> Vec<String> {
    let mut all = vec!["--parsable".to_string(), format!("--dependency=afterany:{}", after.join(":"))];
    all.extend(f.merge.args());
    all.push(f.dir.join("merge.sbatch").display().to_string());
    all
}

fn run(program: &str, args: &[String]) -> Result<String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| LabError::Unavailable(format!("{program}: {e} (is Slurm's client installed and on PATH?)")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(LabError::Usage(format!("{program} {}: {}", super::script::join(args), err.trim().lines().last().unwrap_or("failed"))));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// sbatch --parsable prints "id" or "id;cluster".
fn job_id(out: &str) -> String {
    out.trim().split(';').next().unwrap_or("").to_string()
}

/// Submits the array jobs and the merge job; returns their ids.
pub fn submit(f: &Fleet) -> Result<Jobs> {
    let mut arrays = Vec::new();
    for (args, tasks) in plan(f) {
        arrays.push(ArrayJob { job: job_id(&run("sbatch", &args)?), tasks });
    }
    let ids: Vec<String> = arrays.iter().map(|a| a.job.clone()).collect();
    let merge = job_id(&run("sbatch", &merge_args(f, &ids))?);
    Ok(Jobs { arrays, merge })
}

/// What Slurm says of one array task (or of the merge job).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
    pub state: String,
    /// Slurm's "exit:signal", where it has ended.
    pub exit: Option<String>,
    pub node: Option<String>,
    /// Which command said so: squeue, sacct or scontrol.
    pub source: &'static str,
}

/// key=value words of one `scontrol show job -o` line.
fn fields(line: &str) -> BTreeMap<&str, &str> {
    line.split_whitespace().filter_map(|w| w.split_once('=')).collect()
}

/// Slurm's state of every array task of `jobs` and of the merge job, keyed "job_task" (the merge
/// job by its id): the queue first, then accounting, then the controller's memory.
pub fn states(jobs: &Jobs) -> BTreeMap<String, State> {
    let mut ids: Vec<String> = jobs.arrays.iter().map(|a| a.job.clone()).collect();
    ids.push(jobs.merge.clone());
    let list = ids.join(",");
    let mut out = BTreeMap::new();
    let some = |s: &str| (!s.is_empty() && s != "(null)" && s != "None assigned").then(|| s.to_string());
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // Ended jobs vanish from the queue: it may fail on ids it no longer knows.
    if let Ok(text) = run("squeue", &args(&["-h", "-r", "-j", &list, "-o", "%i|%T|%N"])) {
        for l in text.lines() {
            if let [id, state, node] = l.split('|').collect::<Vec<_>>()[..] {
                out.insert(id.to_string(), State { state: state.into(), exit: None, node: some(node), source: "squeue" });
            }
        }
    }
    if let Ok(text) = run("sacct", &args(&["-n", "-P", "-X", "-j", &list, "-o", "JobID,State,ExitCode,NodeList"])) {
        for l in text.lines() {
            if let [id, state, exit, node] = l.split('|').collect::<Vec<_>>()[..] {
                // "CANCELLED by 0" is CANCELLED.
                let state = state.split_whitespace().next().unwrap_or(state);
                out.entry(id.to_string()).or_insert(State { state: state.into(), exit: some(exit), node: some(node), source: "sacct" });
            }
        }
    } else {
        for id in &ids {
            let Ok(text) = run("scontrol", &args(&["show", "job", "-o", id])) else { continue };
            for l in text.lines() {
                let f = fields(l);
                let key = match (f.get("ArrayJobId"), f.get("ArrayTaskId")) {
                    (Some(j), Some(t)) => format!("{j}_{t}"),
                    _ => f.get("JobId").map_or(String::new(), |j| j.to_string()),
                };
                let state = f.get("JobState").copied().unwrap_or("UNKNOWN");
                let exit = f.get("ExitCode").and_then(|x| some(x));
                let node = f.get("NodeList").and_then(|x| some(x));
                out.entry(key).or_insert(State { state: state.into(), exit, node, source: "scontrol" });
            }
        }
    }
    out
}
