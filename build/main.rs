//! Build script: read the variant manifests, compile each variant with nvcc into a fatbin, run
//! bindgen over csrc/include/lab.h, and write OUT_DIR/registry.rs. Needs no GPU.

// The library uses more of the shared table than the build does.
#[allow(dead_code)]
#[path = "../src/arch.rs"]
mod arch;
#[path = "../src/expr.rs"]
mod expr;
#[allow(dead_code)]
#[path = "../src/manifest.rs"]
mod manifest;
#[path = "../src/resources.rs"]
mod resources;

mod codegen;
mod nvcc;

use std::path::{Path, PathBuf};

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let csrc = root.join("csrc");
    for p in ["csrc", "src/arch.rs", "src/manifest.rs", "src/resources.rs"] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    for v in ["NVCC", "CUDA_PATH", "CUDA_HOME", "PATH", "KERNEL_LAB_ARCHS"] {
        println!("cargo:rerun-if-env-changed={v}");
    }

    bindings(&csrc.join("include/lab.h"), &out.join("lab_ffi.rs"));
    git_commit(&root);

    let toolkit = nvcc::Nvcc::find(&root).unwrap_or_else(|msg| fail(&msg));
    // Where the toolkit keeps libnvrtc, for machines whose loader path lacks it (see jit.rs).
    let lib = toolkit.path.parent().and_then(Path::parent).map(|r| r.join("lib")).unwrap_or_default();
    println!("cargo:rustc-env=KERNEL_LAB_TOOLKIT_LIB={}", lib.display());
    let plan = arch::plan_archs(&toolkit.gpu_codes, &toolkit.version, std::env::var("KERNEL_LAB_ARCHS").ok().as_deref())
        .unwrap_or_else(|msg| fail(&msg));
    for (sm, why) in &plan.skipped {
        println!("cargo:warning=kernel-lab: not building {sm}: {why}");
    }

    let families = read_manifests(&csrc);
    let jobs: Vec<nvcc::Job> = families
        .iter()
        .flat_map(|(family, entries)| entries.iter().map(|e| nvcc::Job::new(&csrc, family, e, arch::variant_targets(&plan, &e.arch))))
        .collect();
    let built = nvcc::compile_all(&toolkit, &csrc, &out.join("kernels"), jobs).unwrap_or_else(|msg| fail(&msg));
    for b in &built {
        for w in &b.warnings {
            println!("cargo:warning={}: {w}", b.job.entry.name);
        }
    }
    codegen::write_registry(&out.join("registry.rs"), &csrc.join("include"), &toolkit, &plan, &built)
        .unwrap_or_else(|e| fail(&e.to_string()));
}

/// Every `csrc/<family>/variants.toml`, families sorted by name.
fn read_manifests(csrc: &Path) -> Vec<(String, Vec<manifest::Checked>)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(csrc)
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", csrc.display())))
        .filter_map(|d| d.ok().map(|d| d.path()))
        .filter(|p| p.join("variants.toml").is_file())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|dir| {
            let family = dir.file_name().unwrap().to_string_lossy().to_string();
            let path = dir.join("variants.toml");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| fail(&format!("{}: {e}", path.display())));
            let entries = manifest::parse(&family, &text).unwrap_or_else(|m| fail(&m));
            for e in &entries {
                if !dir.join(&e.file).is_file() {
                    fail(&format!("{family}/variants.toml names {}, which does not exist", e.file));
                }
            }
            (family, entries)
        })
        .collect()
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

/// The commit the binary is built from ("-dirty" with uncommitted changes), for results files.
fn git_commit(root: &Path) {
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
    let commit = match (git(&["rev-parse", "--short=12", "HEAD"]), git(&["status", "--porcelain", "--untracked-files=no"])) {
        (Some(c), Some(status)) if !status.is_empty() => format!("{c}-dirty"),
        (Some(c), _) => c,
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=KERNEL_LAB_GIT={commit}");
}

/// A build failure: one message, then stop. Cargo shows it under the build script's stderr.
fn fail(msg: &str) -> ! {
    eprintln!("error: kernel-lab build: {msg}");
    std::process::exit(1)
}
