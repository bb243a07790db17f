//! Results on disk. A run is one file of JSON lines under `results/<model>-<arch>/`, created by
//! that run alone and appended to as it goes: a rerun adds a file and never replaces one, a run
//! that is killed keeps what it finished, two processes never write the same file. Reading merges
//! the runs of a device: the newest entry of each key, with every earlier run still on disk for
//! history and comparison.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::baselines;
use crate::error::{LabError, Result};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::Entry;
use crate::schema::multi::MultiResults;
pub use crate::schema::run::Run;
use crate::schema::run::{Header, Phases, Policy, Record, RunInfo, RunKind, SCHEMA};
use crate::schema::transfers::Transfers;
use crate::schema::tuning::TuneRecord;

fn err(path: &Path, msg: String) -> LabError {
    LabError::Results { path: path.display().to_string(), msg }
}

/// Reads one run file; each line it cannot take is said on stderr (`read_run_with`).
pub fn read_run(path: &Path) -> Result<Run> {
    read_run_with(path, &mut |w| eprintln!("warning: {w}"))
}

/// Reads one run file under the one rule for its lines: a header that is not a run's of this
/// schema makes the file an error (it is some other file, or another kernel-lab's), while a record
/// line that does not parse, wherever it sits (torn by a kill at the end, cut or foreign in the
/// middle, a field of the wrong type), is left out and given to `warn` as "file:line: why", the
/// other records kept. Nothing is dropped unsaid; blank lines hold nothing to drop.
pub fn read_run_with(path: &Path, warn: &mut dyn FnMut(String)) -> Result<Run> {
    let text = std::fs::read_to_string(path).map_err(|e| err(path, format!("cannot read: {e}")))?;
    // Numbered as an editor numbers them, before blank lines are passed over.
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next().ok_or_else(|| err(path, "empty: not a kernel-lab run".into()))?;
    let value: serde_json::Value = serde_json::from_str(first).map_err(|e| err(path, format!("not JSON lines: {e}")))?;
    match value.get("schema").and_then(|s| s.as_u64()) {
        None => return Err(err(path, "not a kernel-lab results file (no schema number)".into())),
        Some(s) if s != SCHEMA as u64 => return Err(err(path, format!("results schema {s}, but this kernel-lab reads schema {SCHEMA}"))),
        Some(_) => {}
    }
    let header: Header = serde_json::from_value(value).map_err(|e| err(path, format!("does not match results schema {SCHEMA}: {e}")))?;
    let mut records = Vec::new();
    for (n, line) in lines {
        match serde_json::from_str::<Record>(line) {
            Ok(r) => records.push(renamed(r)),
            Err(e) => warn(format!("{}:{n}: line left out, not a record of results schema {SCHEMA} ({e})", path.display())),
        }
    }
    let complete = records.iter().any(|r| matches!(r, Record::End(_)));
    Ok(Run { path: path.to_path_buf(), header, records, complete })
}

/// A record with the names the lab uses now: a family or variant renamed since it was written
/// takes its new name (`facts::renames`, csrc/renames.toml), and an entry the rung of its new
/// name, so results from before a rename compare with those after it.
fn renamed(mut record: Record) -> Record {
    use crate::facts::renames;
    let rename = |family: &mut String, variant: &mut String| {
        *family = renames::family(family).to_string();
        *variant = renames::variant(variant).to_string();
    };
    match &mut record {
        Record::Entry(e) => {
            if let Some(rung) = renames::rung(&e.variant) {
                e.rung = rung;
            }
            rename(&mut e.family, &mut e.variant);
        }
        Record::Candidate { family, variant, .. } => rename(family, variant),
        Record::Tuning(t) => rename(&mut t.family, &mut t.variant),
        Record::Note { text } => *text = renames::note(text),
        Record::Transfers(_) | Record::Multi(_) | Record::End(_) => {}
    }
    record
}

/// Every run under `paths`: run files (`.jsonl`) and folders of them, searched to any depth. An
/// unreadable or foreign file is an error that names it, and so is a `.json` file in a folder (the
/// one-file-per-device format of schema 1, which is not read): results are never left out unsaid.
pub fn read(paths: &[PathBuf]) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    for p in paths {
        read_into(p, &mut runs)?;
    }
    Ok(runs)
}

