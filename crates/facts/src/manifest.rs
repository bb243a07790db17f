//! The schema of `csrc/<family>/variants.toml`: one `[[variant]]` entry per variant, checked
//! here (names, block, architecture, constraints, the family's launch protocol) so that a bad
//! entry fails the build with its file and line.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::arch::ArchReq;
use crate::launch::Launch;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Named lists of constraints that several entries share (`constraint_sets = ["warp_tile"]`
    /// in an entry), so a kernel's assumptions are written once.
    #[serde(default)]
    pub constraint_sets: BTreeMap<String, Vec<String>>,
    /// The family whose folder holds the entries' files, for a family that builds another's
    /// rungs with its own element type (softmax_fp16 from softmax's files, LAB_ELEM telling them
    /// apart): the files keep that family's names, and each entry needs a name of its own.
    pub sources: Option<String>,
    #[serde(rename = "variant", default)]
    pub variants: Vec<toml::Spanned<Entry>>,
}

/// A define's value: a number, or the name of a lab.h constant (`PREC = "LAB_FP32"`), which the
/// build resolves so that host and kernel read one definition.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Number(i64),
    Name(String),
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
    pub defines: BTreeMap<String, Value>,
    /// Shape dimensions this variant requires to be multiples of a number, e.g. `{ k = 4 }`.
    #[serde(default)]
    pub multiple_of: BTreeMap<String, u64>,
    /// Values `kernel-lab tune` may try for defines (or BLOCK_X/Y/Z), e.g. `{ BM = [64, 128] }`.
    #[serde(default)]
    pub tune: BTreeMap<String, Vec<i64>>,
    /// What every configuration must satisfy, as integer expressions over the defines and
    /// BLOCK_X/Y/Z; the tuner drops candidates that do not before compiling them.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Sets of the manifest's `constraint_sets` this entry keeps too, before its own.
    #[serde(default)]
    pub constraint_sets: Vec<String>,
}

/// A manifest entry after validation.
#[derive(Debug, Clone)]
pub struct Checked {
    pub name: String,
    /// The folder under csrc/ that holds `file`: the family's own, or its manifest's `sources`.
    pub dir: String,
    pub file: String,
    pub symbol: String,
    pub rung: u32,
    /// The entry's line in its manifest, for messages.
    pub line: usize,
    pub block: [u32; 3],
    pub arch: ArchReq,
    pub needs: String,
    pub defines: BTreeMap<String, i64>,
    pub multiple_of: BTreeMap<String, u64>,
    pub launch: Launch,
    pub tune: BTreeMap<String, Vec<i64>>,
    pub constraints: Vec<String>,
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_') && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// Parses and checks one family's manifest; `constant` resolves a lab.h name a define uses.
/// Errors name the manifest, the entry's line and the entry.
pub fn parse(family: &str, text: &str, constant: &dyn Fn(&str) -> Option<i64>) -> Result<Vec<Checked>, String> {
    let m: Manifest = toml::from_str(text).map_err(|e| format!("{family}/variants.toml: {e}"))?;
    let dir = m.sources.clone().unwrap_or_else(|| family.to_string());
    if !is_ident(&dir) {
        return Err(format!("{family}/variants.toml: sources = \"{dir}\" must name a family's folder"));
    }
    let mut out: Vec<Checked> = Vec::new();
    for spanned in m.variants {
        // The span is the entry's `[[variant]]` header.
        let line = text[..spanned.span().start.min(text.len())].matches('\n').count() + 1;
        let e = spanned.into_inner();
        let at = format!("{family}/variants.toml:{line}: entry '{}'", e.name.as_deref().unwrap_or(&e.file));
        let stem = e.file.strip_suffix(".cu").ok_or_else(|| format!("{at}: file must end in .cu"))?;
        let rung = stem
            .strip_prefix(dir.as_str())
            .and_then(|r| r.strip_prefix('_'))
            .and_then(|r| r.split('_').next())
            .filter(|n| n.len() == 2)
            .and_then(|n| n.parse::<u32>().ok())
            .ok_or_else(|| format!("{at}: file must be named {dir}_NN_<technique>.cu"))?;
        if !is_ident(stem) {
            return Err(format!("{at}: '{stem}' is not a C identifier, so it cannot be the entry symbol"));
        }
        // A second entry of a file names the rung's technique in its own words, at its file's
        // rung: fp16_08_stream_k_helpers is fp16_08_pingpong_stream_k.cu with helpers.
        let name = e.name.clone().unwrap_or_else(|| stem.to_string());
        let rung_prefix = format!("{dir}_{rung:02}_");
        if !name.starts_with(&rung_prefix) {
            return Err(format!("{at}: a variant name must start with its file's rung '{rung_prefix}'"));
        }
        if dir != family && name == stem {
            return Err(format!(
                "{at}: a variant built from {dir}'s file needs a name of its own (say '{stem}_{}')",
                family.rsplit('_').next().unwrap_or(family)
            ));
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
        let mut defines = BTreeMap::new();
        for (k, v) in &e.defines {
            if !is_ident(k) || k.starts_with("BLOCK_") {
                return Err(format!("{at}: define '{k}' must be an identifier and not BLOCK_* (those come from block)"));
            }
            let n = match v {
                Value::Number(n) => *n,
                Value::Name(name) => constant(name).ok_or_else(|| format!("{at}: {k} = \"{name}\" is not a constant of lab.h"))?,
            };
            defines.insert(k.clone(), n);
        }
        for (k, values) in &e.tune {
            let known = e.defines.contains_key(k) || ["BLOCK_X", "BLOCK_Y", "BLOCK_Z"].contains(&k.as_str());
            if !known {
                return Err(format!("{at}: tune.{k} is neither a define of this entry nor BLOCK_X/Y/Z"));
            }
            // 0 is a value too: flags such as PERSISTENT, and PROMOTE; a size of 0 fails the
            // launch protocol's checks and is dropped before compiling.
            if values.is_empty() || values.iter().any(|v| *v < 0) {
                return Err(format!("{at}: tune.{k} must list values of 0 or more"));
            }
        }
        let mut constraints = Vec::new();
        for set in &e.constraint_sets {
            let shared = m.constraint_sets.get(set).ok_or_else(|| format!("{at}: no constraint set '{set}' in the manifest"))?;
            constraints.extend(shared.iter().cloned());
        }
        constraints.extend(e.constraints.iter().cloned());
        let own = Config { block, defines: defines.iter().map(|(k, v)| (k.clone(), *v)).collect() };
        crate::expr::check_all(&constraints, &|n| own.value(n)).map_err(|m| format!("{at}: its own configuration {m}"))?;
        let launch = Launch::parse(family, &arch, &|n| own.value(n)).map_err(|m| format!("{at}: {m}"))?;
        if let Some((k, _)) = e.multiple_of.iter().find(|(_, v)| **v == 0) {
            return Err(format!("{at}: multiple_of.{k} must be positive"));
        }
        out.push(Checked {
            name,
            dir: dir.clone(),
            file: e.file.clone(),
            symbol: stem.to_string(),
            rung,
            line,
            block,
            arch,
            needs: e.needs.unwrap_or_default(),
            defines,
            multiple_of: e.multiple_of,
            launch,
            tune: e.tune,
            constraints,
        });
    }
    Ok(out)
}

impl Checked {
    /// The manifest's configuration of this entry.
    pub fn config(&self) -> Config {
        Config { block: self.block, defines: self.defines.iter().map(|(k, v)| (k.clone(), *v)).collect() }
    }
}

/// A launch configuration: the block shape and the compile-time constants. The manifest gives
/// each variant one; the tuner tries others.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Config {
    pub block: [u32; 3],
    pub defines: Vec<(String, i64)>,
}

impl Config {
    pub fn define(&self, name: &str) -> Option<i64> {
        self.defines.iter().find(|(k, _)| k == name).map(|&(_, v)| v)
    }

