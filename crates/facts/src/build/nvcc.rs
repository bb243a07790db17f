//! Finding nvcc, asking it what it supports, and compiling variants in parallel with a cache.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use crate::arch::Target;
use crate::family::FamilyId;
use crate::launch;
use crate::manifest::Checked;
use crate::resources::{parse_ptxas, Usage};

pub struct Nvcc {
    pub path: PathBuf,
    /// e.g. "13.0.88"
    pub version: String,
    /// `nvcc --list-gpu-code`: sm_75, sm_80, ...
    pub gpu_codes: Vec<String>,
}

impl Nvcc {
    /// Looks in NVCC, CUDA_PATH, CUDA_HOME, PATH, then the project's own toolkit folder.
    pub fn find(root: &Path) -> Result<Nvcc, String> {
        let mut tried: Vec<PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("NVCC") {
            tried.push(PathBuf::from(p));
        }
        for var in ["CUDA_PATH", "CUDA_HOME"] {
            if let Some(p) = std::env::var_os(var) {
                tried.push(PathBuf::from(p).join("bin/nvcc"));
            }
        }
        if let Some(path) = std::env::var_os("PATH") {
            tried.extend(std::env::split_paths(&path).map(|d| d.join("nvcc")));
        }
        tried.push(root.join(".toolkit/nvidia/cu13/bin/nvcc"));
        let path = tried.into_iter().find(|p| p.is_file()).ok_or_else(|| {
            "no nvcc found (looked at $NVCC, $CUDA_PATH/bin, $CUDA_HOME/bin, $PATH and .toolkit/). \
             Run `cargo make setup` to install the pinned CUDA 13.0 toolkit from PyPI into .toolkit/, \
             or point NVCC at an nvcc"
                .to_string()
        })?;
        let version_text = run_text(Command::new(&path).arg("--version"))?;
        let version = version_text
            .split(", V")
            .nth(1)
            .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("cannot read a version from `{} --version`", path.display()))?;
        let gpu_codes = run_text(Command::new(&path).arg("--list-gpu-code"))?.split_whitespace().map(str::to_string).collect();
        Ok(Nvcc { path, version, gpu_codes })
    }
}