fn read_into(path: &Path, runs: &mut Vec<Run>) -> Result<()> {
    if path.is_dir() {
        let mut children: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| err(path, format!("cannot read folder: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "jsonl" || x == "json"))
            // A named baseline is a copy of a run already read beside it (read when named:
            // `compare --baseline`, or its own path); PyTorch's steps are not runs.
            .filter(|p| !(p.is_dir() && p.file_name().is_some_and(|n| n == baselines::BASELINES || n == PYTORCH)))
            .collect();
        children.sort();
        for c in children {
            read_into(&c, runs)?;
        }
        return Ok(());
    }
    if path.extension().is_some_and(|x| x == "json") && path.is_file() {
        return Err(err(path, format!("a .json file is not a run file: results are JSON-lines run files (.jsonl) of schema {SCHEMA}")));
    }
    runs.push(read_run(path)?);
    Ok(())
}

/// A GPU model's folder of the steps PyTorch timed on it (`advise --against` reads them).
pub const PYTORCH: &str = "pytorch";
/// A run being written: the header went first, each record is appended and flushed.
pub struct Writer {
    file: File,
    pub path: PathBuf,
}

/// A file name part: letters, digits, '-' and '_' only.
fn part(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect()
}

impl Writer {
    /// Creates `<dir>/<model>-<arch>/<date>-<host>-gpu<N>-<pid>.jsonl` (never an existing file)
    /// and writes the header.
    pub fn create(dir: &Path, header: &Header) -> Result<Writer> {
        let d = &header.device;
        let folder = dir.join(d.slug());
        std::fs::create_dir_all(&folder).map_err(|e| err(&folder, format!("cannot create folder: {e}")))?;
        let pid = std::process::id().to_string();
        let stem = format!("{}-{}-gpu{}-{}", part(&header.run.date), part(d.host.as_deref().unwrap_or("unknown")), d.ordinal, part(&pid));
        // A second run of this process in the same second gets a number; no file is ever reused.
        let (file, path) = (1..)
            .map(|n| folder.join(if n == 1 { format!("{stem}.jsonl") } else { format!("{stem}-{n}.jsonl") }))
            .find_map(|path| match OpenOptions::new().write(true).create_new(true).open(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                r => Some(r.map(|f| (f, path.clone())).map_err(|e| err(&path, format!("cannot create: {e}")))),
            })
            .expect("some number is free")?;
        let mut w = Writer { file, path };
        w.line(&serde_json::to_string(header).map_err(|e| err(&w.path, e.to_string()))?)?;
        Ok(w)
    }

    fn line(&mut self, text: &str) -> Result<()> {
        let path = self.path.clone();
        self.file
            .write_all(format!("{text}\n").as_bytes())
            .and_then(|_| self.file.flush())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| err(&path, format!("cannot write: {e}")))
    }

    /// Appends one record, on disk when this returns.
    pub fn append(&mut self, record: &Record) -> Result<()> {
        let text = serde_json::to_string(record).map_err(|e| err(&self.path, e.to_string()))?;
        self.line(&text)
    }
}

/// How runs are grouped into views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Group {
    /// One view per GPU model and architecture: every card of the model together.
    #[default]
    Model,
    /// One view per card (its UUID, else its host and index).
    Card,
}

/// What the runs of one device say, newest first where they overlap: the latest entry of each
/// key, the latest tuning of each variant and shape, the latest transfers and multi-GPU results.
#[derive(Debug, Clone)]
pub struct View {
    pub label: String,
    /// The results folder the runs are in (the one above their model's folder): runs of one model
    /// in another results folder (another build, an experiment kept apart) make a view of their own.
    pub source: PathBuf,
    /// The device as its newest run described it.
    pub device: DeviceInfo,
    /// The runs, oldest first.
    pub runs: Vec<RunInfo>,
    /// The card each run was measured on ("host GPU 0 GPU-1234abcd"), as `runs`.
    pub cards: Vec<String>,
    pub entries: Vec<Entry>,
    /// For each entry, the index in `runs` of the run that measured it.
    pub entry_runs: Vec<usize>,
    pub tuning: Vec<TuneRecord>,
    pub transfers: Option<Transfers>,
    pub multi: Option<MultiResults>,
    pub notes: Vec<String>,
}

/// The results folder of a run: the one above its model's folder.
fn source(run: &Run) -> PathBuf {
    run.path.ancestors().nth(2).map(Path::to_path_buf).unwrap_or_default()
}

fn group_key(run: &Run, by: Group) -> (PathBuf, String) {
    let d = &run.header.device;
    let key = match by {
        Group::Model => d.slug(),
        Group::Card => d.uuid.clone().unwrap_or_else(|| format!("{}-{}", d.host.as_deref().unwrap_or("?"), d.ordinal)),
    };
    (source(run), key)
}

