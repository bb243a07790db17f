//! The build holds each kernel to the argument struct its manifest entry's launch takes
//! (`launch::abi`): a kernel whose signature takes another struct fails the build with the
//! manifest's file and line, and the same kernel with the right struct builds. It runs the build
//! on a tree of one variant with nvcc for one architecture: the toolkit `cargo make setup`
//! installs, which CI's set-up installs too; without one the test fails and says so. One test in
//! its own binary, since it sets the build's environment (NVCC, KERNEL_LAB_ARCHS).

use std::path::Path;

use kernel_lab::facts::build::{self, nvcc::Nvcc};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

const MANIFEST: &str = "# A fixture: one memory variant.\n\n[[variant]]\nfile = \"memory_01_fixture.cu\"\nblock = [256]\ndefines = { OP = \"LAB_OP_COPY\", BLOCKS_PER_SM = 8, VEC = 1 }\n";

/// The kernel, taking `args`.
fn kernel(header: &str, args: &str) -> String {
    format!(
        "// Technique: a fixture whose kernel takes {args}.\n#include \"{header}\"\n\nextern \"C\" __global__ void memory_01_fixture({args} p) {{}}\n"
    )
}

#[test]
fn a_kernel_taking_another_struct_than_its_launch_fails_the_build_at_its_manifest_line() {
    let toolkit = Nvcc::find(Path::new(ROOT)).unwrap_or_else(|e| panic!("this test runs the build, which needs nvcc: {e}"));
    let dir = tempfile::tempdir().unwrap();
    let csrc = dir.path().join("csrc");
    std::fs::create_dir_all(csrc.join("include")).unwrap();
    for f in std::fs::read_dir(Path::new(ROOT).join("csrc/include")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, csrc.join("include").join(f.file_name().unwrap())).unwrap();
    }
    std::fs::create_dir_all(csrc.join("memory")).unwrap();
    std::fs::write(csrc.join("memory/variants.toml"), MANIFEST).unwrap();
    let line = MANIFEST.lines().position(|l| l == "[[variant]]").unwrap() + 1;
    // SAFETY (of the environment): the only test of this binary, so no thread reads it meanwhile.
    std::env::set_var("NVCC", &toolkit.path);
    std::env::set_var("KERNEL_LAB_ARCHS", "sm_90");
    let target = dir.path().join("target");

    std::fs::write(csrc.join("memory/memory_01_fixture.cu"), kernel("lab_softmax.h", "lab_softmax_args")).unwrap();
    let err = build::kernels(dir.path(), &target).expect_err("a memory kernel taking the softmax family's struct must not build");
    let at = format!("memory/variants.toml:{line}");
    assert!(err.contains("memory_01_fixture must take lab_stream_args") && err.contains(&at), "{err}");

    std::fs::write(csrc.join("memory/memory_01_fixture.cu"), kernel("lab_memory.h", "lab_stream_args")).unwrap();
    build::kernels(dir.path(), &target).unwrap_or_else(|e| panic!("the same kernel taking lab_stream_args builds: {e}"));
    assert!(target.join("kernels/memory_01_fixture.fatbin").is_file());

    // A family in fp16 storage builds softmax's file under its own name, and only a file that
    // loads its rows as lab_elem: another would read 16-bit data as floats.
    std::fs::create_dir_all(csrc.join("softmax")).unwrap();
    std::fs::create_dir_all(csrc.join("softmax_fp16")).unwrap();
    let manifest = "sources = \"softmax\"\n\n[[variant]]\nfile = \"softmax_01_fixture.cu\"\nname = \"softmax_01_fixture_fp16\"\nblock = [128]\ndefines = { ROWS_PER_BLOCK = 4 }\n";
    std::fs::write(csrc.join("softmax_fp16/variants.toml"), manifest).unwrap();
    let softmax = |body: &str| {
        format!("// Technique: a fixture.\n#include \"lab_softmax.h\"\n#include \"row_storage.cuh\"\n\nextern \"C\" __global__ void softmax_01_fixture(lab_softmax_args p) {{ {body} }}\n")
    };
    std::fs::write(csrc.join("softmax/softmax_01_fixture.cu"), softmax("lab_ptr<float>(p.dst)[0] = lab_ptr<const float>(p.src)[0];")).unwrap();
    let err = build::kernels(dir.path(), &target).expect_err("a file that reads floats must not build in fp16 storage");
    assert!(err.contains("softmax_fp16/variants.toml:3") && err.contains("lab_elem"), "{err}");
    std::fs::write(csrc.join("softmax/softmax_01_fixture.cu"), softmax("lab_store(lab_ptr<lab_elem>(p.dst), lab_load(lab_ptr<const lab_elem>(p.src)));")).unwrap();
    build::kernels(dir.path(), &target).unwrap_or_else(|e| panic!("the file loading through lab_elem builds: {e}"));
    assert!(target.join("kernels/softmax_01_fixture_fp16.fatbin").is_file());
}
