//! The build script of two packages, so that a kernel edit recompiles no Rust:
//! - `kernel-lab-kernels` (crates/kernels, which nothing links): nvcc over every manifest of
//!   csrc/ into `<target>/kernels`, read at run time (crates/facts/src/build has the steps).
//! - `kernel-lab-analysis` (crates/analysis): the commit, which every results file records. It is
//!   the top library crate, so a commit rebuilds it and the CLI, nothing below. Nothing else: the
//!   bindings of csrc/include/lab.h are committed (crates/gpu/src/lab_ffi.rs, checked by
//!   tests/ffi.rs), so `cargo install --path .` needs neither libclang nor CUDA.
//!
//! Neither needs a GPU; neither writes into the source tree.

use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    // Both packages are crates/<name>. A canonical absolute root, so nvcc sees the same command, and
    // makes the same bytes, whichever path cargo was given.
    let root = manifest_dir.join("../..").canonicalize().unwrap_or_else(|e| fail(&e.to_string()));
    match std::env::var("CARGO_PKG_NAME").unwrap().as_str() {
        "kernel-lab-kernels" => {
            // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out; the kernels go to <target>.
            let target = out.ancestors().nth(4).unwrap_or_else(|| fail("OUT_DIR is not inside a target folder"));
            lab_facts::build::kernels(&root, target).unwrap_or_else(|msg| fail(&msg));
        }
        _ => println!("cargo:rustc-env=KERNEL_LAB_GIT={}", lab_facts::build::git_commit(&root)),
    }
}

/// A build failure: one message, then stop. Cargo shows it under the build script's stderr.
fn fail(msg: &str) -> ! {
    eprintln!("error: kernel-lab build: {msg}");
    std::process::exit(1)
}
