//! Carrying stored tunings across an edit that left their machine code alone. A tuning's
//! `best_hash` covers the text of the variant and the headers it includes, so any code edit to a
//! header (a refactor whose machine code is byte-identical, too) makes the tuning stale, and searching
//! again needs the GPU it was made on. Given the tree the search ran on (OLD_TREE), a tuning is
//! carried to the current hash on proof: OLD_TREE's texts hash to the stored `best_hash` (so they
//! are what was tuned), and nvcc makes the same cubin, byte for byte, of the old and the current
//! texts in the tuned configuration: the instructions and everything beside them (launch bounds,
//! registers, shared memory, constant data). Compiled without line information, a cubin names no
//! source path, so two trees at different paths compare equal. The current side is the kernel
//! set's own texts (those `jit::hash` covers), not csrc/ on disk, which may have moved on since
//! the build. A variant renamed since (csrc/renames.toml) is proven the same way, its old source
//! compiled with the old entry symbol defined as the new name, and its record takes the new name.
//!
//! What it assumes: the tuner compiled with NVRTC, and the proof compiles with nvcc of the same
//! CUDA version (refused otherwise); both share the front end and ptxas, so an edit that leaves
//! nvcc's cubin alone is taken to leave NVRTC's alone too. Code only NVRTC reads (a header's
//! `__CUDACC_RTC__` branch) is outside that: a tuning whose such header changed is not carried.
//! Variant sources include only the lab's headers (as NVRTC, given only those, needs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{LabError, Result};
use crate::facts::arch::Target;
use crate::facts::build::nvcc::Nvcc;
use crate::facts::renames;
use crate::gpu::jit;
use crate::gpu::registry::{self, Config};
use crate::prune::TUNINGS;
use crate::schema::run::Record;
use crate::schema::tuning::TuneRecord;
use crate::store;

/// Compiles at once: nvcc is mostly one core each, and the machine runs other work.
const WORKERS: usize = 2;

/// What became of one stored tuning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Its hash is the current one: nothing to do.
    Current,
    /// Proven unchanged: moved from the stored hash to the current one.
    Carried { from: String, to: String },
    /// Left stale, and why.
    Stale(String),
}

/// One tuning record considered: its tunings file, variant, shape and outcome.
#[derive(Debug, Clone)]
pub struct Considered {
    pub file: PathBuf,
    pub variant: String,
    pub shape: String,
    pub outcome: Outcome,
}

/// What carrying would do: each record's outcome, and the tunings files as they are written
/// where a record was carried (path and lines).
#[derive(Debug, Default)]
pub struct Carry {
    pub considered: Vec<Considered>,
    pub writes: Vec<(PathBuf, Vec<String>)>,
}

/// One compile: a source on an include path with defines for one `-gencode`. Records of one
/// variant at several shapes often share their best configuration; each compile is made once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Job {
    include: PathBuf,
    source: PathBuf,
    defines: Vec<String>,
    gencode: String,
}

/// A record still to prove: where it sits and the two compiles to compare.
struct Pending {
    at: usize,
    line: usize,
    record: TuneRecord,
    now: String,
    old: Job,
    new: Job,
}

/// A folder of its own under the system's temporary folder, removed when dropped (an error
/// included), for the current texts and the compiler's output.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn io(path: &Path, what: &str, e: impl std::fmt::Display) -> LabError {
    LabError::Results { path: path.display().to_string(), msg: format!("cannot {what}: {e}") }
}

