//! The shape of the host code, checked: the library is a crate per layer (facts, schema, gpu,
//! measure, analysis; then the CLI) and each crate depends only on the layers below it; no modules
//! of a crate import each other in a cycle; raw driver use stays in the gpu crate; every source file
//! opens with what it owns and stays under 400 lines (the spec sheet, a table of published data,
//! aside).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kernel_lab::facts::family::FamilyId;

/// The library's layers, bottom up: each a crate under crates/ that may depend only on those
/// before it.
const LAYERS: [&str; 5] = ["facts", "schema", "gpu", "measure", "analysis"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file inside its crate's src/: measure's src/families/sgemm.rs is
/// families::sgemm, its lib.rs the empty path.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// Source without comments, so that prose naming a path is not an import: `//` and `/* */`
/// outside string and character literals (a string holding `//` hides nothing after it).
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut chars, mut quote, mut block) = (text.chars().peekable(), None::<char>, false);
    while let Some(c) = chars.next() {
        if block {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                block = false;
            } else if c == '\n' {
                out.push('\n');
            }
            continue;
        }
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                block = true;
            }
            // A char literal ('"', '\'') or a lifetime ('a): only the former opens a quote.
            ('\'', _) => {
                out.push(c);
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with('\\') || rest.chars().nth(1) == Some('\'') {
                    quote = Some('\'');
                }
            }
            ('"', _) => {
                out.push(c);
                quote = Some('"');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The paths a `crate::` or `super::` at `at` reaches, expanding `{a, b::c}` groups; each as
/// segments after the prefix.
fn paths_at(text: &str, at: usize) -> Vec<Vec<String>> {
    fn group(s: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let mut i = 0;
        let b = s.as_bytes();
        let mut seg = String::new();
        let mut path = prefix.clone();
        while i < b.len() {
            let c = b[i] as char;
            if c.is_alphanumeric() || c == '_' {
                seg.push(c);
            } else if s[i..].starts_with("::") {
                path.push(std::mem::take(&mut seg));
                i += 1;
            } else if c == '{' {
                i += group(&s[i + 1..], path.clone(), out) + 1;
                path = prefix.clone();
            } else if c.is_whitespace() && seg.is_empty() {
            } else {
                if !seg.is_empty() {
                    path.push(std::mem::take(&mut seg));
                }
                if path.len() > prefix.len() {
                    out.push(path.clone());
                }
                path = prefix.clone();
                if c != ',' {
                    return i;
                }
            }
            i += 1;
        }
        i
    }
    let mut out = Vec::new();
    group(&text[at..], Vec::new(), &mut out);
    out
}

/// The top modules of its crate that `text` (comments gone), the file of `module`, reaches
/// through `crate::` and `super::` paths; a chain of `super::` climbs one module each. A path
/// that leaves the crate's own modules (a layer below, by the name its lib.rs gives it) is not
/// counted: cargo keeps those.
fn imports(module: &[String], own: &BTreeSet<String>, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::").chain(text.match_indices("super::")) {
        if text[..at].ends_with("::") {
            continue;
        }
        let (mut start, mut ups) = (at, module.len());
        if text[at..].starts_with("crate::") {
            start += "crate::".len();
        } else {
            ups = 0;
            while text[start..].starts_with("super::") {
                start += "super::".len();
                ups += 1;
            }
        }
        for rest in paths_at(text, start) {
            // super:: names the module above the file's own (for a mod.rs, above its folder's).
            let base = &module[..module.len().saturating_sub(ups)];
            let target: Vec<String> = base.iter().cloned().chain(rest).collect();
            out.extend(target.first().filter(|m| own.contains(*m)).cloned());
        }
    }
    out
}

#[test]
fn the_import_scan_sees_through_super_chains_strings_and_block_comments() {
    let m = |p: &str| p.split("::").map(String::from).collect::<Vec<_>>();
    let own: BTreeSet<String> = ["families", "runner", "plan"].map(String::from).into();
    let sees = |module: &str, src: &str| imports(&m(module), &own, &code(src));
    assert_eq!(sees("families::tensor::kinds", "use super::super::super::plan::Job;"), ["plan"]);
    assert_eq!(sees("families::tensor::kinds", "use super::super::inputs;"), ["families"]);
    assert_eq!(sees("families::sgemm", "use super::inputs;"), ["families"]);
    assert_eq!(sees("runner", r#"let u = "http://x"; use crate::plan::y;"#), ["plan"]);
    assert!(sees("runner", "// use crate::plan::y;\n/* crate::plan::x */").is_empty());
    assert_eq!(sees("runner", "let c = '\"'; use crate::{families::z, gpu::device};"), ["families"]);
}

/// The workspace's packages and their dependencies (`cargo metadata`, this workspace alone).
fn metadata() -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each layer's crate depends on the layers below it and on no layer above (`cargo metadata`):
/// with the crates so, an import from a higher layer cannot compile, and each crate's doc shows
/// one that does not (a `compile_fail` doctest).
#[test]
fn each_layer_crate_depends_only_on_the_layers_below() {
    let meta = metadata();
    let layer_of = |package: &str| LAYERS.iter().position(|l| package == format!("kernel-lab-{l}"));
    let mut seen = 0;
    for p in meta["packages"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap();
        let Some(at) = layer_of(name) else { continue };
        seen += 1;
        for d in p["dependencies"].as_array().unwrap().iter().filter(|d| d["kind"].is_null()) {
            if let Some(to) = layer_of(d["name"].as_str().unwrap()) {
                assert!(to < at, "{name} (layer {}) depends on {} (layer {})", at + 1, d["name"], to + 1);
            }
        }
        let deps: Vec<&str> = p["dependencies"].as_array().unwrap().iter().filter_map(|d| d["name"].as_str()).collect();
        let below = LAYERS[..at].iter().map(|l| format!("kernel-lab-{l}"));
        assert!(below.clone().any(|b| deps.contains(&b.as_str())) || at == 0, "{name} stands on no layer: {deps:?}");
    }
    assert_eq!(seen, LAYERS.len(), "a crate per layer");
}

#[test]
fn modules_inside_each_layer_import_no_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for layer in LAYERS {
        let src = root().join("crates").join(layer).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let own: BTreeSet<String> = files.iter().filter_map(|f| module_of(&src, f).first().cloned()).collect();
        for f in &files {
            let module = module_of(&src, f);
            let Some(from) = module.first() else { continue };
            let text = code(&std::fs::read_to_string(f).unwrap());
            assert!(!text.contains("crate as "), "{}: an alias of the crate hides its imports from this scan", f.display());
            for to in imports(&module, &own, &text).into_iter().filter(|to| to != from) {
                edges.entry(format!("{layer}::{from}")).or_default().insert(format!("{layer}::{to}"));
            }
        }
    }
    assert!(
        edges.contains_key("measure::runner") && edges["measure::runner"].contains("measure::families"),
        "the scan sees imports: {edges:#?}"
    );
    // A cycle: a unit that reaches itself.
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        while let Some((node, trail)) = stack.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                assert!(next != start, "an import cycle: {} -> {start}", trail.join(" -> "));
                if seen.insert(next.clone()) {
                    stack.push((next.clone(), [trail.clone(), vec![next.clone()]].concat()));
                }
            }
        }
    }
}

