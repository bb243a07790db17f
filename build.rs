//! The build script of two packages, so that a kernel edit recompiles no Rust:
//! - `kernel-lab` (the library and CLI): bindgen over csrc/include/lab.h, the ABI of every
//!   kernel, so a layout mismatch between host and kernel cannot compile; and the commit.
//! - `kernel-lab-kernels` (crates/kernels, which nothing links): nvcc over every manifest of
//!   csrc/ into `<target>/kernels`, read at run time (crates/facts/src/build has the steps).
//!
//! Neither needs a GPU; neither writes into the source tree.

use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    match std::env::var("CARGO_PKG_NAME").unwrap().as_str() {
        "kernel-lab-kernels" => {
            // The same absolute paths as ever, so nvcc sees the same command and makes the same bytes.
            let root = manifest_dir.join("../..").canonicalize().unwrap_or_else(|e| fail(&e.to_string()));
            // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out; the kernels go to <target>.
            let target = out.ancestors().nth(4).unwrap_or_else(|| fail("OUT_DIR is not inside a target folder"));
            lab_facts::build::kernels(&root, target).unwrap_or_else(|msg| fail(&msg));
        }
        _ => {
            let header = manifest_dir.join("csrc/include/lab.h");
            println!("cargo:rerun-if-changed={}", header.display());
            bindings(&header, &out.join("lab_ffi.rs"));
            println!("cargo:rustc-env=KERNEL_LAB_GIT={}", lab_facts::build::git_commit(&manifest_dir));
        }
    }
}

fn bindings(header: &Path, out: &Path) {
    let b = bindgen::Builder::default()
        .header(header.to_string_lossy())
        .allowlist_type("lab_.*")
        .allowlist_var("LAB_.*")
        .derive_default(true)
        .derive_debug(true)
        .derive_copy(true)
        .layout_tests(true)
        .generate()
        .unwrap_or_else(|e| {
            fail(&format!(
                "bindgen could not read {}: {e}. bindgen needs libclang: `cargo make setup` installs it \
                 (Debian: apt-get install libclang-dev), or set LIBCLANG_PATH",
                header.display()
            ))
        });
    b.write_to_file(out).unwrap_or_else(|e| fail(&format!("{}: {e}", out.display())));
}

/// A build failure: one message, then stop. Cargo shows it under the build script's stderr.
fn fail(msg: &str) -> ! {
    eprintln!("error: kernel-lab build: {msg}");
    std::process::exit(1)
}