/// What carrying the tunings files of `results` (a results folder, or one model's) with
/// `old_tree` as the tree the searches ran on would do. Nothing is changed; compiles happen in a
/// scratch folder. The toolkit is looked for only when some record needs a proof.
pub fn plan(results: &Path, old_tree: &Path) -> Result<Carry> {
    if !results.is_dir() {
        return Err(io(results, "read", "no such folder"));
    }
    let old_csrc = old_tree.join("csrc");
    let old_headers = crate::facts::build::headers(&old_csrc.join("include")).map_err(|e| {
        LabError::Usage(format!(
            "{}: not a checkout of the repository ({e}): --from takes the tree the tunings were made on",
            old_tree.display()
        ))
    })?;
    let mut files = Vec::new();
    find_tunings(results, &mut files)?;
    if files.is_empty() {
        return Err(io(results, "carry", format!("holds no {TUNINGS}")));
    }
    // A folder this call creates, never one left by a run that was killed: its files would be
    // compiled as the current code.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("kernel-lab-carry-{}-{call}-{nanos}", std::process::id()));
    std::fs::create_dir(&dir).map_err(|e| io(&dir, "create", e))?;
    let scratch = Scratch(dir);
    let current = scratch.0.join("current");
    std::fs::create_dir_all(current.join("include")).map_err(|e| io(&current, "create", e))?;
    for (name, text) in &registry::set()?.headers {
        let path = current.join("include").join(name);
        std::fs::write(&path, text).map_err(|e| io(&path, "write", e))?;
    }
    let trees = Trees { old_csrc, old_headers, current, version: jit::version()? };
    let mut carry = Carry::default();
    let mut pending = Vec::new();
    let mut texts: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for path in files {
        let run = store::read_run(&path)?;
        let sm = run.header.device.sm();
        let text = std::fs::read_to_string(&path).map_err(|e| io(&path, "read", e))?;
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        for (n, line) in lines.iter().enumerate().skip(1) {
            let Ok(Record::Tuning(t)) = serde_json::from_str::<Record>(line) else { continue };
            let Some(best) = t.best.clone() else { continue };
            let mut considered =
                Considered { file: path.clone(), variant: t.variant.clone(), shape: t.shape.clone(), outcome: Outcome::Current };
            match trees.prove(&t, &best, sm) {
                Ok(None) => {}
                Ok(Some((now, old, new))) => {
                    pending.push((texts.len(), Pending { at: carry.considered.len(), line: n, record: (*t).clone(), now, old, new }))
                }
                Err(why) => considered.outcome = Outcome::Stale(why),
            }
            carry.considered.push(considered);
        }
        texts.push((path, lines));
    }
    if !pending.is_empty() {
        let mut jobs: Vec<Job> = pending.iter().flat_map(|(_, p)| [p.old.clone(), p.new.clone()]).collect();
        jobs.sort();
        jobs.dedup();
        let cubins = compile_all(&Tools::find(&trees.version)?, &jobs, &scratch.0);
        let of = |j: &Job| {
            jobs.binary_search(j).ok().and_then(|i| cubins.get(&i).cloned()).unwrap_or_else(|| Err("the compile did not finish".into()))
        };
        let mut changed = vec![false; texts.len()];
        for (file, p) in pending {
            let outcome = match (of(&p.old), of(&p.new)) {
                (Ok(a), Ok(b)) if a == b => {
                    let from = p.record.best_hash.clone().unwrap_or_default();
                    let mut record = p.record;
                    record.family = renames::family(&record.family).to_string();
                    record.variant = renames::variant(&record.variant).to_string();
                    record.carried_from = record.carried_from.or(Some(from.clone()));
                    record.best_hash = Some(p.now.clone());
                    texts[file].1[p.line] =
                        serde_json::to_string(&Record::Tuning(Box::new(record))).map_err(|e| io(&texts[file].0, "write", e))?;
                    changed[file] = true;
                    Outcome::Carried { from, to: p.now }
                }
                (Ok(_), Ok(_)) => Outcome::Stale("nvcc makes another cubin of the current code".into()),
                (Err(e), _) => Outcome::Stale(format!("OLD_TREE's code: {e}")),
                (_, Err(e)) => Outcome::Stale(format!("the current code: {e}")),
            };
            carry.considered[p.at].outcome = outcome;
        }
        carry.writes = texts.into_iter().zip(changed).filter(|(_, c)| *c).map(|(t, _)| t).collect();
    }
    Ok(carry)
}

