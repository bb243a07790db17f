//! README.md and docs/ are kept true by running them:
//! - a block between `<!-- generated: CMD -->` and `<!-- end generated -->` holds what CMD prints
//!   now (`generated text:` puts it in a text fence), so no measured figure is typed by hand;
//! - docs/figures/ holds exactly the plots `kernel-lab report --plots` draws of the reference results;
//! - every ```sh block runs and exits 0, unless its fence says `sh gpu` (needs a GPU: not run here)
//!   or `sh setup` (the README's set-up, which `.ci/run` runs itself: each of its commands must
//!   stand in `.ci/run`).
//!
//! Commands run in the repository's root with this build's `kernel-lab` first on PATH.
//! `cargo make docs` (KERNEL_LAB_DOCS=write) rewrites the blocks and the figures instead of
//! checking them.

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The plots of the reference results, written into the folder given.
const FIGURES: &str = "kernel-lab report --results-dir results/nvidia-h200-sm_90 --format markdown --plots";
const FIGURES_DIR: &str = "docs/figures";

fn writing() -> bool {
    std::env::var("KERNEL_LAB_DOCS").is_ok_and(|v| v == "write")
}

/// README.md and every Markdown page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut out = vec![Path::new(ROOT).join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("docs/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(ROOT).unwrap_or(p).display().to_string()
}

/// Runs `cmd` under bash in the repository's root; (exit code, stdout, stderr).
fn sh(cmd: &str) -> (i32, String, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_kernel-lab")).parent().unwrap().to_path_buf();
    let path =
        std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).unwrap();
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", cmd])
        .current_dir(ROOT)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

const BEGIN: &str = "<!-- generated";
const END: &str = "<!-- end generated -->";

/// The page with every generated block made anew, or the first problem with its line.
fn regenerate(page: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(page).unwrap();
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n').enumerate();
    while let Some((i, line)) = lines.next() {
        out.push_str(line);
        let Some(directive) = line.trim().strip_prefix(BEGIN) else { continue };
        let at = format!("{}:{}", rel(page), i + 1);
        let directive = directive.strip_suffix("-->").ok_or(format!("{at}: a generated block's line ends with -->"))?.trim();
        let (fenced, cmd) = match (directive.strip_prefix("text:"), directive.strip_prefix(':')) {
            (Some(cmd), _) => (true, cmd.trim()),
            (None, Some(cmd)) => (false, cmd.trim()),
            _ => return Err(format!("{at}: expected `<!-- generated: CMD -->` or `<!-- generated text: CMD -->`")),
        };
        if !lines.any(|(_, l)| l.trim() == END) {
            return Err(format!("{at}: no `{END}` after the block"));
        }
        let (code, stdout, stderr) = sh(cmd);
        if code != 0 {
            return Err(format!("{at}: `{cmd}` exited {code}: {}", stderr.trim()));
        }
        if fenced {
            out.push_str("```text\n");
        }
        out.push_str(stdout.trim_end());
        out.push('\n');
        if fenced {
            out.push_str("```\n");
        }
        out.push_str(END);
        out.push('\n');
    }
    Ok(out)
}

#[test]
fn generated_blocks_are_what_their_commands_print_now() {
    let mut stale = Vec::new();
    for page in pages() {
        let now = regenerate(&page).unwrap_or_else(|e| panic!("{e}"));
        if now != std::fs::read_to_string(&page).unwrap() {
            if writing() {
                std::fs::write(&page, now).unwrap();
            } else {
                stale.push(rel(&page));
            }
        }
    }
    assert!(stale.is_empty(), "generated blocks differ from what their commands print now in {stale:?}: run `cargo make docs`");
}

#[test]
fn the_figures_are_the_reference_results_plots() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = sh(&format!("{FIGURES} {}", tmp.path().display()));
    assert_eq!(code, 0, "{FIGURES}: {stderr}");
    let dir = Path::new(ROOT).join(FIGURES_DIR);
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(d).map(|r| r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
        v.sort();
        v
    };
    if writing() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for n in names(tmp.path()) {
            std::fs::copy(tmp.path().join(&n), dir.join(&n)).unwrap();
        }
        return;
    }
    let (want, have) = (names(tmp.path()), names(&dir));
    assert_eq!(have, want, "{FIGURES_DIR}/ does not hold the plots `{FIGURES}` draws: run `cargo make docs`");
    for n in want {
        let same = std::fs::read(tmp.path().join(&n)).unwrap() == std::fs::read(dir.join(&n)).unwrap();
        assert!(same, "{FIGURES_DIR}/{n} differs from what `{FIGURES}` draws now: run `cargo make docs`");
    }
}

/// A fenced shell block: its first line's number, its tags, its text.
struct Block {
    line: usize,
    tags: Vec<String>,
    text: String,
}

fn shell_blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    let mut other_fence = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(b) = open.as_mut() {
            if t.starts_with("```") {
                out.push(open.take().unwrap());
            } else {
                b.text.push_str(line);
                b.text.push('\n');
            }
        } else if let Some(info) = t.strip_prefix("```") {
            if other_fence {
                other_fence = false;
                continue;
            }
            let mut words = info.split_whitespace();
            match words.next() {
                Some("sh" | "bash" | "shell") => {
                    open = Some(Block { line: i + 1, tags: words.map(str::to_string).collect(), text: String::new() })
                }
                _ => other_fence = true,
            }
        }
    }
    out
}

/// The commands of a block: each line without its comment, empty lines left out.
fn commands(text: &str) -> Vec<String> {
    text.lines().map(|l| l.split(" #").next().unwrap().trim().to_string()).filter(|l| !l.is_empty() && !l.starts_with('#')).collect()
}

#[test]
fn every_shell_block_not_tagged_for_a_gpu_runs() {
    let ci = std::fs::read_to_string(Path::new(ROOT).join(".ci/run")).unwrap();
    let mut failed = Vec::new();
    let mut ran = 0;
    for page in pages() {
        for b in shell_blocks(&std::fs::read_to_string(&page).unwrap()) {
            let at = format!("{}:{}", rel(&page), b.line);
            match b.tags.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
                ["gpu"] => {}
                ["setup"] => {
                    for c in commands(&b.text) {
                        if !ci.contains(&c) {
                            failed.push(format!("{at}: the set-up command `{c}` is not in .ci/run"));
                        }
                    }
                }
                [] => {
                    ran += 1;
                    let (code, _, stderr) = sh(&b.text);
                    if code != 0 {
                        failed.push(format!("{at}: exited {code}: {}", stderr.trim().lines().last().unwrap_or("")));
                    }
                }
                tags => failed.push(format!("{at}: unknown tags {tags:?} (a shell block is untagged, `gpu` or `setup`)")),
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(ran >= 3, "only {ran} shell blocks ran: the tour is gone?");
}
