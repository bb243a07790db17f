//! The kernel sets: every manifest of csrc/ compiled into `<target>/kernels`, and the same plus
//! the test-only variants of tests/csrc into `<target>/kernels-test` (whose fatbins for the lab's
//! own variants are those of the first set).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::nvcc::{self, Built, Job, Nvcc};
use crate::arch::{self, ArchPlan};
use crate::family::{FamilyId, Storage};
use crate::kernels::{self, KernelSet, SourceTree, VariantSpec};
use crate::manifest;

/// Builds both kernel sets under `target` (the cargo target folder) from the sources under `root`.
pub fn kernels(root: &Path, target: &Path) -> Result<(), String> {
    let csrc = root.join("csrc");
    let tests = root.join("tests/csrc");
    for p in [&csrc, &tests] {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    for v in ["NVCC", "CUDA_PATH", "CUDA_HOME", "PATH", "KERNEL_LAB_ARCHS"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let toolkit = Nvcc::find(root)?;
    let plan = arch::plan_archs(&toolkit.gpu_codes, &toolkit.version, std::env::var("KERNEL_LAB_ARCHS").ok().as_deref())?;
    for (sm, why) in &plan.skipped {
        println!("cargo:warning=kernel-lab: not building {sm}: {why}");
    }
    let include = csrc.join("include");
    let constants = lab_constants(&include)?;
    let main_dir = target.join(kernels::MAIN_DIR);
    let main = compile_tree(&toolkit, &plan, &csrc, &include, &constants, &main_dir, false)?;
    let headers = headers(&include)?;
    let git_commit = super::git_commit(root);
    let set = |variants: Vec<VariantSpec>, sources: Vec<SourceTree>| KernelSet {
        schema: kernels::SCHEMA,
        git_commit: git_commit.clone(),
        nvcc_version: toolkit.version.clone(),
        toolkit_lib: toolkit.path.parent().and_then(Path::parent).map(|r| r.join("lib")).unwrap_or_default(),
        archs: plan.archs.iter().map(|a| format!("sm_{a}")).collect(),
        skipped: plan.skipped.clone(),
        sources,
        headers: headers.clone(),
        variants,
    };
    let csrc_tree = SourceTree { path: csrc.clone(), digest: kernels::digest(&csrc)? };
    set(main.clone(), vec![csrc_tree.clone()]).write(&main_dir)?;

    // The test set: the lab's variants (their fatbins from the main set) and the test-only ones.
    let test_dir = target.join(kernels::TEST_DIR);
    let mut all: Vec<VariantSpec> = main
        .into_iter()
        .map(|mut v| {
            v.fatbin = v.fatbin.map(|f| format!("../{}/{f}", kernels::MAIN_DIR));
            v
        })
        .collect();
    let mut sources = vec![csrc_tree];
    if tests.is_dir() {
        all.extend(compile_tree(&toolkit, &plan, &tests, &include, &constants, &test_dir, true)?);
        sources.push(SourceTree { path: tests.clone(), digest: kernels::digest(&tests)? });
    }
    // Families in name order, each family's variants in rung order (stable: manifest order within a rung).
    all.sort_by(|a, b| a.family.cmp(&b.family).then(a.rung.cmp(&b.rung)));
    std::fs::create_dir_all(&test_dir).map_err(|e| format!("{}: {e}", test_dir.display()))?;
    set(all, sources).write(&test_dir)
}

/// `#define LAB_NAME <integer>` lines of the ABI headers (lab.h and the lab_*.h it gathers): the
/// names a manifest's define may use.
fn lab_constants(include: &Path) -> Result<BTreeMap<String, i64>, String> {
    let text: String =
        headers(include)?.into_iter().filter(|(name, _)| name.starts_with("lab") && name.ends_with(".h")).map(|(_, t)| t).collect();
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next()? == "#define").then_some(())?;
            let (name, value) = (w.next()?, w.next()?.parse().ok()?);
            name.starts_with("LAB_").then(|| (name.to_string(), value))
        })
        .collect())
}

