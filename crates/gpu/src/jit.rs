//! Compiling a variant again at run time, with other constants, by NVRTC for the GPU at hand.
//!
//! Why NVRTC rather than building every candidate ahead with nvcc: a search space of hundreds
//! of configurations times eight architectures would make every build (and CI) take an hour,
//! while the tuner only ever needs the one architecture it runs on. The fatbins built by
//! build.rs stay the lab's portable default; tuned configurations are compiled where they run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use sha2::{Digest, Sha256};

use super::driver;
use super::registry::{self, Config, VariantSpec};
use crate::error::{LabError, Result};
use crate::facts::arch::{ArchReq, Target};
use crate::facts::family::FamilyId;
use crate::facts::launch::{self, Launch};

/// Whether the NVRTC library can be loaded (cudarc panics on first use otherwise). Where the
/// loader path lacks it, the library of the toolkit the kernels were built with is loaded by its
/// full path; cudarc's later load by name then finds it already loaded.
pub fn available() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        if driver::nvrtc_present() {
            return true;
        }
        let Ok(set) = registry::set() else { return false };
        // NVRTC loads its builtins library by name at compile time, so that one goes first.
        let dir: &Path = &set.toolkit_lib;
        for name in ["libnvrtc-builtins.so.13.0", "libnvrtc.so.13"] {
            // SAFETY: loading NVRTC runs its initialisers only; it stays loaded for the process.
            match unsafe { libloading::Library::new(dir.join(name)) } {
                Ok(lib) => std::mem::forget(lib),
                Err(_) => return false,
            }
        }
        driver::nvrtc_present()
    })
}

fn require() -> Result<()> {
    if available() {
        Ok(())
    } else {
        Err(LabError::Unavailable("NVRTC (libnvrtc.so) is not installed: tuned configurations cannot be compiled here".into()))
    }
}

/// "13.0"
pub fn version() -> Result<String> {
    require()?;
    let (major, minor) = driver::nvrtc_version()?;
    Ok(format!("{major}.{minor}"))
}

/// The lab's headers, written once per process to a folder NVRTC can include from.
fn header_dir() -> Result<&'static PathBuf> {
    static DIR: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kernel-lab-headers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (name, text) in &registry::set().map_err(|e| e.to_string())?.headers {
            std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"))?;
        }
        Ok(dir)
    })
    .as_ref()
    .map_err(|e| LabError::Usage(format!("cannot write the headers for NVRTC: {e}")))
}

/// The virtual architecture to compile for on a GPU of compute capability `sm`.
pub fn target(spec: &VariantSpec, sm: u32) -> Target {
    let arch_specific = matches!(spec.arch, ArchReq::Exact { arch_specific: true, .. });
    Target { sm, arch_specific, ptx: true }
}

/// Identifies what NVRTC compiles: a hash of the kernel's source, the lab headers it includes
/// (directly or through another), its defines, the target and NVRTC's version. A stored tuning
/// result whose hash differs from this is stale (`current`). An edit to a header the kernel does
/// not include keeps its tunings, and so does an edit to a comment or to blank space: the source
/// and headers enter as `code` has them, since such an edit leaves the SASS as it was. Not a hash
/// of the PTX: NVRTC 13.0 does not always make the same PTX of the same input (2 compiles in 12 of
/// one sgemm_13 configuration differed), so a PTX hash would call current tunings stale at random.
/// The generated defines (`launch::GENERATED`) enter where the source or a header it includes
/// names one (`hashed_defines`); elsewhere they change nothing the compiler makes, so the tunings
/// of kernels that spell out their struct stay current.
pub fn hash(spec: &VariantSpec, config: &Config, sm: u32) -> Result<String> {
    let set = registry::set()?;
    let defs = hashed_defines(spec, config, &spec.source, &set.headers)?;
    Ok(hash_texts(&spec.source, &set.headers, &defs, &target(spec, sm).name(), &version()?))
}

/// The defines `hash` takes of `spec` in `config` where its source is `source` and the lab's
/// headers are `headers`: all of `defines` where the source or a header it includes names a
/// generated define, else only the configuration's. Takes the texts apart from `spec` so that
/// another tree's texts (`kernel-lab carry`, which proves a stored hash was made of them) follow
/// the one rule.
pub fn hashed_defines(spec: &VariantSpec, config: &Config, source: &str, headers: &[(String, String)]) -> Result<Vec<String>> {
    let included = included(source, headers);
    let mut texts = std::iter::once(source).chain(included.iter().map(|(_, body)| body.as_str()));
    let names_args = texts.any(|t| launch::GENERATED.iter().any(|d| code(t).contains(d)));
    if names_args {
        defines(spec, config)
    } else {
        Ok(config.compiler_defines())
    }
}

