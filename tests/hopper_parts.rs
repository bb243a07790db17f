//! The Hopper GEMM's shape, read from its sources (no GPU): every rung whose manifest entry loads
//! through TMA (`TMA = 1`) composes its kernel in its own file from named parts (a schedule, the
//! precision's MMA traits, the ring, a tile scheduler and an epilogue), and every header those
//! rungs include stays at most 250 lines with no `#if` on a schedule, scheduler or epilogue choice.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kernel_lab::facts::manifest;

const MAX_LINES: usize = 250;

/// The manifests' defines that choose a schedule, a scheduler or an epilogue (or the precision):
/// a part or a rung picks its parts by type, never by preprocessing on one of these.
const CHOICES: &[&str] = &[
    "PINGPONG",
    "CONSUMERS",
    "PERSISTENT",
    "STREAMK",
    "STREAMK_FIRST",
    "STREAMK_HELPERS",
    "OWNER_UNIT",
    "CLUSTER_Y",
    "SLICED_C",
    "C_BUFS",
    "PROMOTE",
    "M_OUTER",
    "PREC",
];

const SCHEDULES: &[&str] = &["lab_cooperative<", "lab_pingpong<", "lab_three_consumers<"];
const SCHEDULERS: &[&str] = &["lab_data_parallel<", "lab_persistent<", "lab_stream_k<", "lab_stream_k_helpers<", "lab_chosen_scheduler"];
const EPILOGUES: &[&str] =
    &["lab_ring_epilogue", "lab_sliced_epilogue", "lab_register_epilogue", "lab_chosen_epilogue", "lab_fused_epilogue<"];

fn csrc() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("csrc")
}

/// The families' precision traits: a rung of family f names this type.
fn precision(family: &str) -> Option<&'static str> {
    Some(match family {
        "fp16" => "lab_fp16",
        "bf16" => "lab_bf16",
        "tf32" => "lab_tf32",
        "int8" => "lab_int8",
        "fp8" => "lab_fp8<",
        "fp8_e5m2" => "lab_fp8_e5m2<",
        "linear_fp16" => "lab_fp16,",
        "linear_bf16" => "lab_bf16,",
        _ => return None,
    })
}

/// (family, file) of every manifest entry with TMA = 1.
fn hopper_rungs() -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for dir in std::fs::read_dir(csrc()).unwrap().flatten() {
        let toml = dir.path().join("variants.toml");
        let Ok(text) = std::fs::read_to_string(&toml) else { continue };
        let family = dir.file_name().to_string_lossy().to_string();
        // lab.h's names resolve to any number: only TMA's value matters here.
        let entries = manifest::parse(&family, &text, &|n: &str| n.starts_with("LAB_").then_some(0)).unwrap();
        for e in entries {
            if e.defines.get("TMA") == Some(&1) {
                out.insert((family.clone(), e.file.clone()));
            }
        }
    }
    out
}

/// The text less its comments (// and /* */), so a rule reads only code.
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The preprocessor conditionals of `text` that test a choice: `#if`, `#elif` or `#ifdef` naming
/// one of CHOICES, or an `#ifndef` of one that does more than give it a default.
fn choice_conditionals(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut bad = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start().trim_start_matches('#').trim_start();
        if !line.trim_start().starts_with('#') {
            continue;
        }
        let (directive, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        let names: Vec<&str> = rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| CHOICES.contains(w)).collect();
        let default = directive == "ifndef"
            && lines
                .get(i + 1)
                .is_some_and(|n| n.trim_start().starts_with(&format!("#define {}", rest.split_whitespace().next().unwrap_or("?"))));
        if matches!(directive, "if" | "elif" | "ifdef" | "ifndef") && !names.is_empty() && !default {
            bad.push(format!("line {}: {}", i + 1, line.trim()));
        }
    }
    bad
}

