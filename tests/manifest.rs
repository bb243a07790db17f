//! The manifest rules and the families' launch protocols, as the build applies them: a bad entry
//! is an error that names the manifest, the entry's line and the entry.

use kernel_lab::facts::launch::{Fit, Grid, Launch, Params, StreamOp};
use kernel_lab::facts::manifest;

/// lab.h's constants, as the build resolves them.
fn lab_h(name: &str) -> Option<i64> {
    match name {
        "LAB_FP32" => Some(2),
        "LAB_OP_TRIAD" => Some(3),
        _ => None,
    }
}

fn parse(family: &str, text: &str) -> Result<Vec<manifest::Checked>, String> {
    manifest::parse(family, text, &lab_h)
}

#[test]
fn manifest_rules() {
    let ok = "[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [16, 16]\ndefines = { BM = 16, BN = 16 }\n";
    let v = parse("sgemm", ok).unwrap();
    assert_eq!((v[0].name.as_str(), v[0].rung, v[0].block, v[0].line), ("sgemm_01_x", 1, [16, 16, 1], 1));
    assert_eq!(v[0].config().compiler_defines(), ["-DBLOCK_X=16", "-DBLOCK_Y=16", "-DBLOCK_Z=1", "-DBM=16", "-DBN=16"]);
    let bad = |text: &str, want: &str| {
        let e = parse("sgemm", &format!("{text}defines = {{ BM = 16, BN = 16 }}\n")).unwrap_err();
        assert!(e.contains(want), "{e} should say {want}");
    };
    bad("[[variant]]\nfile = \"other_01_x.cu\"\nblock = [1]\n", "sgemm_NN_");
    bad("[[variant]]\nfile = \"sgemm_1_x.cu\"\nblock = [1]\n", "sgemm_NN_");
    bad("[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [64, 32]\n", "over CUDA's 1024");
    bad("[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = []\n", "1 to 3");
    bad("[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [1]\narch = \"ampere\"\n", "arch requirement");
    bad("[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [1]\nname = \"other\"\n", "start with its file's rung 'sgemm_01_'");
    bad("[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [1]\nname = \"sgemm_02_x\"\n", "start with its file's rung 'sgemm_01_'");
    // A second entry of a file names its technique in words of its own, at the file's rung.
    let own =
        parse("sgemm", "[[variant]]\nfile = \"sgemm_01_x.cu\"\nname = \"sgemm_01_y\"\nblock = [16, 16]\ndefines = { BM = 16, BN = 16 }\n")
            .unwrap();
    assert_eq!((own[0].name.as_str(), own[0].symbol.as_str(), own[0].rung), ("sgemm_01_y", "sgemm_01_x", 1));
    bad("[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [1]\nmultiple_of = { k = 0 }\n", "positive");
    bad("[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [1]\ncolour = 1\n", "unknown field");
    let twice = "[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [1]\ndefines = { BM = 1, BN = 1 }\n";
    assert!(parse("sgemm", &format!("{twice}{twice}")).unwrap_err().contains("used twice"));
    let e = parse("sgemm", "[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [1]\ndefines = { BLOCK_X = 1 }\n").unwrap_err();
    assert!(e.contains("BLOCK_"), "{e}");
}

