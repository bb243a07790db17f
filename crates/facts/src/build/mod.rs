//! What the build script does, so that build.rs stays a dispatcher: compile every variant of
//! csrc/ (and the test-only ones of tests/csrc) with nvcc into kernel sets, and name the commit.
//! It prints cargo's `rerun-if` and warning lines itself: it only ever runs inside build.rs.

pub mod nvcc;
mod sets;

pub use sets::{headers, kernels};

use std::path::Path;

/// The commit the build is from ("-dirty" with uncommitted changes), for results files; cargo is
/// told to rerun when HEAD or the index moves.
pub fn git_commit(root: &Path) -> String {
    for p in [".git/HEAD", ".git/index"] {
        if root.join(p).exists() {
            println!("cargo:rerun-if-changed={}", root.join(p).display());
        }
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match (git(&["rev-parse", "--short=12", "HEAD"]), git(&["status", "--porcelain", "--untracked-files=no"])) {
        (Some(c), Some(status)) if !status.is_empty() => format!("{c}-dirty"),
        (Some(c), _) => c,
        _ => "unknown".to_string(),
    }
}
