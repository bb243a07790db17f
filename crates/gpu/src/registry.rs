//! The kernel set this program runs (`lab_facts::kernels`): found beside the executable or
//! through `KERNEL_LAB_KERNELS`, read once, and the lookups every command shares: by name, by
//! family, by a command-line filter.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::error::{LabError, Result};
pub use crate::facts::kernels::{KernelSet, VariantSpec};
pub use crate::facts::manifest::Config;

struct Loaded {
    dir: PathBuf,
    set: KernelSet,
}

fn loaded() -> Result<&'static Loaded> {
    static SET: OnceLock<std::result::Result<Loaded, String>> = OnceLock::new();
    SET.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let dir = crate::facts::kernels::locate(&exe)?;
        Ok(Loaded { set: KernelSet::load(&dir)?, dir })
    })
    .as_ref()
    .map_err(|e| LabError::Unavailable(e.clone()))
}

/// The kernel set: how it was built, and every variant.
pub fn set() -> Result<&'static KernelSet> {
    Ok(&loaded()?.set)
}

/// Every variant, families in name order, rungs in order.
pub fn all() -> Result<&'static [VariantSpec]> {
    Ok(&set()?.variants)
}

/// The fatbin of a variant, read from the set's folder.
pub fn fatbin(spec: &VariantSpec) -> Result<Vec<u8>> {
    let l = loaded()?;
    let file = spec.fatbin.as_ref().ok_or_else(|| LabError::Usage(format!("{} has no fatbin in this build", spec.name)))?;
    let path = l.dir.join(file);
    std::fs::read(&path).map_err(|e| LabError::Unavailable(format!("{}: {e}", path.display())))
}

/// Family names in order.
pub fn families() -> Result<Vec<&'static str>> {
    let mut f: Vec<&'static str> = Vec::new();
    for v in all()? {
        if !f.contains(&v.family.as_str()) {
            f.push(&v.family);
        }
    }
    Ok(f)
}

pub fn by_name(name: &str) -> Result<&'static VariantSpec> {
    let name = current(name);
    all()?
        .iter()
        .find(|v| v.name == name)
        .ok_or_else(|| LabError::Usage(format!("no variant '{name}' in this build (`kernel-lab list` shows them)")))
}

/// The name a user gave, as the lab names it now: a retired family or variant name (from before a
/// rename, in a script or in old results) stands for the one that replaced it.
fn current(name: &str) -> &str {
    crate::facts::renames::family(crate::facts::renames::variant(name))
}

/// The variants a command-line filter names: a family, a variant (its whole name), or part of
/// variant names; several such terms, comma-separated, name the union, in the registry's order.
/// No filter means all. A term that matches nothing is an error that lists the families.
pub fn select(filter: Option<&str>) -> Result<Vec<&'static VariantSpec>> {
    let all = all()?;
    let Some(f) = filter else { return Ok(all.iter().collect()) };
    let families = families()?;
    let mut keep = vec![false; all.len()];
    for term in f.split(',').map(str::trim).map(current) {
        // A variant's whole name picks that variant alone, though it is part of others' names
        // (sgemm_08_double_buffered and sgemm_08_double_buffered_split_k).
        let whole = all.iter().any(|v| v.name == term);
        let picks = |v: &VariantSpec| {
            if families.contains(&term) {
                v.family == term
            } else if whole {
                v.name == term
            } else {
                !term.is_empty() && v.name.contains(term)
            }
        };
        let mut any = false;
        for (i, v) in all.iter().enumerate() {
            if picks(v) {
                keep[i] = true;
                any = true;
            }
        }
        if !any {
            return Err(LabError::Usage(format!(
                "no family or variant matches '{term}' (families: {}; `kernel-lab list` shows the variants)",
                families.join(", ")
            )));
        }
    }
    Ok(all.iter().zip(keep).filter(|(_, k)| *k).map(|(v, _)| v).collect())
}

/// Checks a family name given with --family.
pub fn family(name: &str) -> Result<&'static str> {
    let name = current(name);
    let families = families()?;
    families
        .iter()
        .copied()
        .find(|f| *f == name)
        .ok_or_else(|| LabError::Usage(format!("unknown family '{name}' (families: {})", families.join(", "))))
}
