//! What needs no measurement: the GPUs, the variants built, their resources, the spec sheet.

use std::path::Path;

use anyhow::{bail, Context, Result};
use comfy_table::Table;
use kernel_lab::analysis::report::data::to_json;
use kernel_lab::analysis::report::sections;
use kernel_lab::analysis::store::{self, Group};
use kernel_lab::error::exit;
use kernel_lab::facts::family::FamilyId;
use kernel_lab::facts::{arch, launch, resources::Usage, sheet};
use kernel_lab::gpu::registry::{self, VariantSpec};
use kernel_lab::gpu::{device, legacy};
use kernel_lab::LabError;

use crate::args::{cells_csv, say, table, Format};

/// `t` as `format` asks (CSV from its cells); JSON is each command's own, from its data.
fn print_table(t: &Table, format: Format) -> Result<()> {
    match format {
        Format::Csv => out!("{}", cells_csv(t)),
        _ => outln!("{t}"),
    }
    Ok(())
}

pub fn devices(format: Format) -> Result<u8> {
    let list = device::list()?;
    if format == Format::Json {
        out!("{}", to_json(&list));
        return Ok(exit::OK);
    }
    let mut t = table(
        &["#", "name", "arch", "SMs", "SM clock", "memory", "bus", "L2", "smem/block", "fp32 peak", "DRAM peak", "driver", "UUID"],
        format,
    );
    for d in list {
        let family = arch::lookup(d.cc_major, d.cc_minor).map(|a| a.family).unwrap_or("not in the lab's table");
        t.add_row(vec![
            d.ordinal.to_string(),
            d.name.clone(),
            format!("{} ({family})", d.arch_name()),
            d.sms.to_string(),
            format!("{} MHz", d.sm_clock_khz / 1000),
            format!("{:.0} GiB", d.total_mem_bytes as f64 / (1u64 << 30) as f64),
            format!("{} bit", d.bus_width_bits),
            format!("{} MiB", d.l2_bytes >> 20),
            format!("{} KiB", d.smem_per_block_optin >> 10),
            d.peak_fp32_tflops().map(|p| format!("{p:.1} TFLOP/s")).unwrap_or_else(|| "-".into()),
            d.peak_dram_gbs().map(|p| format!("{p:.0} GB/s")).unwrap_or_else(|| "-".into()),
            d.driver.clone(),
            d.uuid.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    print_table(&t, format)?;
    say(format, "peaks are derived from the reported clocks, bus width and the lab's architecture table")?;
    Ok(exit::OK)
}

pub fn list(family: Option<&str>, format: Format) -> Result<u8> {
    let family = family.map(registry::family).transpose()?;
    let header = ["family", "rung", "variant", "config", "generated", "arch", "targets", "technique"];
    let mut t = table(&header, format);
    let mut rows = Vec::new();
    for v in registry::all()?.iter().filter(|v| family.is_none_or(|f| v.family == f)) {
        // What the build derives beside the manifest's choices (launch::generated_defines): the
        // argument struct, the element type, a Hopper GEMM's shared-memory plan.
        let generated = FamilyId::parse(&v.family)
            .map(|f| {
                launch::generated_defines(f, &v.launch).iter().map(|d| d.trim_start_matches("-D").to_string()).collect::<Vec<_>>().join(" ")
            })
            .unwrap_or_default();
        rows.push(vec![
            v.family.clone(),
            format!("{:02}", v.rung),
            v.name.clone(),
            v.config().label(),
            generated,
            v.arch.describe(),
            v.targets.iter().map(|t| t.name()).collect::<Vec<_>>().join(" "),
            v.summary.clone(),
        ]);
    }
    if format == Format::Json {
        let objects: Vec<serde_json::Map<String, serde_json::Value>> = rows
            .iter()
            .map(|r| header.iter().zip(r).map(|(h, c)| (h.to_string(), serde_json::Value::String(c.clone()))).collect())
            .collect();
        out!("{}", to_json(&objects));
    } else {
        t.add_rows(rows);
        print_table(&t, format)?;
    }
    let set = registry::set()?;
    say(format, &format!("built with nvcc {} for {}", set.nvcc_version, set.archs.join(", ")))?;
    for (sm, why) in &set.skipped {
        say(format, &format!("not built for {sm}: {why}"))?;
    }
    // The protocols are reading for a person at a table, not data a script asked for.
    if !format.data() {
        outln!("launch protocols (the defines the host reads; every family also: {}):", launch::COMMON);
        for fam in FamilyId::all().filter(|f| family.is_none_or(|x| FamilyId::parse(x) == Some(*f))) {
            outln!("  {}: {}", fam.name(), launch::reads(fam.protocol()));
        }
    }
    Ok(exit::OK)
}

pub fn sheet(gpu: Option<&str>, format: Format) -> Result<u8> {
    let gpus: Vec<&sheet::Gpu> = match gpu {
        Some(name) => vec![sheet::find(name).map_err(LabError::Usage)?],
        None => sheet::GPUS.iter().collect(),
    };
    if format == Format::Json {
        out!("{}", to_json(&gpus));
        return Ok(exit::OK);
    }
    outln!("{}", sections::sheet_table(&gpus, format.markdown()));
    for g in &gpus {
        outln!("{}: {}", g.name, g.source);
    }
    Ok(exit::OK)
}

/// One row of the resources table.
fn usage_row(v: &VariantSpec, target: &str, u: &Usage) -> Vec<String> {
    vec![
        v.family.clone(),
        v.name.clone(),
        target.to_string(),
        u.registers.to_string(),
        u.smem_bytes.to_string(),
        u.stack_bytes.to_string(),
        u.spill_stores.to_string(),
        u.spill_loads.to_string(),
    ]
}

const RESOURCE_HEADER: [&str; 8] = ["family", "variant", "arch", "registers", "smem bytes", "stack bytes", "spill stores", "spill loads"];
const TUNED_HEADER: [&str; 7] = ["family", "variant", "arch", "registers", "smem bytes", "local bytes (stack + spills)", "tuned on"];

/// Rows of `header` as JSON objects, each cell a string as the table shows it.
fn objects(header: &[&str], rows: &[Vec<String>]) -> serde_json::Value {
    rows.iter()
        .map(|r| {
            header
                .iter()
                .zip(r)
                .map(|(h, c)| (h.to_string(), serde_json::Value::String(c.clone())))
                .collect::<serde_json::Map<_, _>>()
                .into()
        })
        .collect::<Vec<serde_json::Value>>()
        .into()
}

/// The resources' rows as `format` asks: the built (or compiled) variants' table, then the tuned
/// configurations' where there are any (in JSON, one object of both).
fn print_resources(built: Vec<Vec<String>>, tuned: Vec<Vec<String>>, format: Format) -> Result<()> {
    if format == Format::Json {
        let doc = serde_json::json!({ "variants": objects(&RESOURCE_HEADER, &built), "tuned": objects(&TUNED_HEADER, &tuned) });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    let mut t = table(&RESOURCE_HEADER, format);
    t.add_rows(built);
    print_table(&t, format)?;
    if !tuned.is_empty() && format != Format::Csv {
        let mut t = table(&TUNED_HEADER, format);
        t.add_rows(tuned);
        outln!("{t}");
        outln!("tuned configurations: from the driver's report on the GPU they were tuned on");
    }
    Ok(())
}

/// The variants declared for an architecture the toolkit dropped, compiled now with NVRTC 12.
fn legacy_resources(sm: u32, why: &str, format: Format) -> Result<u8> {
    let nvrtc = legacy::Nvrtc::load().map_err(|e| anyhow::anyhow!("{e} (nvcc does not build sm_{sm}: {why})"))?;
    let mut rows = Vec::new();
    for v in legacy::declared_for(sm)? {
        rows.push(usage_row(v, &format!("sm_{sm}"), &nvrtc.usage(v, sm)?));
    }
    print_resources(rows, Vec::new(), format)?;
    say(
        format,
        &format!(
            "compiled now with NVRTC {}.{} (nvcc {} does not build sm_{sm})",
            nvrtc.version.0,
            nvrtc.version.1,
            registry::set()?.nvcc_version
        ),
    )?;
    Ok(exit::OK)
}

pub fn resources(arch_filter: Option<&str>, dir: &Path, format: Format) -> Result<u8> {
    let set = registry::set()?;
    if let Some(a) = arch_filter {
        if let Some((_, why)) = set.skipped.iter().find(|(sm, _)| sm == a) {
            let sm = a.trim_start_matches("sm_").parse::<u32>().with_context(|| format!("'{a}' is not sm_XY"))?;
            return legacy_resources(sm, why, format);
        }
        if !set.variants.iter().any(|v| v.resources.iter().any(|(t, _)| t == a)) {
            bail!(LabError::Usage(format!(
                "no variant was built for '{a}' (this build has SASS for {}; sm_XYa targets appear where a variant needs them)",
                set.archs.join(", ")
            )));
        }
    }
    let mut built = Vec::new();
    for v in &set.variants {
        for (target, u) in v.resources.iter().filter(|(t, _)| arch_filter.is_none_or(|a| t == a)) {
            built.push(usage_row(v, target, u));
        }
    }
    let mut tuned = Vec::new();
    let runs = if dir.exists() { store::read(&[dir.to_path_buf()]).unwrap_or_default() } else { Vec::new() };
    for view in store::views(&runs, Group::Model) {
        let arch = view.device.arch_name();
        if arch_filter.is_some_and(|a| a != arch) {
            continue;
        }
        for rec in &view.tuning {
            let Some(best) = rec.candidates.iter().find(|c| Some(&c.config) == rec.best.as_ref()) else { continue };
            let n = |v: Option<u32>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
            tuned.push(vec![
                rec.family.clone(),
                format!("{}@tuned", rec.variant),
                arch.clone(),
                n(best.registers),
                n(best.smem_bytes),
                n(best.local_bytes),
                format!("{} at {}", view.device.name, rec.shape),
            ]);
        }
    }
    print_resources(built, tuned, format)?;
    say(format, &format!("from ptxas -v at build time, nvcc {}", set.nvcc_version))?;
    Ok(exit::OK)
}