#[test]
fn a_family_in_another_storage_builds_its_fp32_familys_files_under_names_of_its_own() {
    let entry = |name: &str| format!("[[variant]]\nfile = \"softmax_06_x.cu\"\n{name}block = [128]\ndefines = {{ ROWS_PER_BLOCK = 4 }}\n");
    let v = parse("softmax_fp16", &format!("sources = \"softmax\"\n{}", entry("name = \"softmax_06_x_fp16\"\n"))).unwrap();
    assert_eq!(
        (v[0].dir.as_str(), v[0].symbol.as_str(), v[0].rung),
        ("softmax", "softmax_06_x", 6),
        "the file is softmax's, its stem the symbol"
    );
    assert_eq!(v[0].launch.params, Params::Softmax);
    let own = parse("softmax", &entry("")).unwrap();
    assert_eq!(own[0].dir, "softmax", "without sources, the family's own folder");
    let e = parse("softmax_fp16", &format!("sources = \"softmax\"\n{}", entry(""))).unwrap_err();
    assert!(e.contains("needs a name of its own") && e.contains("softmax_06_x_fp16"), "{e}");
    let e = parse("softmax_fp16", &entry("name = \"softmax_06_x_fp16\"\n")).unwrap_err();
    assert!(e.contains("softmax_fp16_NN_"), "without sources the files must be its own: {e}");
    let e = parse("softmax_fp16", &format!("sources = \"../softmax\"\n{}", entry("name = \"softmax_06_x_fp16\"\n"))).unwrap_err();
    assert!(e.contains("must name a family's folder"), "{e}");
}

#[test]
fn symbolic_defines_resolve_to_lab_h() {
    let v =
        parse("memory", "[[variant]]\nfile = \"memory_01_x.cu\"\nblock = [256]\ndefines = { OP = \"LAB_OP_TRIAD\", BLOCKS_PER_SM = 8 }\n")
            .unwrap();
    assert_eq!(v[0].defines["OP"], 3);
    assert_eq!(v[0].launch.params, Params::Stream { op: StreamOp::Triad });
    let e = parse("memory", "[[variant]]\nfile = \"memory_01_x.cu\"\nblock = [256]\ndefines = { OP = \"LAB_OP_SWAP\" }\n").unwrap_err();
    assert!(e.contains("LAB_OP_SWAP") && e.contains("not a constant of lab.h"), "{e}");
}

/// A manifest of three entries of `family`: two that keep its protocol (`good`, their defines
/// line), then `third`, which contradicts it.
fn third_entry(family: &str, good: &str, third: &str) -> String {
    let entry = |name: &str, rest: &str| {
        format!("[[variant]]\nfile = \"{family}_01_x.cu\"\nname = \"{family}_01_x{name}\"\nblock = [128]\n{rest}\n")
    };
    let text = [entry("", good), entry("_b", good), entry("_c", third)].join("\n");
    let e = parse(family, &text).unwrap_err();
    assert!(e.contains(&format!("{family}/variants.toml:13:")), "the message names the third entry's line: {e}");
    e
}

#[test]
fn defines_that_contradict_the_protocol_fail_with_the_line() {
    let gemm = "defines = { BM = 64, BN = 64 }";
    let e = third_entry("sgemm", gemm, "defines = { BM = 64 }");
    assert!(e.contains("needs the define BN"), "{e}");
    let e = third_entry("fp16", gemm, "defines = { BM = 64, BN = 64, TMA = 1, BK = 64 }");
    assert!(e.contains("TMA = 1 needs an sm_90"), "{e}");
    let e = third_entry("fp16", gemm, "arch = \"sm_90a\"\ndefines = { BM = 64, BN = 64, TMA = 2 }");
    assert!(e.contains("TMA = 2"), "{e}");
    let e = third_entry("reduce", "defines = { BLOCKS_PER_SM = 4 }", "defines = { SINGLE_PASS = 1 }");
    assert!(e.contains("needs BLOCKS_PER_SM"), "{e}");
    let e = third_entry("softmax", "defines = { ROWS_PER_BLOCK = 4 }", "defines = { PER_THREAD = 16 }");
    assert!(e.contains("needs the define ROWS_PER_BLOCK"), "{e}");
    let e = third_entry("layernorm", "defines = { ROWS_PER_BLOCK = 4 }", "defines = { ROWS_PER_BLOCK = 0 }");
    assert!(e.contains("ROWS_PER_BLOCK = 0 must be a positive"), "{e}");
    let peak = "defines = { PREC = \"LAB_FP32\", ITERS = 1, CHAINS = 1, OPS = 2, BLOCKS_PER_SM = 1 }";
    let e = third_entry("peak", peak, "defines = { PREC = \"LAB_FP32\", ITERS = 1, CHAINS = 1, OPS = 2 }");
    assert!(e.contains("BLOCKS_PER_SM"), "{e}");
    let e = third_entry("sgemm", gemm, "defines = { BM = 64, BN = 64, LAB_DYN_SMEM = 300000 }");
    assert!(e.contains("LAB_DYN_SMEM = 300000"), "{e}");
    let e = third_entry("sgemm", gemm, "defines = { BM = 64, BN = 64, CLUSTER_X = 2 }");
    assert!(e.contains("cluster needs an sm_90"), "{e}");
    let e = third_entry("sgemm", gemm, "arch = \"sm_90+\"\ndefines = { BM = 64, BN = 64, CLUSTER_X = 4, CLUSTER_Y = 4 }");
    assert!(e.contains("over the portable 8"), "{e}");
    assert!(parse("nofamily", "[[variant]]\nfile = \"nofamily_01_x.cu\"\nblock = [1]\n").unwrap_err().contains("no launch protocol"));
}