/// Does what `plan` said: each tunings file written whole beside itself, on disk, and renamed
/// over the old one, as `prune` writes it, so a file is never left half-written.
pub fn apply(carry: &Carry) -> Result<()> {
    for (path, lines) in &carry.writes {
        crate::prune::replace_lines(path, lines)?;
    }
    Ok(())
}

/// The two codes compared: OLD_TREE's csrc/ and its headers, the current texts written out to a
/// folder of the scratch folder (include/ and src/), and the NVRTC version hashes are made with.
struct Trees {
    old_csrc: PathBuf,
    old_headers: Vec<(String, String)>,
    current: PathBuf,
    version: String,
}

impl Trees {
    /// For a tuning `t` of `best` on sm_`sm`: None where its hash is current, else the current
    /// hash and the old and the current compile to compare, once OLD_TREE is shown to be what was
    /// tuned; or why it cannot be carried.
    fn prove(&self, t: &TuneRecord, best: &Config, sm: u32) -> std::result::Result<Option<(String, Job, Job)>, String> {
        let spec = registry::by_name(&t.variant).map_err(|_| "not a variant of this build's kernel set".to_string())?;
        let stored = t.best_hash.clone().ok_or("no stored hash")?;
        let now = jit::hash(spec, best, sm).map_err(|e| e.to_string())?;
        if now == stored {
            return Ok(None);
        }
        // The file where OLD_TREE has it under its current path; else, for a variant renamed
        // since (csrc/renames.toml), its old file, compiled with its old entry symbol defined as
        // the new one, so the cubins compare equal where only the name moved.
        let (old_path, rename) = match self.old_csrc.join(&spec.file).is_file() {
            true => (spec.file.clone(), None),
            false => renamed_from(&spec.file),
        };
        let old_file = self.old_csrc.join(&old_path);
        let old_source = std::fs::read_to_string(&old_file).map_err(|_| format!("OLD_TREE has no csrc/{old_path}"))?;
        let defines = jit::hashed_defines(spec, best, &old_source, &self.old_headers).map_err(|e| e.to_string())?;
        let target = jit::target(spec, sm);
        if jit::hash_texts(&old_source, &self.old_headers, &defines, &target.name(), &self.version) != stored {
            return Err("OLD_TREE is not the code it was tuned on".into());
        }
        // What NVRTC alone compiles is not in nvcc's cubin: such a header must not have changed.
        let set = registry::set().map_err(|e| e.to_string())?;
        let rtc_only = |headers: &[(String, String)], source: &str| -> Vec<(String, String)> {
            jit::included(source, headers)
                .into_iter()
                .filter(|(_, t)| t.contains("__CUDACC_RTC__"))
                .map(|(n, t)| (n.clone(), jit::code(t)))
                .collect()
        };
        if rtc_only(&self.old_headers, &old_source) != rtc_only(&set.headers, &spec.source) {
            return Err("a header with code only NVRTC compiles (__CUDACC_RTC__) changed".into());
        }
        // Written by this call (several records of a variant write the same text).
        let new_file = self.current.join("src").join(&spec.file);
        let dir = new_file.parent().unwrap_or(&self.current);
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&new_file, &spec.source))
            .map_err(|e| format!("{}: {e}", new_file.display()))?;
        // The cubin of the tuning's architecture: NVRTC's compute_XY(a), as nvcc's sm_XY(a).
        let gencode = format!("-gencode={}", Target { ptx: false, ..target }.gencode());
        let defines = jit::defines(spec, best).map_err(|e| e.to_string())?;
        let job = |include: PathBuf, source: PathBuf, extra: Option<String>| Job {
            include,
            source,
            defines: defines.iter().cloned().chain(extra).collect(),
            gencode: gencode.clone(),
        };
        Ok(Some((now, job(self.old_csrc.join("include"), old_file, rename), job(self.current.join("include"), new_file, None))))
    }
}