/// Why a rung file of `family` does not compose its kernel from named parts, if it does not.
fn composition_fault(family: &str, text: &str) -> Option<String> {
    let code = code(text);
    let names = |set: &[&str]| set.iter().any(|n| code.contains(n));
    let mut missing = Vec::new();
    if !code.contains("using Kernel") || !code.contains("Kernel::run(p)") {
        missing.push("a `using Kernel = ...` composed in the file, its kernel calling Kernel::run(p)".to_string());
    }
    if !names(SCHEDULES) {
        missing.push(format!("a schedule ({})", SCHEDULES.join(" ")));
    }
    if let Some(p) = precision(family) {
        if !code.contains(p) {
            missing.push(format!("its precision's traits ({p})"));
        }
    }
    if !code.contains("lab_ring<") {
        missing.push("the ring (lab_ring<STAGES>)".to_string());
    }
    if !names(SCHEDULERS) {
        missing.push(format!("a tile scheduler ({})", SCHEDULERS.join(" ")));
    }
    if !names(EPILOGUES) {
        missing.push(format!("an epilogue ({})", EPILOGUES.join(" ")));
    }
    (!missing.is_empty()).then(|| format!("names no {}", missing.join(", no ")))
}

/// The headers `text` includes from csrc/include, and theirs, by name.
fn included(text: &str, seen: &mut BTreeMap<String, String>) {
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("#include") else { continue };
        let name = rest.trim().trim_matches(|c| c == '"' || c == '<' || c == '>').to_string();
        let path = csrc().join("include").join(&name);
        if seen.contains_key(&name) || !path.is_file() {
            continue;
        }
        let body = std::fs::read_to_string(&path).unwrap();
        seen.insert(name, body.clone());
        included(&body, seen);
    }
}

#[test]
fn hopper_rungs_compose_their_kernels_from_parts() {
    let rungs = hopper_rungs();
    assert!(rungs.len() >= 15, "the manifests' TMA rungs: {rungs:?}");
    let mut faults = Vec::new();
    for (family, file) in &rungs {
        let text = std::fs::read_to_string(csrc().join(family).join(file)).unwrap();
        if let Some(why) = composition_fault(family, &text) {
            faults.push(format!("{family}/{file} {why}"));
        }
        for c in choice_conditionals(&text) {
            faults.push(format!("{family}/{file} {c}: a choice by preprocessing, not by type"));
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn hopper_part_headers_are_short_and_choose_by_type() {
    let mut headers = BTreeMap::new();
    for (family, file) in hopper_rungs() {
        included(&std::fs::read_to_string(csrc().join(&family).join(&file)).unwrap(), &mut headers);
    }
    assert!(
        headers.contains_key("wgmma_gemm.cuh") && headers.keys().filter(|h| h.starts_with("hopper_")).count() >= 8,
        "{:?}",
        headers.keys()
    );
    let mut faults = Vec::new();
    for (name, text) in &headers {
        let n = text.lines().count();
        if n > MAX_LINES {
            faults.push(format!("{name}: {n} lines, over {MAX_LINES}"));
        }
        for c in choice_conditionals(text) {
            faults.push(format!("{name} {c}: a choice by preprocessing, not by type"));
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// The rules catch the shapes they exist for: a rung whose body only calls the generic kernel, a
/// part that picks its code by `#if`, and not a define's default.
#[test]
fn the_rules_reject_the_old_shapes() {
    let old = "// Technique: ping-pong\n#include \"wgmma_gemm.cuh\"\n\nextern \"C\" __global__ void k(const __grid_constant__ lab_gemm_tma_args p) { lab_wgmma_gemm(p); }\n";
    assert!(composition_fault("fp16", old).is_some());
    let commented = "// using Kernel = lab_pingpong<lab_fp16, lab_ring<4>, lab_persistent<1>, lab_sliced_epilogue>;\n".to_string() + old;
    assert!(composition_fault("fp16", &commented).is_some(), "a composition in a comment is no composition");
    let new = "using Kernel = lab_pingpong<lab_fp16, lab_ring<STAGES>, lab_persistent<CLUSTER_Y>, lab_sliced_epilogue>;\n\
               extern \"C\" __global__ void k(const __grid_constant__ lab_gemm_tma_args p) { Kernel::run(p); }\n";
    assert_eq!(composition_fault("fp16", new), None);
    assert!(composition_fault("bf16", new).unwrap().contains("lab_bf16"));
    assert_eq!(choice_conditionals("#if PINGPONG\nx\n#elif STREAMK == 1\n#endif\n").len(), 2);
    assert_eq!(choice_conditionals("#if CLUSTER_Y == 1 && !LAB_B_KMAJOR\n").len(), 1);
    assert!(choice_conditionals("#ifndef PINGPONG\n#define PINGPONG 0\n#endif\n#pragma unroll\n#if BN > 4\n").is_empty());
    assert_eq!(choice_conditionals("#ifndef SLICED_C\nint x;\n").len(), 1);
}
