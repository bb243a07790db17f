//! Writes OUT_DIR/registry.rs: the variant list as static data, with each fatbin embedded.

use std::fmt::Write as _;
use std::path::Path;

use crate::arch::ArchPlan;
use crate::nvcc::{Built, Nvcc};

/// The text after "Technique:" on the kernel file's first comment line: what `list` shows.
fn summary(src: &Path) -> String {
    let text = std::fs::read_to_string(src).unwrap_or_default();
    text.lines()
        .next()
        .and_then(|l| l.trim_start_matches('/').trim().strip_prefix("Technique:"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub fn write_registry(path: &Path, include: &Path, nvcc: &Nvcc, plan: &ArchPlan, built: &[Built]) -> std::io::Result<()> {
    let mut s = String::new();
    // The shared headers, for compiling variants again at run time (the tuner, with NVRTC).
    let mut headers: Vec<std::path::PathBuf> = std::fs::read_dir(include)?.filter_map(|d| d.ok().map(|d| d.path())).collect();
    headers.sort();
    writeln!(s, "pub static HEADERS: &[(&str, &str)] = &[").unwrap();
    for h in &headers {
        let name = h.file_name().unwrap().to_string_lossy().to_string();
        writeln!(s, "    ({name:?}, include_str!({:?})),", h.display().to_string()).unwrap();
    }
    writeln!(s, "];\n").unwrap();
    let archs: Vec<String> = plan.archs.iter().map(|a| format!("sm_{a}")).collect();
    writeln!(s, "pub static BUILD: BuildInfo = BuildInfo {{").unwrap();
    writeln!(s, "    nvcc_version: {:?},", nvcc.version).unwrap();
    writeln!(s, "    archs: &{archs:?},").unwrap();
    writeln!(s, "    skipped: &[").unwrap();
    for (sm, why) in &plan.skipped {
        writeln!(s, "        ({sm:?}, {why:?}),").unwrap();
    }
    writeln!(s, "    ],\n}};\n").unwrap();

    writeln!(s, "pub static VARIANTS: &[VariantSpec] = &[").unwrap();
    for b in built {
        let e = &b.job.entry;
        let targets: Vec<String> = b.job.targets.iter().map(|t| t.name()).collect();
        writeln!(s, "    VariantSpec {{").unwrap();
        writeln!(s, "        family: {:?},", b.job.family).unwrap();
        writeln!(s, "        name: {:?},", e.name).unwrap();
        writeln!(s, "        symbol: {:?},", e.symbol).unwrap();
        writeln!(s, "        file: {:?},", format!("{}/{}", b.job.family, e.file)).unwrap();
        writeln!(s, "        rung: {},", e.rung).unwrap();
        writeln!(s, "        summary: {:?},", summary(&b.job.src)).unwrap();
        writeln!(s, "        block: {:?},", e.block).unwrap();
        writeln!(s, "        arch_req: {:?},", e.arch.describe()).unwrap();
        writeln!(s, "        needs: {:?},", e.needs).unwrap();
        writeln!(s, "        defines: &{:?},", e.defines.iter().collect::<Vec<_>>()).unwrap();
        writeln!(s, "        multiple_of: &{:?},", e.multiple_of.iter().collect::<Vec<_>>()).unwrap();
        writeln!(s, "        dyn_smem_bytes: {},", e.dyn_smem_bytes).unwrap();
        writeln!(s, "        targets: &{targets:?},").unwrap();
        match &b.fatbin {
            Some(p) => writeln!(s, "        fatbin: include_bytes!({:?}),", p.display().to_string()).unwrap(),
            None => writeln!(s, "        fatbin: &[],").unwrap(),
        }
        writeln!(s, "        source_hash: {:?},", b.hash).unwrap();
        writeln!(s, "        source: include_str!({:?}),", b.job.src.display().to_string()).unwrap();
        let tune: Vec<String> = e.tune.iter().map(|(k, v)| format!("({k:?}, &{v:?})")).collect();
        writeln!(s, "        tune: &[{}],", tune.join(", ")).unwrap();
        writeln!(s, "        constraints: &{:?},", e.constraints).unwrap();
        writeln!(s, "        resources: &[").unwrap();
        for (target, u) in &b.usage {
            writeln!(
                s,
                "            ({target:?}, Usage {{ registers: {}, smem_bytes: {}, stack_bytes: {}, spill_stores: {}, spill_loads: {} }}),",
                u.registers, u.smem_bytes, u.stack_bytes, u.spill_stores, u.spill_loads
            )
            .unwrap();
        }
        writeln!(s, "        ],\n    }},").unwrap();
    }
    writeln!(s, "];").unwrap();
    std::fs::write(path, s)
}