    /// A define, or BLOCK_X/Y/Z: the names constraints and tune tables use.
    pub fn value(&self, name: &str) -> Option<i64> {
        match name {
            "BLOCK_X" => Some(self.block[0] as i64),
            "BLOCK_Y" => Some(self.block[1] as i64),
            "BLOCK_Z" => Some(self.block[2] as i64),
            _ => self.define(name),
        }
    }

    /// This configuration with `name` set to `value` (a define or BLOCK_X/Y/Z).
    pub fn with(&self, name: &str, value: i64) -> Config {
        let mut c = self.clone();
        match name {
            "BLOCK_X" => c.block[0] = value as u32,
            "BLOCK_Y" => c.block[1] = value as u32,
            "BLOCK_Z" => c.block[2] = value as u32,
            _ => {
                if let Some(d) = c.defines.iter_mut().find(|(k, _)| k == name) {
                    d.1 = value;
                }
            }
        }
        c
    }

    /// A define the family's launch needs; the manifest must have set it.
    pub fn require(&self, name: &str) -> Result<i64, String> {
        self.define(name).ok_or_else(|| format!("the configuration {} lacks the define {name}", self.label()))
    }

    pub fn threads(&self) -> u32 {
        self.block.iter().product()
    }

    /// Block shape and constants, as the tables show them.
    pub fn label(&self) -> String {
        let b = &self.block;
        let block = match (b[1], b[2]) {
            (1, 1) => format!("{}", b[0]),
            (_, 1) => format!("{}x{}", b[0], b[1]),
            _ => format!("{}x{}x{}", b[0], b[1], b[2]),
        };
        let defs: Vec<String> = self.defines.iter().map(|(k, v)| format!("{k}={v}")).collect();
        if defs.is_empty() {
            format!("block {block}")
        } else {
            format!("block {block} {}", defs.join(" "))
        }
    }

    /// The -D flags a compiler gets for this configuration.
    pub fn compiler_defines(&self) -> Vec<String> {
        let mut v: Vec<String> = ["X", "Y", "Z"].iter().zip(self.block).map(|(d, n)| format!("-DBLOCK_{d}={n}")).collect();
        v.extend(self.defines.iter().map(|(k, val)| format!("-D{k}={val}")));
        v
    }
}
