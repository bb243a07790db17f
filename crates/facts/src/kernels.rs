//! The compiled kernel set: what the build made of the manifests (one fatbin per variant and
//! `kernels.json` describing them all), and where a program finds it at run time.
//!
//! Why beside the program rather than inside it: a kernel edit then rebuilds its fatbin and this
//! file, and no Rust at all. A development build reads them from the target folder; a device
//! bundle carries the folder next to the binary.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::arch::{ArchReq, Target};
use crate::launch::Launch;
use crate::manifest::Config;
use crate::resources::Usage;

/// The file that describes a kernel set, in the set's folder.
pub const FILE: &str = "kernels.json";
/// Bumped whenever a field of the set changes meaning.
pub const SCHEMA: u32 = 2;
/// Where the build writes the lab's own set and the set with the test-only variants, in the
/// target folder; where a bundle carries them, beside the binary.
pub const MAIN_DIR: &str = "kernels";
pub const TEST_DIR: &str = "kernels-test";
/// Points a program at another kernel set's folder.
pub const ENV: &str = "KERNEL_LAB_KERNELS";

/// Every variant of a build, and how it was built.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KernelSet {
    pub schema: u32,
    /// The commit the kernels were built from ("-dirty" with uncommitted changes): a kernel edit
    /// rebuilds this set and not the program, so the two can differ.
    pub git_commit: String,
    pub nvcc_version: String,
    /// The toolkit's lib folder, where NVRTC is looked for when the loader path lacks it.
    pub toolkit_lib: PathBuf,
    /// Architectures with SASS in the fatbins (before each variant's own requirement).
    pub archs: Vec<String>,
    /// Architectures of the lab's table not built, with the reason.
    pub skipped: Vec<(String, String)>,
    /// The source folders it was built from, each with a digest of its files.
    pub sources: Vec<SourceTree>,
    /// The shared headers (name, text), for compiling variants again at run time.
    pub headers: Vec<(String, String)>,
    pub variants: Vec<VariantSpec>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SourceTree {
    pub path: PathBuf,
    pub digest: String,
}

/// One variant: a kernel file built with one set of constants.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantSpec {
    pub family: String,
    pub name: String,
    /// The kernel's entry symbol: the file's stem.
    pub symbol: String,
    /// Relative to its csrc/ folder.
    pub file: String,
    pub rung: u32,
    /// The file header's "Technique:" line.
    pub summary: String,
    pub block: [u32; 3],
    pub arch: ArchReq,
    pub needs: String,
    pub defines: Vec<(String, i64)>,
    pub multiple_of: Vec<(String, u64)>,
    /// The manifest configuration's launch, parsed and checked by the build.
    pub launch: Launch,
    /// The argument struct that launch takes (`launch::abi`), which the compilers get as
    /// LAB_ARGS: for a tool that compiles the variant again outside the lab (scripts/).
    pub args: String,
    /// The fatbin's targets: sm_XY SASS and compute_XY PTX.
    pub targets: Vec<Target>,
    /// The fatbin, relative to the set's folder; None when no built architecture admits it.
    pub fatbin: Option<String>,
    /// Hash of toolkit, flags, source and headers: results carry it so stale ones show.
    pub source_hash: String,
    /// The kernel file's text, for compiling it again with other constants (the tuner).
    pub source: String,
    /// Values the tuner may try, per define (or BLOCK_X/Y/Z).
    pub tune: Vec<(String, Vec<i64>)>,
    /// What every configuration must satisfy (integer expressions, see `expr`).
    pub constraints: Vec<String>,
    /// Per SASS target, from ptxas.
    pub resources: Vec<(String, Usage)>,
    /// Built only for the lab's own tests (tests/csrc): a kernel that faults or never returns.
    #[serde(default)]
    pub test_only: bool,
}

impl VariantSpec {
    /// The configuration the manifest gives (the one in the fatbin).
    pub fn config(&self) -> Config {
        Config { block: self.block, defines: self.defines.clone() }
    }

    /// Whether the manifest declares the variant for compute capability `sm` (built or not).
    pub fn admits(&self, sm: u32) -> bool {
        self.arch.admits(sm)
    }

    /// Ok when the fatbin has code a GPU of compute capability `sm` (e.g. 90) runs; else why not.
    pub fn runnable_on(&self, sm: u32) -> Result<(), String> {
        if self.targets.is_empty() {
            return Err(format!("not built: needs {}, and this build has no such target", self.arch.describe()));
        }
        if self.targets.iter().any(|t| t.runs_on(sm)) {
            return Ok(());
        }
        let why = if self.needs.is_empty() { String::new() } else { format!(" ({})", self.needs) };
        let built: Vec<String> = self.targets.iter().map(Target::name).collect();
        Err(format!("needs {}{why}; built for {}, GPU is sm_{sm}", self.arch.describe(), built.join(", ")))
    }
}

/// A digest of every file under `dir` (relative path and bytes, in path order).
pub fn digest(dir: &Path) -> Result<String, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
        for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let p = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        h.update(f.strip_prefix(dir).unwrap_or(&f).to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?);
    }
    Ok(h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect())
}

/// The folder of the kernel set a program uses: `$KERNEL_LAB_KERNELS`, else a `kernels/` folder
/// beside the executable or up to three folders above it (target/release/kernel-lab finds
/// target/kernels; a test binary in target/release/deps too; a bundle dist/kernels).
pub fn locate(exe: &Path) -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os(ENV) {
        return Ok(PathBuf::from(dir));
    }
    let mut tried = Vec::new();
    for dir in exe.ancestors().skip(1).take(4) {
        let candidate = dir.join(MAIN_DIR);
        if candidate.join(FILE).is_file() {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
    }
    Err(format!("no compiled kernels (looked for {FILE} in {}): `cargo build --release` builds them, or set {ENV}", tried.join(", ")))
}

impl KernelSet {
    /// Reads the set in `dir`. Where the sources it was built from are on this machine and
    /// have changed since, that is an error: the fatbins would not be the code in csrc/.
    pub fn load(dir: &Path) -> Result<KernelSet, String> {
        let path = dir.join(FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let not_a_set = |e: serde_json::Error| format!("{}: not a kernel set: {e}", path.display());
        // The schema first, so a set an older build wrote says "rebuild" rather than which field it lacks.
        let value: serde_json::Value = serde_json::from_str(&text).map_err(not_a_set)?;
        let schema = value.get("schema").and_then(|s| s.as_u64());
        if schema != Some(SCHEMA as u64) {
            let found = schema.map_or("none".to_string(), |s| s.to_string());
            return Err(format!("{}: kernel set schema {found}, but this program reads {SCHEMA}: rebuild", path.display()));
        }
        let set: KernelSet = serde_json::from_value(value).map_err(not_a_set)?;
        for tree in set.sources.iter().filter(|t| t.path.is_dir()) {
            if digest(&tree.path)? != tree.digest {
                return Err(format!(
                    "the kernels in {} were built from other sources than {} holds now: `cargo build --release` rebuilds them",
                    dir.display(),
                    tree.path.display()
                ));
            }
        }
        Ok(set)
    }

    /// Writes the set to `dir`, through a temporary file, so a reader never sees half of it.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join(FILE);
        let tmp = dir.join(format!("{FILE}.tmp{}", std::process::id()));
        let text = serde_json::to_string(self).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path).map_err(|e| format!("{}: {e}", path.display()))
    }
}
