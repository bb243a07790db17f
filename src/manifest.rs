//! The schema of `csrc/<family>/variants.toml`: one `[[variant]]` entry per variant.
//!
//! Shared, through `#[path]`, by build.rs (which compiles what it lists) and the library's tests.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::arch::ArchReq;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[serde(rename = "variant", default)]
    pub variants: Vec<Entry>,
}

/// One variant as written in the manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// `<family>_NN_<technique>.cu`; its stem is the kernel's entry symbol.
    pub file: String,
    /// Defaults to the file stem; set it to build the same file again with other constants.
    pub name: Option<String>,
    /// Threads per block, 1 to 3 dimensions. Reaches the kernel as BLOCK_X, BLOCK_Y, BLOCK_Z.
    pub block: Vec<u32>,
    /// `sm_XY+` or `sm_XYa`; defaults to every architecture of the table.
    pub arch: Option<String>,
    /// Why the variant needs that architecture (shown when a GPU skips it).
    pub needs: Option<String>,
    /// Compile-time constants, passed to nvcc as -DNAME=VALUE and readable by the host.
    #[serde(default)]
    pub defines: BTreeMap<String, i64>,
    /// Shape dimensions this variant requires to be multiples of a number, e.g. `{ k = 4 }`.
    #[serde(default)]
    pub multiple_of: BTreeMap<String, u64>,
    /// Dynamic shared memory per block, bytes.
    #[serde(default)]
    pub dyn_smem_bytes: u32,
}

/// A manifest entry after validation.
#[derive(Debug, Clone)]
pub struct Checked {
    pub name: String,
    pub file: String,
    pub symbol: String,
    pub rung: u32,
    pub block: [u32; 3],
    pub arch: ArchReq,
    pub needs: String,
    pub defines: BTreeMap<String, i64>,
    pub multiple_of: BTreeMap<String, u64>,
    pub dyn_smem_bytes: u32,
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_') && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Parses and checks one family's manifest. Errors name the family and the entry.
pub fn parse(family: &str, text: &str) -> Result<Vec<Checked>, String> {
    let m: Manifest = toml::from_str(text).map_err(|e| format!("{family}/variants.toml: {e}"))?;
    let mut out: Vec<Checked> = Vec::new();
    for e in m.variants {
        let at = format!("{family}/variants.toml, entry '{}'", e.name.as_deref().unwrap_or(&e.file));
        let stem = e.file.strip_suffix(".cu").ok_or_else(|| format!("{at}: file must end in .cu"))?;
        let rung = stem
            .strip_prefix(family)
            .and_then(|r| r.strip_prefix('_'))
            .and_then(|r| r.split('_').next())
            .filter(|n| n.len() == 2)
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or_else(|| format!("{at}: file must be named {family}_NN_<technique>.cu"))?;
        if !is_ident(stem) {
            return Err(format!("{at}: '{stem}' is not a C identifier, so it cannot be the entry symbol"));
        }
        let name = e.name.clone().unwrap_or_else(|| stem.to_string());
        if !name.starts_with(stem) {
            return Err(format!("{at}: a variant name must start with its file's stem '{stem}'"));
        }
        if out.iter().any(|c| c.name == name) {
            return Err(format!("{at}: variant name '{name}' is used twice"));
        }
        if e.block.is_empty() || e.block.len() > 3 || e.block.contains(&0) {
            return Err(format!("{at}: block must list 1 to 3 positive thread counts"));
        }
        let mut block = [1u32; 3];
        block[..e.block.len()].copy_from_slice(&e.block);
        let threads: u64 = block.iter().map(|&b| b as u64).product();
        if threads > 1024 {
            return Err(format!("{at}: {threads} threads per block is over CUDA's 1024"));
        }
        let arch = ArchReq::parse(e.arch.as_deref().unwrap_or("sm_70+")).map_err(|m| format!("{at}: {m}"))?;
        for k in e.defines.keys() {
            if !is_ident(k) || k.starts_with("BLOCK_") {
                return Err(format!("{at}: define '{k}' must be an identifier and not BLOCK_* (those come from block)"));
            }
        }
        if let Some((k, _)) = e.multiple_of.iter().find(|(_, v)| **v == 0) {
            return Err(format!("{at}: multiple_of.{k} must be positive"));
        }
        out.push(Checked {
            name,
            file: e.file.clone(),
            symbol: stem.to_string(),
            rung,
            block,
            arch,
            needs: e.needs.unwrap_or_default(),
            defines: e.defines,
            multiple_of: e.multiple_of,
            dyn_smem_bytes: e.dyn_smem_bytes,
        });
    }
    Ok(out)
}

impl Checked {
    /// The -D flags nvcc gets: the block shape, then the manifest's defines.
    pub fn nvcc_defines(&self) -> Vec<String> {
        let mut v = vec![
            format!("-DBLOCK_X={}", self.block[0]),
            format!("-DBLOCK_Y={}", self.block[1]),
            format!("-DBLOCK_Z={}", self.block[2]),
        ];
        v.extend(self.defines.iter().map(|(k, val)| format!("-D{k}={val}")));
        v
    }
}