#[test]
fn every_file_says_what_it_owns_and_stays_small() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    for c in std::fs::read_dir(root().join("crates")).unwrap() {
        rust_files(&c.unwrap().path().join("src"), &mut files);
    }
    files.push(root().join("build.rs"));
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // bindgen's output (crates/gpu/src/lab_ffi.rs) is not a module but text ffi.rs includes, checked
        // against lab.h by tests/ffi.rs.
        if text.starts_with("/* automatically generated by rust-bindgen") {
            continue;
        }
        assert!(text.starts_with("//!"), "{}: the first line says what the module owns", f.display());
        let lines = text.lines().count();
        if !f.ends_with("crates/facts/src/sheet.rs") {
            assert!(lines <= 400, "{}: {lines} lines", f.display());
        }
    }
}

/// A family is compared by its id or its role (`facts::family`), never by its name: code that
/// branches on `e.family == "l2"` misses a second family of the same role and breaks on a rename.
/// Flags a family's name as a string literal beside `==`, `!=`, `=>` or `|` anywhere in src/ or
/// crates/ outside the registry.
#[test]
fn no_family_name_is_compared_as_a_string_outside_the_registry() {
    let names: Vec<&str> = FamilyId::all().map(FamilyId::name).collect();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("crates"), &mut files);
    let registry = root().join("crates/facts/src/family.rs");
    let mut found = Vec::new();
    for f in files.iter().filter(|f| **f != registry) {
        for (i, line) in code(&std::fs::read_to_string(f).unwrap()).lines().enumerate() {
            for n in &names {
                let lit = format!("\"{n}\"");
                let Some(at) = line.find(&lit) else { continue };
                let (before, after) = (line[..at].trim_end(), line[at + lit.len()..].trim_start());
                let compared = ["==", "!=", "|"].iter().any(|op| before.ends_with(op))
                    || ["==", "!=", "=>", "|"].iter().any(|op| after.starts_with(op))
                    || before.ends_with("contains(&") && after.starts_with(')');
                if compared {
                    found.push(format!("{}:{}: {}", f.strip_prefix(root()).unwrap().display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "family names compared as strings (use FamilyId or a Role):\n{}", found.join("\n"));
}

/// Raw CUDA driver calls and types (cudarc's `driver::sys` and `driver::result`) are the gpu
/// crate's alone: it is the only crate that depends on cudarc (the tests aside), and what it
/// re-exports of cudarc for the layers above (`gpu::cuda`) holds none of them, so above it they
/// cannot be named; everything above goes through `gpu::driver`'s wrappers.
#[test]
fn raw_driver_calls_and_types_stay_in_the_gpu_crate() {
    let meta = metadata();
    let users: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["dependencies"].as_array().unwrap().iter().any(|d| d["name"] == "cudarc" && d["kind"].is_null()))
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["kernel-lab-gpu"], "crates that depend on cudarc (only the gpu crate may)");
    // What the gpu crate re-exports of cudarc: only in gpu::cuda, item by item, none of it raw.
    let mut files = Vec::new();
    rust_files(&root().join("crates/gpu/src"), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        for (i, line) in code(&std::fs::read_to_string(f).unwrap()).lines().enumerate() {
            let line = line.trim();
            if !line.starts_with("pub use cudarc") {
                continue;
            }
            let raw = ["driver::sys", "driver::result", "*", "self", " as ", "cudarc::driver;", "cudarc;"].iter().any(|p| line.contains(p));
            if raw || !f.ends_with("cuda.rs") {
                wrong.push(format!("{}:{}: {line}", f.strip_prefix(root()).unwrap().display(), i + 1));
            }
        }
    }
    assert!(wrong.is_empty(), "re-exports of cudarc outside gpu::cuda, or of raw driver items, or not item by item:\n{}", wrong.join("\n"));
}