#[test]
fn stream_k_with_tma_needs_a_persistent_grid_without_a_cluster_and_the_kernels_own_choices_are_its_own() {
    let arch = kernel_lab::facts::arch::ArchReq::parse("sm_90a").unwrap();
    let launch = |defs: &[(&str, i64)]| {
        let hopper = [("BM", 128), ("BN", 256), ("TMA", 1), ("BK", 64), ("STAGES", 4), ("BLOCK_X", 384), ("LAB_DYN_SMEM", 231424)];
        let all = [&hopper[..], defs].concat();
        Launch::parse("fp16", &arch, &|n| all.iter().find(|(k, _)| *k == n).map(|p| p.1))
    };
    let e = launch(&[("STREAMK", 1)]).unwrap_err();
    assert!(e.contains("STREAMK = 1 with TMA = 1 needs PERSISTENT = 1"), "{e}");
    // Without TMA it is the sgemm protocol's one-tile-a-block stream-K: a grid of tiles.
    let plain =
        Launch::parse("fp16", &arch, &|n| [("BM", 128), ("BN", 256), ("STREAMK", 1)].iter().find(|(k, _)| *k == n).map(|p| p.1)).unwrap();
    assert!(matches!(plain.params, Params::Gemm { stream_k: true, tma_bk: None, .. }));
    let e = launch(&[("PERSISTENT", 1), ("STREAMK", 2)]).unwrap_err();
    assert!(e.contains("STREAMK = 2"), "{e}");
    // What ping-pong needs is the kernel's rule (hopper_config.cuh's static_assert), not restated here.
    assert!(launch(&[("PINGPONG", 1)]).is_ok());
    assert!(launch(&[("PINGPONG", 1), ("PERSISTENT", 1)]).is_ok());
    let both = launch(&[("PINGPONG", 1), ("PERSISTENT", 1), ("STREAMK", 1)]).unwrap();
    assert!(matches!(both.params, Params::Gemm { stream_k: true, .. }));
    let e = launch(&[("PERSISTENT", 1), ("STREAMK", 1), ("CLUSTER_Y", 2)]).unwrap_err();
    assert!(e.contains("STREAMK = 1 takes no cluster"), "{e}");
    assert!(launch(&[("CLUSTER_Y", 2)]).is_ok());
    let pair = launch(&[("PERSISTENT", 1), ("PINGPONG", 1), ("CLUSTER_Y", 2)]).unwrap();
    assert_eq!(
        pair.grid(4096, 4096, 0, 384, Fit { sms: 132, blocks_per_sm: 1, clusters: 66 }),
        (66, 2, 1),
        "a cluster of two on each pair of SMs that fits"
    );
    assert!(matches!(launch(&[("PERSISTENT", 1), ("STREAMK", 1)]).unwrap().params, Params::Gemm { stream_k: true, .. }));
}

