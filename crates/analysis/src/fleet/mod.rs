//! `kernel-lab fleet`: the lab on a Slurm cluster. A fleet is a shared folder and a list of tasks,
//! each one `kernel-lab` command on one GPU type or node. This module reads the fleet file and
//! writes the plain sbatch scripts (`script`); `slurm` submits them and asks Slurm how they went;
//! `collect` says per task what happened and merges what finished into one report.
//!
//! A task's `run` is split into words as a POSIX shell splits them (quotes and backslashes:
//! `sheet "RTX 4090"` is two words), and the scripts quote every word back, so what a task runs is
//! exactly what its line says. Every task's whole command line is checked at submit, before
//! anything is written (`Fleet::check`, given the CLI's own parser), so a bad flag or size is
//! found then rather than after the job has waited in the queue.
//!
//! The shared folder, after a run:
//!   fleet.sbatch, merge.sbatch   the array job's script (every task) and the merge job's
//!   tasks.json, jobs.json        the tasks as submitted, and the Slurm job ids
//!   logs/task-N.out, merge.out   each task's output
//!   status/task-N.json           what each task's script recorded when it ended (GPU, exit code)
//!   results/<model>-<arch>/*.jsonl   every task's results files, each renamed in when complete
//!   report.md, report.html, plots/   the report across GPUs, rendered by `collect`

pub mod collect;
pub mod script;
pub mod slurm;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{LabError, Result};

/// The subcommands a task may run, and whether each stores results (and so takes `--results-dir`).
const COMMANDS: [(&str, bool); 9] = [
    ("bench", true),
    ("tune", true),
    ("transfers", true),
    ("multi", true),
    ("verify", false),
    ("sheet", false),
    ("resources", false),
    ("list", false),
    ("devices", false),
];

/// Where a task runs: Slurm's own options, given to sbatch as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    pub partition: Option<String>,
    pub constraint: Option<String>,
    /// Generic resources, "gpu:1" for one GPU.
    pub gres: Option<String>,
    /// The time limit, in Slurm's format ("01:00:00").
    pub time: Option<String>,
    pub account: Option<String>,
    /// Any other sbatch options, each as one argument ("--qos=short").
    #[serde(default)]
    pub extra: Vec<String>,
}

impl Placement {
    /// `self`, with `over`'s fields where it sets them.
    fn with(&self, over: &Placement) -> Placement {
        let pick = |a: &Option<String>, b: &Option<String>| b.clone().or_else(|| a.clone());
        Placement {
            partition: pick(&self.partition, &over.partition),
            constraint: pick(&self.constraint, &over.constraint),
            gres: pick(&self.gres, &over.gres),
            time: pick(&self.time, &over.time),
            account: pick(&self.account, &over.account),
            extra: [self.extra.clone(), over.extra.clone()].concat(),
        }
    }

    /// The sbatch arguments.
    pub fn args(&self) -> Vec<String> {
        let named = [
            ("partition", &self.partition),
            ("constraint", &self.constraint),
            ("gres", &self.gres),
            ("time", &self.time),
            ("account", &self.account),
        ];
        named.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("--{k}={v}"))).chain(self.extra.iter().cloned()).collect()
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskSpec {
    name: Option<String>,
    run: String,
    #[serde(flatten)]
    place: Placement,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MergeSpec {
    #[serde(flatten)]
    place: Placement,
}

/// The fleet file (TOML), as the user writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetSpec {
    /// The fleet's folder; a relative one is from the fleet file's folder (not the current one),
    /// so a fleet file means the same folder wherever it is submitted from.
    dir: PathBuf,
    /// The `kernel-lab` the tasks run; relative, from the fleet file's folder like `dir`.
    binary: Option<PathBuf>,
    #[serde(default)]
    slurm: Placement,
    /// Where the merge job runs; without it, the `[slurm]` options but gres and constraint.
    merge: Option<MergeSpec>,
    #[serde(rename = "task")]
    tasks: Vec<TaskSpec>,
}

/// One task: an index (its array index), a name, the command, where it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub index: usize,
    pub name: String,
    pub args: Vec<String>,
    /// Whether the command stores results (it gets `--results-dir`).
    pub stores: bool,
    pub place: Placement,
}

impl Task {
    /// The arguments the task's script gives `kernel-lab`: its own, then `--results-dir
    /// results_dir` where it stores results.
    pub fn command_line(&self, results_dir: &str) -> Vec<String> {
        let mut all = self.args.clone();
        if self.stores {
            all.extend(["--results-dir".to_string(), results_dir.to_string()]);
        }
        all
    }
}

/// A fleet ready to submit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fleet {
    /// The folder every node sees.
    pub dir: PathBuf,
    /// The `kernel-lab` every task runs (on a path every node sees).
    pub binary: PathBuf,
    pub tasks: Vec<Task>,
    pub merge: Placement,
}

fn usage(msg: String) -> LabError {
    LabError::Usage(msg)
}