/// `hash` of given texts: `source`, the headers among `headers` (name, text) that it includes,
/// `defines` as they are, the `target` name (compute_90a) and the NVRTC `version` ("13.0"). Reads
/// no kernel set and loads no NVRTC, so the texts of a tree other than the built one hash alike.
pub fn hash_texts(source: &str, headers: &[(String, String)], defines: &[String], target: &str, version: &str) -> String {
    let mut h = Sha256::new();
    for part in [version, target].into_iter().chain(defines.iter().map(String::as_str)) {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.update(code(source).as_bytes());
    for (name, body) in included(source, headers) {
        h.update([0]);
        h.update(name.as_bytes());
        h.update(code(body).as_bytes());
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Whether a tuning stored with `stored` still describes what NVRTC compiles now.
pub fn current(stored: &str, spec: &VariantSpec, config: &Config, sm: u32) -> Result<bool> {
    Ok(stored == hash(spec, config, sm)?)
}

/// C or CUDA text as the compiler reads it: comments gone (a string or character literal keeps
/// what looks like one), each line's runs of spaces and tabs one space, trimmed, and blank lines
/// dropped. Lines stay lines, since a preprocessor directive ends at its line's end.
pub fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let (mut quote, mut block) = (None::<char>, false);
    while let Some(c) = chars.next() {
        if block {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                block = false;
                out.push(' ');
            } else if c == '\n' {
                out.push('\n');
            }
            continue;
        }
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == q || c == '\n' {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => while chars.next_if(|&n| n != '\n').is_some() {},
            ('/', Some('*')) => {
                chars.next();
                block = true;
            }
            ('"' | '\'', _) => {
                quote = Some(c);
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    let mut lines = String::with_capacity(out.len());
    for line in out.lines() {
        let words: Vec<&str> = line.split([' ', '\t']).filter(|w| !w.is_empty()).collect();
        if !words.is_empty() {
            lines.push_str(&words.join(" "));
            lines.push('\n');
        }
    }
    lines
}

/// The headers (name, text) among `headers` that `source` includes, directly or through one
/// another, sorted by name.
pub fn included<'a>(source: &str, headers: &'a [(String, String)]) -> Vec<&'a (String, String)> {
    let mut found: Vec<&'a (String, String)> = Vec::new();
    let mut todo = vec![source];
    while let Some(text) = todo.pop() {
        for line in text.lines() {
            let Some(rest) = line.trim_start().strip_prefix("#include") else { continue };
            let name = rest.trim().trim_matches(|c| c == '"' || c == '<' || c == '>');
            if let Some(h) = headers.iter().find(|(n, _)| n == name) {
                if !found.contains(&h) {
                    found.push(h);
                    todo.push(&h.1);
                }
            }
        }
    }
    found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    found
}

/// The defines NVRTC compiles `spec` with in `config`: the configuration's, and those nvcc gets
/// from the build (`launch::generated_defines`).
pub fn defines(spec: &VariantSpec, config: &Config) -> Result<Vec<String>> {
    let family = FamilyId::parse(&spec.family).ok_or_else(|| LabError::Usage(format!("family '{}' has no launch protocol", spec.family)))?;
    let launch = Launch::parse(&spec.family, &spec.arch, &|n| config.value(n)).map_err(LabError::Usage)?;
    let mut d = config.compiler_defines();
    d.extend(launch::generated_defines(family, &launch));
    Ok(d)
}

/// PTX of `spec` built with `config` for a GPU of compute capability `sm`. A compile error
/// (a static_assert the configuration fails, say) comes back as its first error lines.
/// Compiled once per process and configuration: `hash` and the loader both ask for it.
pub fn compile(spec: &VariantSpec, config: &Config, sm: u32) -> Result<Ptx> {
    static CACHE: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    let key = format!("{}|{}|{sm}", spec.name, config.compiler_defines().join(" "));
    let cache = CACHE.get_or_init(Default::default);
    if let Some(src) = cache.lock().map_err(|_| LabError::Usage("the NVRTC cache is poisoned".into()))?.get(&key) {
        return Ok(Ptx::from_src(src.clone()));
    }
    let ptx = compile_uncached(spec, config, sm)?;
    cache.lock().map_err(|_| LabError::Usage("the NVRTC cache is poisoned".into()))?.insert(key, ptx.to_src());
    Ok(ptx)
}

fn compile_uncached(spec: &VariantSpec, config: &Config, sm: u32) -> Result<Ptx> {
    require()?;
    let mut options = vec!["-std=c++17".to_string()];
    options.extend(defines(spec, config)?);
    // NVRTC takes the architecture as a static string; a run compiles for one or two.
    let arch: &'static str = Box::leak(target(spec, sm).name().into_boxed_str());
    let opts = CompileOptions {
        options,
        include_paths: vec![header_dir()?.display().to_string()],
        arch: Some(arch),
        name: Some(spec.file.clone()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(&spec.source, opts).map_err(|e| {
        let msg = match e {
            CompileError::CompileError { log, .. } => {
                let log = log.to_string_lossy().to_string();
                let errors: Vec<&str> = log.lines().filter(|l| l.contains("error")).take(2).collect();
                errors.join(" | ")
            }
            other => other.to_string(),
        };
        LabError::Usage(format!("NVRTC: {msg}"))
    })
}
