//! The build holds every kernel's signature to the argument struct its family's protocol names
//! (`launch::abi`): a kernel taking another fails the build with its manifest's line. Needs nvcc,
//! which the project's set-up installs (`cargo make setup`), as the kernels' build does.

use std::path::Path;

use lab_facts::arch::{plan_archs, variant_targets};
use lab_facts::build::nvcc::{compile_all, Job, Nvcc};
use lab_facts::manifest;

/// Builds one softmax variant whose kernel takes `args`, for sm_90, in a temporary tree.
fn build(args: &str) -> Result<(), String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let nvcc = Nvcc::find(&root)?;
    let plan = plan_archs(&nvcc.gpu_codes, &nvcc.version, Some("sm_90"))?;
    let tmp = std::env::temp_dir().join(format!("lab-abi-{}-{args}", std::process::id()));
    let dir = tmp.join("tree/softmax");
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = "[[variant]]\nfile = \"softmax_01_x.cu\"\nblock = [32]\ndefines = { ROWS_PER_BLOCK = 1 }\n";
    std::fs::write(dir.join("variants.toml"), manifest).unwrap();
    let source =
        format!("#include \"lab_softmax.h\"\n#include \"lab_transpose.h\"\nextern \"C\" __global__ void softmax_01_x({args} p) {{}}\n");
    std::fs::write(dir.join("softmax_01_x.cu"), source).unwrap();
    let entries = manifest::parse("softmax", manifest, &|_| None)?;
    let job = Job::new(&tmp.join("tree"), "softmax", &entries[0], variant_targets(&plan, &entries[0].arch));
    let result = compile_all(&nvcc, &root.join("csrc/include"), &tmp.join("out"), vec![job]).map(drop);
    std::fs::remove_dir_all(&tmp).unwrap();
    result
}

#[test]
fn a_kernel_taking_another_argument_struct_fails_the_build_with_its_manifest_line() {
    build("lab_softmax_args").expect("the protocol's own struct builds");
    let e = build("lab_transpose_args").unwrap_err();
    assert!(e.contains("softmax_01_x must take lab_softmax_args: softmax/variants.toml:1"), "{e}");
}

#[test]
fn every_family_and_launch_names_a_struct_of_lab_h() {
    use lab_facts::family::FamilyId;
    use lab_facts::launch::{abi, Grid, Launch, Params};
    let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../csrc/include");
    let header: String = std::fs::read_dir(&include)
        .unwrap()
        .flatten()
        .filter(|d| d.file_name().to_string_lossy().starts_with("lab_") && d.file_name().to_string_lossy().ends_with(".h"))
        .map(|d| std::fs::read_to_string(d.path()).unwrap())
        .collect();
    let gemm = |tma_bk, stream_k| Params::Gemm { tma_bk, tile: (128, 128), stream_k, pad_rows: false, split_k: 1, layout: None };
    for id in FamilyId::all() {
        for params in [Params::Transpose, gemm(None, false), gemm(None, true), gemm(Some(64), false)] {
            let launch = Launch { grid: Grid::PerThread, params, dyn_smem_bytes: 0, cluster: [1, 1, 1] };
            let name = abi(id, &launch);
            assert!(header.contains(&format!("}} {name};")), "{}: {name} is not a struct of the lab_*.h headers", id.name());
        }
    }
}