/// The files of an include folder (name, text) in name order: what the kernel set records of
/// csrc/include, and what `kernel-lab carry` reads of an older tree's.
pub fn headers(include: &Path) -> Result<Vec<(String, String)>, String> {
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(include).map_err(|e| format!("{}: {e}", include.display()))?.filter_map(|d| d.ok().map(|d| d.path())).collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy().to_string();
            std::fs::read_to_string(p).map(|t| (name, t)).map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect()
}

/// Every `<tree>/<family>/variants.toml`, compiled into `out`.
fn compile_tree(
    toolkit: &Nvcc,
    plan: &ArchPlan,
    tree: &Path,
    include: &Path,
    constants: &BTreeMap<String, i64>,
    out: &Path,
    test_only: bool,
) -> Result<Vec<VariantSpec>, String> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(tree)
        .map_err(|e| format!("cannot read {}: {e}", tree.display()))?
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|p| p.join("variants.toml").is_file())
        .collect();
    dirs.sort();
    let mut jobs = Vec::new();
    for dir in &dirs {
        let family = dir.file_name().unwrap_or_default().to_string_lossy().to_string();
        let path = dir.join("variants.toml");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let entries = manifest::parse(&family, &text, &|n| constants.get(n).copied())?;
        for e in entries {
            if !tree.join(&e.dir).join(&e.file).is_file() {
                return Err(format!("{family}/variants.toml:{}: names {}/{}, which does not exist", e.line, e.dir, e.file));
            }
            // A family in 16-bit storage must build files that load and store through lab_elem.
            let storage = FamilyId::parse(&family).map_or(Storage::Fp32, FamilyId::storage);
            if storage != Storage::Fp32 && !std::fs::read_to_string(tree.join(&e.dir).join(&e.file)).is_ok_and(|t| t.contains("lab_elem")) {
                return Err(format!(
                    "{family}/variants.toml:{}: {}/{} does not load its rows as lab_elem (row_storage.cuh), so it would read {family}'s {storage:?} data as floats",
                    e.line, e.dir, e.file
                ));
            }
            if let Some(other) = jobs.iter().find(|j: &&Job| j.entry.name == e.name) {
                return Err(format!("{family}/variants.toml:{}: variant name '{}' is {}'s already", e.line, e.name, other.family));
            }
            let targets = arch::variant_targets(plan, &e.arch);
            jobs.push(Job::new(tree, &family, &e, targets));
        }
    }
    let built = nvcc::compile_all(toolkit, include, out, jobs)?;
    for b in &built {
        for w in &b.warnings {
            println!("cargo:warning={}: {w}", b.job.entry.name);
        }
    }
    built.into_iter().map(|b| spec(b, test_only)).collect()
}

/// The text after "Technique:" on the kernel file's first comment line: what `list` shows.
fn summary(source: &str) -> String {
    source
        .lines()
        .next()
        .and_then(|l| l.trim_start_matches('/').trim().strip_prefix("Technique:"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn spec(b: Built, test_only: bool) -> Result<VariantSpec, String> {
    let e = &b.job.entry;
    let source = std::fs::read_to_string(&b.job.src).map_err(|err| format!("{}: {err}", b.job.src.display()))?;
    Ok(VariantSpec {
        family: b.job.family.clone(),
        name: e.name.clone(),
        symbol: e.symbol.clone(),
        file: format!("{}/{}", e.dir, e.file),
        rung: e.rung,
        summary: summary(&source),
        block: e.block,
        arch: e.arch.clone(),
        needs: e.needs.clone(),
        defines: e.defines.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        multiple_of: e.multiple_of.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        launch: e.launch,
        args: b.args.to_string(),
        targets: b.job.targets.clone(),
        fatbin: b.fatbin.as_ref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().to_string()),
        source_hash: b.hash.clone(),
        source,
        tune: e.tune.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        constraints: e.constraints.clone(),
        resources: b.usage.clone(),
        test_only,
    })
}