/// A task's command: `run` split into words as a POSIX shell would (`sheet "RTX 4090"` is `sheet`
/// and `RTX 4090`); its first word a subcommand a task may run. Only the command's shape is checked
/// here; its flags and values are checked by `Fleet::check` with the CLI's parser.
pub fn task(index: usize, name: Option<String>, run: &str, place: Placement) -> Result<Task> {
    let args =
        shlex::split(run).ok_or_else(|| usage(format!("fleet task {index}: 'run' ends inside a quote or after a backslash: {run}")))?;
    if args.iter().any(|a| a.contains('\0')) {
        return Err(usage(format!("fleet task {index}: 'run' holds a NUL character, which no command line can carry")));
    }
    let first = args.first().ok_or_else(|| usage(format!("fleet task {index}: 'run' is empty")))?;
    let &(_, stores) = COMMANDS.iter().find(|(c, _)| c == first).ok_or_else(|| {
        let names: Vec<&str> = COMMANDS.iter().map(|c| c.0).collect();
        usage(format!("fleet task {index}: '{first}' is not a command a task runs ({})", names.join(", ")))
    })?;
    if stores && args.iter().any(|a| a.starts_with("--results-dir")) {
        return Err(usage(format!("fleet task {index}: the fleet sets --results-dir (its results/ folder)")));
    }
    // Unnamed: the command's words without its flags, any character a name may not hold made a
    // '-' ("bench sgemm --quick" is bench-sgemm, `sheet "RTX 4090"` is sheet-RTX-4090).
    let name = name.unwrap_or_else(|| {
        let words: Vec<&str> = args.iter().map(String::as_str).filter(|a| !a.starts_with('-')).collect();
        words.join("-").chars().map(|c| if name_char(c) { c } else { '-' }).collect()
    });
    if name.is_empty() || !name.chars().all(name_char) {
        return Err(usage(format!("fleet task {index}: name '{name}': letters, digits, '-', '_' and '.' only")));
    }
    Ok(Task { index, name, args, stores, place })
}

/// A task's name goes into file names and the scripts unquoted.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.".contains(c)
}

impl Fleet {
    /// From a fleet file; `binary` is used where the file names none. The file's relative `dir`
    /// and `binary` are from the file's own folder.
    pub fn read(path: &Path, binary: &Path) -> Result<Fleet> {
        let text = std::fs::read_to_string(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        let spec: FleetSpec = toml::from_str(&text).map_err(|e| {
            usage(format!("{}: {}", path.display(), e.to_string().lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(" ")))
        })?;
        let tasks = spec
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| task(i, t.name.clone(), &t.run, spec.slurm.with(&t.place)))
            .collect::<Result<Vec<_>>>()?;
        let merge = match spec.merge {
            Some(m) => m.place,
            None => Placement { gres: None, constraint: None, ..spec.slurm.clone() },
        };
        // `Path::join` keeps an absolute path as it is; the parent of "fleet.toml" is "", which
        // `Fleet::new` then takes from the current folder.
        let here = path.parent().unwrap_or(Path::new(""));
        let binary = spec.binary.as_ref().map_or_else(|| binary.to_path_buf(), |b| here.join(b));
        Fleet::new(&here.join(&spec.dir), &binary, tasks, merge)
    }

    /// Checked: at least one task, names unique. The folder and the binary are made absolute
    /// (a relative one from the current folder, which is where `--dir` on the command line is
    /// from), as every node must resolve them alike.
    pub fn new(dir: &Path, binary: &Path, tasks: Vec<Task>, merge: Placement) -> Result<Fleet> {
        if tasks.is_empty() {
            return Err(usage("a fleet needs at least one task".into()));
        }
        for (i, t) in tasks.iter().enumerate() {
            if tasks[..i].iter().any(|u| u.name == t.name) {
                return Err(usage(format!("fleet: two tasks are named '{}' (give each a name)", t.name)));
            }
        }
        let abs = |what: &str, p: &Path| std::path::absolute(p).map_err(|e| usage(format!("fleet {what} '{}': {e}", p.display())));
        let (dir, binary) = (abs("dir", dir)?, abs("binary", binary)?);
        Ok(Fleet { dir, binary, tasks, merge })
    }

    /// Every task's whole command line, as its script will run it (with `--results-dir` where it
    /// stores results), given to `parse`: the CLI's own parser, so this layer need not know its
    /// grammar. The first task it refuses is one usage error naming the task.
    pub fn check(&self, parse: impl Fn(&[String]) -> std::result::Result<(), String>) -> Result<()> {
        for t in &self.tasks {
            parse(&t.command_line("results")).map_err(|e| usage(format!("fleet task {} ({}): {e}", t.index, t.name)))?;
        }
        Ok(())
    }

    /// The fleet as `submit` recorded it in its folder.
    pub fn load(dir: &Path) -> Result<Fleet> {
        let path = dir.join("tasks.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| LabError::Results { path: path.display().to_string(), msg: format!("{e} (not a fleet folder?)") })?;
        serde_json::from_str(&text).map_err(|e| LabError::Results { path: path.display().to_string(), msg: e.to_string() })
    }
}
