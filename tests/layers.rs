//! The shape of the host code, checked: src/ is layered (facts, schema, gpu, measure, analysis,
//! then the CLI) and a module imports only from its own layer and those below; no modules import
//! each other in a cycle; every source file opens with what it owns and stays under 400 lines
//! (the spec sheet, a table of published data, aside).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kernel_lab::facts::family::FamilyId;

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

/// The module path of a file under src/: src/measure/families/sgemm.rs is measure::families::sgemm.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root().join("src")).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
        parts.pop();
    }
    parts
}

/// The unit a path belongs to: its layer and the module in it ("measure::families"), or its
/// first segment outside the layers ("error").
fn unit(path: &[String]) -> Option<String> {
    let first = path.first()?;
    if LAYERS.contains(&first.as_str()) {
        Some(path.iter().take(2).cloned().collect::<Vec<_>>().join("::"))
    } else {
        Some(first.clone())
    }
}

fn layer(unit: &str) -> usize {
    let first = unit.split("::").next().unwrap();
    LAYERS.iter().position(|l| *l == first).map_or(0, |i| i + 1)
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

/// The units `text` (comments gone), the file of `module`, imports through `crate::` and
/// `super::` paths; a chain of `super::` climbs one module each.
fn imports(module: &[String], text: &str) -> Vec<String> {
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
            out.extend(unit(&target));
        }
    }
    out
}

#[test]
fn the_import_scan_sees_through_super_chains_strings_and_block_comments() {
    let m = |p: &str| p.split("::").map(String::from).collect::<Vec<_>>();
    let sees = |module: &str, src: &str| imports(&m(module), &code(src));
    assert_eq!(sees("measure::families::sgemm", "use super::super::super::analysis::store;"), ["analysis::store"]);
    assert_eq!(sees("measure::families::sgemm", "use super::inputs;"), ["measure::families"]);
    assert_eq!(sees("measure::runner", r#"let u = "http://x"; use crate::analysis::report;"#), ["analysis::report"]);
    assert!(sees("measure::runner", "// use crate::analysis::report;\n/* crate::analysis::x */").is_empty());
    assert_eq!(sees("measure::runner", "let c = '\"'; use crate::analysis::y;"), ["analysis::y"]);
}

#[test]
fn layers_hold_and_modules_import_no_cycle() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(root().join("src/bin"))) {
        let module = module_of(f);
        let Some(from) = unit(&module) else { continue };
        let text = code(&std::fs::read_to_string(f).unwrap());
        assert!(!text.contains("crate as "), "{}: an alias of the crate hides its imports from this scan", f.display());
        for to in imports(&module, &text) {
            if to == from || to == "error" {
                continue;
            }
            if layer(&to) > layer(&from) {
                wrong.push(format!("{} ({from}, layer {}) imports {to} (layer {})", f.display(), layer(&from), layer(&to)));
            }
            edges.entry(from.clone()).or_default().insert(to);
        }
    }
    assert!(wrong.is_empty(), "imports from a higher layer:\n{}", wrong.join("\n"));
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
    for dir in ["src", "crates/facts/src", "crates/kernels/src"] {
        rust_files(&root().join(dir), &mut files);
    }
    files.push(root().join("build.rs"));
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // bindgen's output (src/gpu/lab_ffi.rs) is not a module but text ffi.rs includes, checked
        // against lab.h by tests/ffi.rs.
        if text.starts_with("/* automatically generated by rust-bindgen") {
            continue;
        }
        assert!(text.starts_with("//!"), "{}: the first line says what the module owns", f.display());
        let lines = text.lines().count();
        if !f.ends_with("facts/sheet.rs") {
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
/// layer's alone: everything above it goes through `gpu::driver`'s wrappers, each of which says
/// what it needs of its caller.
#[test]
fn raw_driver_calls_and_types_stay_in_the_gpu_layer() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let gpu = root().join("src/gpu");
    let found: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(&gpu))
        .flat_map(|f| {
            let text = code(&std::fs::read_to_string(f).unwrap());
            let rel = f.strip_prefix(root()).unwrap().display().to_string();
            text.lines()
                .enumerate()
                .filter(|(_, l)| {
                    let from_driver = l.contains("cudarc::driver") && (l.contains("sys") || l.contains("result"));
                    from_driver || l.contains("driver::sys") || l.contains("sys::CU")
                })
                .map(|(i, l)| format!("{rel}:{}: {}", i + 1, l.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(found.is_empty(), "raw driver use outside src/gpu:\n{}", found.join("\n"));
}
