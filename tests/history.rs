//! The product speaks of the code as it is: comments, manifests, scripts, the README and docs/ say
//! why the code is shaped so, never when or in which work it was found. This test scans them for
//! references to that work (a work-session number, a device-log name such as `s7-2`, an issue
//! number, a date, "the seed articles") and fails listing each as `file:line: text`. A measured
//! fact may stay where it explains a choice, stated without when or where it was measured. Needs
//! no GPU; reads about 2 MB of text.

use std::path::{Path, PathBuf};

/// What is scanned, from the repository root: folders (recursively) and single files. docs/ and
/// CHANGELOG.md are scanned where present.
const SCANNED: &[&str] =
    &["src", "crates", "csrc", "scripts", "benches", "tests", ".ci", "docs", "build.rs", "Makefile.toml", "README.md", "CHANGELOG.md"];

/// Folders left out: test fixtures (results files carry their runs' dates as data), build outputs
/// and Python's byte-code caches.
const SKIPPED: &[&str] = &["tests/data", "target", "__pycache__"];

/// Text that matches a pattern but is data, not history: (file, text on the line, why). An empty
/// text allows the whole file. Keep it short: a new entry needs a reason a reviewer accepts.
const ALLOWED: &[(&str, &str, &str)] = &[
    ("tests/history.rs", "", "this test's own patterns and the examples that check them"),
    ("CHANGELOG.md", "## [", "a release's heading carries its date (the Keep a Changelog format)"),
];

/// Which pattern a line matches, if any. Matching is on ASCII lowercase; every pattern needs a
/// word boundary before it, so `seconds 3`, `sm_90` or `rows-1` do not match. "issue" followed by
/// a number reads as an issue number even where it is the verb: write "issue two loads".
fn reference(line: &str) -> Option<&'static str> {
    let l = line.to_ascii_lowercase();
    if l.contains("seed article") {
        return Some("\"the seed articles\" (say: the RTX 4090 / 4070 and 4070 Ti / V100 selection guides)");
    }
    if l.contains("sessions.md") {
        return Some("the work log");
    }
    let b = l.as_bytes();
    for i in 0..b.len() {
        if i > 0 && is_word(b[i - 1]) {
            continue;
        }
        let at = &b[i..];
        // "session 34", "sessions 9-46", "Session 50"
        if let Some(rest) = at.strip_prefix(b"session") {
            if number_after(rest.strip_prefix(b"s").unwrap_or(rest), false) {
                return Some("a work-session number");
            }
        }
        // "issue 69", "issues 16 and 18", "issue #12"
        if let Some(rest) = at.strip_prefix(b"issue") {
            if number_after(rest.strip_prefix(b"s").unwrap_or(rest), true) {
                return Some("an issue number");
            }
        }
        // "s7-2", "log s45-1", "2026-12-04-s44-6": s, 1-3 digits, a dash, 1-2 digits
        if at[0] == b's' {
            let n = digits(&at[1..]);
            if (1..=3).contains(&n) && at.get(1 + n) == Some(&b'-') {
                let m = digits(&at[2 + n..]);
                if (1..=2).contains(&m) && !at.get(2 + n + m).is_some_and(|&c| is_word(c)) {
                    return Some("a device-log name");
                }
            }
        }
        // "2026-11-30", not followed by a letter or digit: a timestamp's "2026-11-30T00:00:00Z"
        // is a run's date in test data, not a reference.
        if is_date(at) && !at.get(10).is_some_and(|c| c.is_ascii_alphanumeric()) {
            return Some("a date");
        }
    }
    None
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// Whether `rest` is blanks (at least one, unless a `#` follows at once), an optional `#` where
/// `hash`, then a digit.
fn number_after(rest: &[u8], hash: bool) -> bool {
    let blanks = rest.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
    let mut t = &rest[blanks..];
    if hash {
        t = t.strip_prefix(b"#").unwrap_or(t);
    }
    (blanks > 0 || t.len() < rest.len()) && t.first().is_some_and(u8::is_ascii_digit)
}

/// Whether `s` starts with a date YYYY-MM-DD (years 1900-2099, months 01-12, days 01-31).
fn is_date(s: &[u8]) -> bool {
    let Some(s) = s.get(..10) else { return false };
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        s[r].iter().try_fold(0u32, |n, &c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))
    };
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else { return false };
    s[4] == b'-' && s[7] == b'-' && (1900..2100).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(rel: &Path, out: &mut Vec<PathBuf>) {
    if SKIPPED.iter().any(|s| rel == Path::new(s) || rel.file_name().is_some_and(|n| n == *s)) {
        return;
    }
    let full = root().join(rel);
    if full.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&full).unwrap().map(|e| rel.join(e.unwrap().file_name())).collect();
        entries.sort();
        for e in entries {
            files(&e, out);
        }
    } else if full.is_file() {
        out.push(rel.to_path_buf());
    }
}

fn allowed(file: &str, line: &str) -> bool {
    ALLOWED.iter().any(|(f, text, _)| *f == file && line.contains(text))
}

/// Every reference in the scanned files, as `file:line: text (what it is)`.
fn references() -> (usize, Vec<String>) {
    let mut paths = Vec::new();
    for s in SCANNED {
        files(Path::new(s), &mut paths);
    }
    let mut hits = Vec::new();
    for rel in &paths {
        // Binary files (a fatbin, an image) are not prose.
        let Ok(text) = std::fs::read_to_string(root().join(rel)) else { continue };
        let file = rel.to_string_lossy().replace('\\', "/");
        for (n, line) in text.lines().enumerate() {
            if let Some(what) = reference(line) {
                if !allowed(&file, line) {
                    hits.push(format!("{file}:{}: {} ({what})", n + 1, line.trim()));
                }
            }
        }
    }
    (paths.len(), hits)
}

#[test]
fn no_history_in_the_product() {
    let (scanned, hits) = references();
    assert!(scanned > 100, "only {scanned} files scanned: is the test run from the repository?");
    assert!(
        hits.is_empty(),
        "{} {} to the work that made the code, not to the code (say why it is so, as it is now; \
         a measured fact may stay, without when or where it was measured):\n{}",
        hits.len(),
        if hits.len() == 1 { "line refers" } else { "lines refer" },
        hits.join("\n")
    );
}

#[test]
fn the_patterns_catch_history_and_pass_prose() {
    for line in [
        "// measured in session 12",
        "# between the mmas without a branch (session 19), it ran",
        "sessions 9-46 kept it",
        "see results/sessions.md",
        "/// 2026-12-03-s30-1, s30-6).",
        "(log s45-1)",
        "logs s39-5, s39-6",
        "the fix of issue 69",
        "Issue #18's lines",
        "the 4090 figure the seed articles quote",
        "# found best on the H200 (2026-11-29, 0.95x cuBLAS)",
    ] {
        assert!(reference(line).is_some(), "not caught: {line}");
    }
    for line in [
        "// Waits until the phase with parity `parity` has completed.",
        "run_date: \"2026-11-30T18:38:00Z\"",
        "sm_90a, sm_120 and compute_120",
        "(BLOCKS-1) rows, ITERS-1 pairs, vs-1",
        "issue slots 65% busy; each warp can issue two loads",
        "nvidia-cuda-cuobjdump==13.2.78",
        "a session's results, a tmux session",
        "--seed 11 and 4096x4224x4096 at 8192³ (s-1)",
        "2026-99-99 is no date",
    ] {
        assert!(reference(line).is_none(), "caught: {line}");
    }
}