#[test]
fn a_hopper_gemm_whose_shared_memory_plan_does_not_fit_fails_with_the_line() {
    // The build plans the ring and the C slices (hopper::Layout); no manifest restates them.
    let entry = |stages: i64| {
        format!("arch = \"sm_90a\"\ndefines = {{ BM = 128, BN = 192, BK = 64, STAGES = {stages}, PERSISTENT = 1, PINGPONG = 1, TMA = 1, LAB_DYN_SMEM = 231424 }}")
    };
    let text = |third: i64| {
        [4, 5, third]
            .iter()
            .enumerate()
            .map(|(i, s)| format!("[[variant]]\nfile = \"fp16_07_x.cu\"\nname = \"fp16_07_x{i}\"\nblock = [384]\n{}\n", entry(*s)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let ok = parse("fp16", &text(4)).unwrap();
    let Params::Gemm { layout: Some(l), .. } = ok[1].launch.params else { panic!("{:?}", ok[1].launch.params) };
    assert_eq!((l.ring_bytes, l.slice_bytes, l.c_bufs), (5 * 40960, 24576, 0), "five stages leave room for the rows path's slices only");
    let e = parse("fp16", &text(6)).unwrap_err();
    assert!(e.contains("fp16/variants.toml:15:") && e.contains("over LAB_DYN_SMEM = 231424"), "{e}");
}

#[test]
fn grids_follow_the_launch() {
    let arch = kernel_lab::facts::arch::ArchReq::parse("sm_90+").unwrap();
    let launch = |defs: &[(&str, i64)]| Launch::parse("sgemm", &arch, &|n| defs.iter().find(|(k, _)| *k == n).map(|p| p.1)).unwrap();
    let tiles = launch(&[("BM", 128), ("BN", 64)]);
    let fit = Fit { sms: 132, blocks_per_sm: 1, clusters: 0 };
    assert_eq!(tiles.grid, Grid::Tiles { x: 64, y: 128 });
    assert_eq!(tiles.grid(1000, 300, 0, 128, fit), (16, 3, 1), "ceil(cols / BN) x ceil(rows / BM)");
    let clustered = launch(&[("BM", 128), ("BN", 64), ("CLUSTER_X", 2)]);
    assert_eq!(clustered.grid(1000, 300, 0, 128, fit), (16, 3, 1));
    assert_eq!(clustered.grid(960, 300, 0, 128, fit), (16, 3, 1), "15 tiles round up to 8 clusters of 2");
}

#[test]
fn sgemm_pads_rows_and_splits_k_or_streams_k_only_when_asked() {
    let arch = kernel_lab::facts::arch::ArchReq::parse("sm_70+").unwrap();
    let launch = |defs: &[(&str, i64)]| {
        let all: Vec<(&str, i64)> = [("BM", 128), ("BN", 128)].into_iter().chain(defs.iter().copied()).collect();
        Launch::parse("sgemm", &arch, &|n| all.iter().find(|(k, _)| *k == n).map(|p| p.1))
    };
    let plain = launch(&[]).unwrap().params;
    assert!(matches!(plain, Params::Gemm { pad_rows: false, split_k: 1, .. }), "{plain:?}");
    let both = launch(&[("PAD_ROWS", 1), ("SPLIT_K", 3)]).unwrap().params;
    assert!(matches!(both, Params::Gemm { pad_rows: true, split_k: 3, .. }), "{both:?}");
    let e = launch(&[("SPLIT_K", 0)]).unwrap_err();
    assert!(e.contains("SPLIT_K = 0"), "{e}");
    let e = launch(&[("PAD_ROWS", 2)]).unwrap_err();
    assert!(e.contains("PAD_ROWS = 2"), "{e}");
    assert!(matches!(plain, Params::Gemm { stream_k: false, .. }), "{plain:?}");
    let streamed = launch(&[("STREAMK", 1), ("SPLIT_K", 1)]).unwrap().params;
    assert!(matches!(streamed, Params::Gemm { stream_k: true, split_k: 1, .. }), "{streamed:?}");
    let e = launch(&[("STREAMK", 1), ("SPLIT_K", 2)]).unwrap_err();
    assert!(e.contains("STREAMK = 1 takes SPLIT_K = 1"), "{e}");
}

#[test]
fn constraint_sets_are_shared_and_named() {
    let text = "[constraint_sets]\ntile = [\"BM % 16 == 0\", \"BN % 16 == 0\"]\n\n[[variant]]\nfile = \"sgemm_01_x.cu\"\nblock = [64]\ndefines = { BM = 32, BN = 64 }\nconstraint_sets = [\"tile\"]\nconstraints = [\"BM * BN <= 4096\"]\n";
    let v = parse("sgemm", text).unwrap();
    assert_eq!(v[0].constraints, ["BM % 16 == 0", "BN % 16 == 0", "BM * BN <= 4096"], "the set's, then the entry's own");
    let e = parse("sgemm", &text.replace("BM = 32", "BM = 24")).unwrap_err();
    assert!(e.contains("violates BM % 16 == 0"), "{e}");
    let e = parse("sgemm", &text.replace("[\"tile\"]", "[\"tiles\"]")).unwrap_err();
    assert!(e.contains("variants.toml:4:") && e.contains("no constraint set 'tiles'"), "{e}");
}

#[test]
fn a_launch_takes_only_the_struct_its_familys_protocol_names() {
    use kernel_lab::gpu::device::abi_check;
    use kernel_lab::gpu::ffi::{lab_gemm_f32_args, lab_gemm_tc_args, lab_gemm_tma_args, lab_layernorm_args, lab_layernorm_bwd_args, Abi};
    let arch = kernel_lab::facts::arch::ArchReq::parse("sm_90a").unwrap();
    let launch =
        |family: &str, defs: &[(&str, i64)]| Launch::parse(family, &arch, &|n| defs.iter().find(|(k, _)| *k == n).map(|p| p.1)).unwrap();
    let rows = launch("layernorm_bwd", &[("ROWS_PER_BLOCK", 2), ("BLOCKS_PER_SM", 4)]);
    assert!(abi_check("layernorm_bwd_02_fused", "layernorm_bwd", &rows, lab_layernorm_bwd_args::NAME).is_ok());
    // The forward's struct, which the backward kernel does not take: refused, saying which it takes.
    let e = abi_check("layernorm_bwd_02_fused", "layernorm_bwd", &rows, lab_layernorm_args::NAME).unwrap_err().to_string();
    assert!(e.contains("takes lab_layernorm_bwd_args, not lab_layernorm_args"), "{e}");
    // A Tensor Core family's struct follows its launch: the tensor-map path, stream-K on the
    // sgemm protocol's args, else the plain Tensor Core GEMM's.
    let tma =
        launch("fp16", &[("BM", 128), ("BN", 256), ("TMA", 1), ("BK", 64), ("STAGES", 4), ("BLOCK_X", 384), ("LAB_DYN_SMEM", 231424)]);
    let stream_k = launch("fp16", &[("BM", 128), ("BN", 128), ("STREAMK", 1)]);
    let plain = launch("fp16", &[("BM", 128), ("BN", 128)]);
    for (l, name) in [(&tma, lab_gemm_tma_args::NAME), (&stream_k, lab_gemm_f32_args::NAME), (&plain, lab_gemm_tc_args::NAME)] {
        assert!(abi_check("fp16_x", "fp16", l, name).is_ok(), "{name}");
    }
    assert!(abi_check("fp16_x", "fp16", &plain, lab_gemm_tma_args::NAME).is_err());
    assert!(abi_check("fp16_x", "fp16", &tma, lab_gemm_tc_args::NAME).is_err());
}