fn run_text(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One variant to compile.
pub struct Job {
    pub family: String,
    pub entry: Checked,
    pub src: PathBuf,
    pub targets: Vec<Target>,
}

impl Job {
    /// A variant of `tree/<family>/variants.toml`.
    pub fn new(tree: &Path, family: &str, entry: &Checked, targets: Vec<Target>) -> Job {
        Job { family: family.to_string(), entry: entry.clone(), src: tree.join(&entry.dir).join(&entry.file), targets }
    }
}

/// A compiled variant.
pub struct Built {
    pub job: Job,
    /// None when no planned architecture admits the variant.
    pub fatbin: Option<PathBuf>,
    pub usage: Vec<(String, Usage)>,
    pub hash: String,
    pub warnings: Vec<String>,
    /// The argument struct its launch takes (`launch::abi`).
    pub args: &'static str,
}

/// The flags that shape the code, in a fixed order (they feed the hash, so results record them):
/// the manifest's defines and those the build derives (`launch::generated_defines`).
fn flags(job: &Job, include: &Path, family: FamilyId) -> Vec<String> {
    let mut f = vec![
        "-fatbin".to_string(),
        "-O3".to_string(),
        "-std=c++17".to_string(),
        "-lineinfo".to_string(),
        "-Xptxas=-v".to_string(),
        format!("-I{}", include.display()),
    ];
    f.extend(job.entry.config().compiler_defines());
    f.extend(launch::generated_defines(family, &job.entry.launch));
    f.extend(job.targets.iter().map(|t| format!("-gencode={}", t.gencode())));
    f
}

/// Hash of what decides the machine code: toolkit, flags, the source, every shared header, and the
/// argument struct the build holds the kernel to.
fn source_hash(nvcc: &Nvcc, job: &Job, include: &Path, flags: &[String], abi: &str) -> Result<String, String> {
    let mut h = Sha256::new();
    h.update(nvcc.version.as_bytes());
    h.update(abi.as_bytes());
    for f in flags {
        h.update(f.as_bytes());
        h.update([0]);
    }
    let mut files = vec![job.src.clone()];
    let mut headers: Vec<PathBuf> =
        std::fs::read_dir(include).map_err(|e| format!("{}: {e}", include.display()))?.filter_map(|d| d.ok().map(|d| d.path())).collect();
    headers.sort();
    files.extend(headers);
    for f in files {
        h.update(std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    Ok(h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect())
}

/// Compiles every job, several at a time, with `include` on the include path; a job whose hash
/// matches its last build is reused. The outputs of variants no manifest names any more are
/// removed, so a bundle of the folder's fatbins holds only the current set.
pub fn compile_all(nvcc: &Nvcc, include: &Path, out_dir: &Path, jobs: Vec<Job>) -> Result<Vec<Built>, String> {
    std::fs::create_dir_all(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let names: std::collections::HashSet<&str> = jobs.iter().map(|j| j.entry.name.as_str()).collect();
    for entry in std::fs::read_dir(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let stem = [".fatbin", ".ptxas.txt", ".hash", ".abi.cu"].iter().find_map(|ext| file.strip_suffix(ext));
        if stem.is_some_and(|s| !names.contains(s)) {
            std::fs::remove_file(entry.path()).map_err(|e| format!("{}: {e}", entry.path().display()))?;
        }
    }
    let queue = Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>());
    let results = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let Some((i, job)) = queue.lock().unwrap().pop() else { break };
                let r = compile_one(nvcc, include, out_dir, job);
                results.lock().unwrap().push((i, r));
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// What nvcc compiles for a variant: its source, then a static_assert that its kernel takes the
/// argument struct its family's protocol names for its launch (`launch::abi`). A kernel whose
/// signature disagrees with its manifest entry fails the build there; the assertion adds no code.
fn checked_source(job: &Job, family: FamilyId) -> (String, &'static str) {
    let abi = launch::abi(family, &job.entry.launch);
    let (symbol, line) = (&job.entry.symbol, job.entry.line);
    let text = format!(
        "#include \"{src}\"\n\
         template <class A, class B> struct lab_same {{ static constexpr bool value = false; }};\n\
         template <class A> struct lab_same<A, A> {{ static constexpr bool value = true; }};\n\
         template <class A> constexpr bool lab_takes(void (*)(A)) {{ return lab_same<A, {abi}>::value; }}\n\
         static_assert(lab_takes(&{symbol}), \"{symbol} must take {abi}: {family}/variants.toml:{line} makes it a {family} kernel with that launch\");\n",
        src = job.src.display(),
        family = job.family,
    );
    (text, abi)
}

fn compile_one(nvcc: &Nvcc, include: &Path, out_dir: &Path, job: Job) -> Result<Built, String> {
    let family = FamilyId::parse(&job.family).ok_or_else(|| format!("family '{}' has no launch protocol", job.family))?;
    let flags = flags(&job, include, family);
    let (checked, abi) = checked_source(&job, family);
    let hash = source_hash(nvcc, &job, include, &flags, abi)?;
    if job.targets.is_empty() {
        return Ok(Built { job, fatbin: None, usage: Vec::new(), hash, warnings: Vec::new(), args: abi });
    }
    let fatbin = out_dir.join(format!("{}.fatbin", job.entry.name));
    let report = out_dir.join(format!("{}.ptxas.txt", job.entry.name));
    let stamp = out_dir.join(format!("{}.hash", job.entry.name));
    let cached = fatbin.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == hash);
    let text = if cached {
        std::fs::read_to_string(&report).map_err(|e| format!("{}: {e}", report.display()))?
    } else {
        let wrapper = out_dir.join(format!("{}.abi.cu", job.entry.name));
        std::fs::write(&wrapper, &checked).map_err(|e| format!("{}: {e}", wrapper.display()))?;
        let mut cmd = Command::new(&nvcc.path);
        cmd.args(&flags).arg("-o").arg(&fatbin).arg(&wrapper);
        let out = cmd.output().map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            return Err(format!("nvcc failed for {}/{}\ncommand: {cmd:?}\n{text}", job.family, job.entry.file));
        }
        std::fs::write(&report, &text).map_err(|e| format!("{}: {e}", report.display()))?;
        std::fs::write(&stamp, &hash).map_err(|e| format!("{}: {e}", stamp.display()))?;
        text
    };
    let usage = parse_ptxas(&text).into_iter().filter(|(func, _, _)| func == &job.entry.symbol).map(|(_, target, u)| (target, u)).collect();
    let warnings = text.lines().filter(|l| l.contains("warning")).map(|l| l.trim().to_string()).collect();
    Ok(Built { job, fatbin: Some(fatbin), usage, hash, warnings, args: abi })
}