/// Where the kernel source `file` (`<family>/<stem>.cu`) was before a rename, and the define that
/// gives its old entry symbol the new name; `file` itself and None where it was not renamed.
fn renamed_from(file: &str) -> (String, Option<String>) {
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    let stem = name.strip_suffix(".cu").unwrap_or(name);
    let old_dir = renames::families().find(|(_, new)| *new == dir).map_or(dir, |(old, _)| old);
    match renames::former(stem) {
        Some(old) => (format!("{old_dir}/{old}.cu"), Some(format!("-D{old}={stem}"))),
        None => (format!("{old_dir}/{name}"), None),
    }
}

/// The tunings files of a results folder, in path order: `dir/tunings.jsonl` (one GPU model's
/// folder given) or `dir/<model>/tunings.jsonl` (the results folder), no deeper, so a folder that
/// holds other checkouts is not searched into theirs. A linked folder is not followed.
fn find_tunings(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let own = dir.join(TUNINGS);
    if own.is_file() {
        out.push(own);
        return Ok(());
    }
    let mut children: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(|e| io(dir, "read folder", e))?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    children.sort();
    for c in children {
        let file = c.join(TUNINGS);
        if std::fs::symlink_metadata(&c).is_ok_and(|m| m.is_dir()) && file.is_file() {
            out.push(file);
        }
    }
    Ok(())
}

/// The toolkit's nvcc, of the CUDA version NVRTC has.
struct Tools {
    nvcc: PathBuf,
}

impl Tools {
    /// nvcc where the build looks (`Nvcc::find`, under the repository the kernel set was built
    /// from), refused unless its version is NVRTC's `nvrtc` ("13.0"): another compiler's cubin
    /// proves nothing of what NVRTC compiled.
    fn find(nvrtc: &str) -> Result<Tools> {
        let set = registry::set()?;
        let root = set.sources.first().and_then(|s| s.path.parent()).map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let nvcc = Nvcc::find(&root).map_err(LabError::Unavailable)?;
        if !nvcc.version.starts_with(&format!("{nvrtc}.")) {
            return Err(LabError::Unavailable(format!(
                "nvcc {} ({}) is not of NVRTC's CUDA {nvrtc}: point NVCC at the toolkit the tunings were compiled with",
                nvcc.version,
                nvcc.path.display()
            )));
        }
        Ok(Tools { nvcc: nvcc.path })
    }
}

/// The cubin of every job, by its index, compiled `WORKERS` at a time; an error is nvcc's first
/// line of complaint.
fn compile_all(tools: &Tools, jobs: &[Job], scratch: &Path) -> BTreeMap<usize, std::result::Result<Vec<u8>, String>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..WORKERS.min(jobs.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break done };
                        done.push((i, cubin(tools, job, &scratch.join(format!("{i}.cubin")))));
                    }
                })
            })
            .collect();
        // A worker that panicked leaves its jobs out: they read as compiles that did not finish.
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    })
}

fn cubin(tools: &Tools, job: &Job, cubin: &Path) -> std::result::Result<Vec<u8>, String> {
    let mut nvcc = Command::new(&tools.nvcc);
    nvcc.args(["-cubin", "-O3", "-std=c++17"]).arg(format!("-I{}", job.include.display())).args(&job.defines).arg(&job.gencode);
    let out = nvcc.arg("-o").arg(cubin).arg(&job.source).output().map_err(|e| format!("cannot run nvcc: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().find(|l| l.contains("error")).or_else(|| err.lines().next()).unwrap_or("failed");
        return Err(format!("nvcc: {}", first.trim()));
    }
    std::fs::read(cubin).map_err(|e| format!("{}: {e}", cubin.display()))
}