/// The views of `runs`, grouped `by` model or card, in the order their groups first appear.
pub fn views(runs: &[Run], by: Group) -> Vec<View> {
    let mut keys: Vec<(PathBuf, String)> = Vec::new();
    for r in runs {
        let k = group_key(r, by);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.iter()
        .map(|k| {
            let mut mine: Vec<&Run> = runs.iter().filter(|r| group_key(r, by) == *k).collect();
            mine.sort_by(|a, b| a.header.run.date.cmp(&b.header.run.date));
            view(&mine, by)
        })
        .collect()
}

/// Folds runs (oldest first) into a view: later records replace earlier ones of the same key.
fn view(runs: &[&Run], by: Group) -> View {
    let newest = runs.last().expect("a group has a run");
    let d = &newest.header.device;
    let label = match by {
        Group::Model => format!("{} {}", d.name, d.arch_name()),
        Group::Card => format!("{} {} ({})", d.name, d.arch_name(), d.card()),
    };
    let mut v = View {
        label,
        source: source(newest),
        device: d.clone(),
        runs: Vec::new(),
        cards: Vec::new(),
        entries: Vec::new(),
        entry_runs: Vec::new(),
        tuning: Vec::new(),
        transfers: None,
        multi: None,
        notes: Vec::new(),
    };
    for run in runs {
        v.runs.push(run.header.run.clone());
        v.cards.push(run.header.device.card());
        for rec in &run.records {
            match rec {
                Record::Entry(e) => match v.entries.iter().position(|x| x.key() == e.key()) {
                    Some(i) => {
                        v.entries[i] = (**e).clone();
                        v.entry_runs[i] = v.runs.len() - 1;
                    }
                    None => {
                        v.entries.push((**e).clone());
                        v.entry_runs.push(v.runs.len() - 1);
                    }
                },
                Record::Tuning(t) => {
                    v.tuning.retain(|x| !(x.family == t.family && x.variant == t.variant && x.shape == t.shape));
                    v.tuning.push((**t).clone());
                }
                Record::Transfers(t) => v.transfers = Some((**t).clone()),
                Record::Multi(m) => v.multi = Some((**m).clone()),
                Record::Note { text } => {
                    v.notes.retain(|n| note_subject(n) != note_subject(text));
                    v.notes.push(text.clone());
                }
                Record::Candidate { .. } | Record::End(_) => {}
            }
        }
    }
    v
}

/// What a run's note is about, so a newer note on it replaces the older in a view as entries do:
/// its text before the first ": " ("tensor 4096x4096x4096: cuBLASLt best ..."), with the parts
/// after it that hold no space, a variant's name ("l2: l2_01_working_set: L2 inferred ...").
pub(crate) fn note_subject(text: &str) -> &str {
    let mut end = text.find(": ").unwrap_or(text.len());
    while let Some(next) = text.get(end + 2..).and_then(|rest| rest.find(": ")).map(|i| end + 2 + i) {
        if text[end + 2..next].contains(' ') {
            break;
        }
        end = next;
    }
    &text[..end]
}

/// The runs stored for `device`'s model under `dir` (none when the folder does not exist yet).
pub fn runs_of_model(dir: &Path, device: &DeviceInfo) -> Result<Vec<Run>> {
    let folder = dir.join(device.slug());
    if !folder.exists() {
        return Ok(Vec::new());
    }
    read(&[folder])
}

/// The commit this program was built from (`-dirty` with uncommitted changes), as every results
/// file records it.
pub const PROGRAM_COMMIT: &str = env!("KERNEL_LAB_GIT");

/// The header of a new run of `kind` on `device`: now, this build's commit and toolkit, the
/// command line.
pub fn new_header(kind: RunKind, device: &DeviceInfo, seed: Option<u64>, policy: Option<Policy>, hang_limit_s: Option<f64>) -> Header {
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let set = crate::gpu::registry::set().ok();
    // The program's commit, and the kernels' where a kernel edit has moved them on since.
    let program = PROGRAM_COMMIT;
    let git_commit = match set.map(|s| s.git_commit.as_str()) {
        Some(k) if k != program => format!("{program} (kernels {k})"),
        _ => program.to_string(),
    };
    let run = RunInfo {
        id: format!("{date} {} pid {}", device.card(), std::process::id()),
        kind,
        date,
        git_commit,
        lab_version: env!("CARGO_PKG_VERSION").to_string(),
        nvcc: set.map(|s| s.nvcc_version.clone()).unwrap_or_else(|| "unknown".into()),
        driver: device.driver.clone(),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        seed,
        policy,
        hang_limit_s,
    };
    Header { schema: SCHEMA, run, device: device.clone() }
}

/// A run's file, created at its first record, so a run that measures nothing leaves nothing.
pub struct Recorder {
    dir: PathBuf,
    header: Header,
    writer: Option<Writer>,
    started: std::time::Instant,
}

impl Recorder {
    pub fn new(dir: &Path, header: Header) -> Recorder {
        Recorder { dir: dir.to_path_buf(), header, writer: None, started: std::time::Instant::now() }
    }

    pub fn append(&mut self, record: Record) -> Result<()> {
        if self.writer.is_none() {
            self.writer = Some(Writer::create(&self.dir, &self.header)?);
        }
        self.writer.as_mut().expect("created above").append(&record)
    }

    /// Ends the run with its wall time and where it went; the file's path, if one was written.
    pub fn finish(mut self, phases: Vec<(String, f64)>) -> Result<Option<PathBuf>> {
        if self.writer.is_none() {
            return Ok(None);
        }
        self.append(Record::End(Phases { wall_s: self.started.elapsed().as_secs_f64(), phases }))?;
        Ok(self.writer.map(|w| w.path))
    }
}
