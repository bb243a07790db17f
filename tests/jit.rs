//! Run-time compilation (NVRTC) and the tuner's search space. Needs no GPU: NVRTC comes with the
//! toolkit `cargo make setup` installs.

use kernel_lab::facts::expr;
use kernel_lab::facts::family::{FamilyId, Protocol};
use kernel_lab::gpu::{jit, registry};
use kernel_lab::measure::tune;

fn nvrtc() {
    assert!(jit::available(), "NVRTC not found: `cargo make setup` installs it into .toolkit/");
}

#[test]
fn every_variant_compiles_with_nvrtc_in_its_manifest_configuration() {
    nvrtc();
    for v in registry::all().unwrap() {
        for sm in [80, 90].into_iter().filter(|&sm| v.admits(sm)) {
            let ptx = jit::compile(v, &v.config(), sm).unwrap_or_else(|e| panic!("{} for sm_{sm}: {e}", v.name));
            assert!(ptx.to_src().contains(&v.symbol), "{}: the entry is in the PTX", v.name);
        }
    }
}

#[test]
fn a_configuration_that_breaks_a_static_assert_is_rejected_by_the_compiler() {
    nvrtc();
    let v = registry::by_name("sgemm_08_double_buffered").unwrap();
    let bad = v.config().with("BLOCK_X", 64);
    let e = jit::compile(v, &bad, 90).unwrap_err().to_string();
    assert!(e.contains("error"), "{e}");
}

#[test]
fn the_hash_follows_configuration_and_target() {
    nvrtc();
    let v = registry::by_name("sgemm_08_double_buffered").unwrap();
    let c = v.config();
    assert_eq!(jit::hash(v, &c, 90).unwrap(), jit::hash(v, &c, 90).unwrap());
    assert_ne!(jit::hash(v, &c, 90).unwrap(), jit::hash(v, &c.with("BK", 16), 90).unwrap());
    assert_ne!(jit::hash(v, &c, 90).unwrap(), jit::hash(v, &c, 89).unwrap());
}

#[test]
fn code_drops_comments_and_blank_runs_but_not_literals_or_lines() {
    let text = "#define A 1 // one\n\n  int   x = 2; /* two\nlines */ int y;\n\tasm(\"a // b\"); char c = '/';\n#define B \"/*\"\n";
    assert_eq!(jit::code(text), "#define A 1\nint x = 2;\nint y;\nasm(\"a // b\"); char c = '/';\n#define B \"/*\"\n");
}

#[test]
fn a_comment_edit_keeps_a_tuning_current_and_a_code_edit_does_not() {
    nvrtc();
    let v = registry::by_name("sgemm_08_double_buffered").unwrap();
    let c = v.config();
    let mut commented = v.clone();
    commented.source = format!("// a new comment\n{}", v.source);
    let mut edited = v.clone();
    edited.source = format!("{}\n__device__ int lab_extra;\n", v.source);
    let now = jit::hash(v, &c, 90).unwrap();
    assert_eq!(jit::hash(&commented, &c, 90).unwrap(), now, "comments are not code");
    assert!(jit::current(&now, &commented, &c, 90).unwrap());
    assert!(!jit::current(&now, &edited, &c, 90).unwrap());
    assert!(!jit::current("0123456789abcdef", v, &c, 90).unwrap(), "any other stored hash is stale");
}

#[test]
fn the_hash_covers_the_headers_a_kernel_includes_and_no_others() {
    let set = registry::set().unwrap();
    let v = registry::by_name("sgemm_09_l2_swizzle").unwrap();
    let inc: Vec<&str> = jit::included(&v.source, &set.headers).iter().map(|(n, _)| n.as_str()).collect();
    for h in ["sgemm_double_buffer.cuh", "sgemm_tiles.cuh", "lab_device.cuh"] {
        assert!(inc.contains(&h), "{h} in {inc:?}");
    }
    assert!(!inc.contains(&"wgmma_gemm.cuh"), "{inc:?}");
}

#[test]
fn the_space_starts_with_the_manifest_and_constraints_prune_it() {
    let h100 = Some(90);
    for v in registry::all().unwrap().iter().filter(|v| !v.tune.is_empty()) {
        let space = tune::space(v, &[]);
        assert_eq!(space[0], v.config(), "{}", v.name);
        let product: usize = v.tune.iter().map(|(_, vals)| vals.len()).product();
        assert!(space.len() <= product + 1, "{}", v.name);
        assert!(tune::prefilter(v, &space[0], h100).is_ok(), "{}: the manifest's own config passes", v.name);
        let kept = space.iter().filter(|c| tune::prefilter(v, c, h100).is_ok()).count();
        assert!(kept > 1, "{}: {kept} of {}", v.name, space.len());
        // The sgemm tile constraints are not vacuous: they prune at least half of each product
        // (three quarters of the wide ones; a line searching a narrow corner keeps more).
        if v.family == "sgemm" {
            assert!(kept * 2 < space.len(), "{}: the constraints prune most of the product ({kept} of {})", v.name, space.len());
        }
        eprintln!("{}: {kept} of {} configurations pass the constraints", v.name, space.len());
    }
}

#[test]
fn only_narrows_a_tune_list_and_fixes_an_untuned_define() {
    let v = registry::by_name("sgemm_13_k_major_split_k").unwrap();
    let only = vec![("BN".to_string(), vec![256]), ("SPLIT_K".to_string(), vec![4]), ("LAB_DYN_SMEM".to_string(), vec![98304])];
    let space = tune::space(v, &only);
    assert_eq!(space[0], v.config(), "the manifest's configuration stays the reference point");
    assert!(space.len() > 2);
    for c in &space[1..] {
        assert_eq!((c.value("BN"), c.value("SPLIT_K"), c.value("LAB_DYN_SMEM")), (Some(256), Some(4), Some(98304)), "{}", c.label());
    }
    let full = tune::space(v, &[]);
    assert!(space.len() < full.len() / 4, "{} of {}", space.len(), full.len());
}

#[test]
fn a_search_on_one_gpu_takes_that_gpus_shared_memory() {
    // fp16_04 is sm_80+: its build keeps to the 99 KB an sm_86 block may have; a search on an
    // H100 or H200 (sm_90, 227 KB) may give it a deeper ring.
    let v = registry::by_name("fp16_04_mma_ldmatrix").unwrap();
    let deep = v.config().with("LAB_DYN_SMEM", 196608).with("WN", 64).with("STAGES", 4).with("BM", 128).with("BN", 256).with("BK", 64);
    assert!(tune::prefilter(v, &deep, None).is_err(), "every admitted architecture's limit");
    assert!(tune::prefilter(v, &deep, Some(86)).is_err(), "an sm_86 block may have 99 KB");
    assert!(tune::prefilter(v, &deep, Some(90)).map_err(|e| e.to_string()).is_ok(), "an sm_90 block may have 227 KB");
}

#[test]
fn a_search_tries_the_earlier_pick_second() {
    let v = registry::by_name("sgemm_08_double_buffered").unwrap();
    let kept: Vec<_> = tune::space(v, &[]).into_iter().filter(|c| tune::prefilter(v, c, Some(90)).is_ok()).collect();
    let earlier = kept[kept.len() / 2].clone();
    let ordered = tune::order(kept.clone(), 7, Some(&earlier));
    assert_eq!(ordered[0], v.config(), "the manifest's configuration first");
    assert_eq!(ordered[1], earlier);
    assert_eq!(ordered.len(), kept.len());
    let plain = tune::order(kept.clone(), 7, None);
    assert_eq!(plain[0], v.config());
    assert_ne!(plain[1..10], kept[1..10], "the rest in a seeded random order");
    assert_eq!(tune::order(kept, 7, Some(&v.config()))[1], plain[1], "the manifest's pick is not moved");
}

#[test]
fn every_kept_sgemm_configuration_compiles() {
    nvrtc();
    let v = registry::by_name("sgemm_08_double_buffered").unwrap();
    let kept: Vec<_> = tune::space(v, &[]).into_iter().filter(|c| tune::prefilter(v, c, Some(90)).is_ok()).collect();
    // About 40 of them, an odd stride apart so every constant's values come up.
    for c in kept.iter().step_by((kept.len() / 40) | 1) {
        jit::compile(v, c, 90).unwrap_or_else(|e| panic!("{} passes the constraints but not the compiler: {e}", c.label()));
    }
}

#[test]
fn expressions() {
    let vars = |n: &str| match n {
        "BM" => Some(128),
        "WM" => Some(64),
        _ => None,
    };
    assert_eq!(expr::eval("(BM / WM) * 32 + 1", &vars), Ok(65));
    assert_eq!(expr::eval("BM % WM == 0 && BM >= 2 * WM", &vars), Ok(1));
    assert_eq!(expr::eval("!(BM < WM) || 0", &vars), Ok(1));
    assert_eq!(expr::eval("-3 + 10 % 4 * 2", &vars), Ok(1));
    assert!(expr::eval("BM / (WM - 64)", &vars).unwrap_err().contains("division by zero"));
    assert!(expr::eval("BQ + 1", &vars).unwrap_err().contains("'BQ'"));
    assert!(expr::eval("(BM", &vars).unwrap_err().contains("')'"));
    assert!(expr::eval("BM WM", &vars).unwrap_err().contains("unexpected"));
    assert!(expr::eval("BM $ 2", &vars).unwrap_err().contains("unexpected '$'"));
    assert!(expr::check_all(&["BM > WM", "BM < WM"], &vars).unwrap_err().contains("violates BM < WM"));
}

#[test]
fn a_kernel_includes_its_own_familys_arguments_and_no_other_familys() {
    // A tuning is keyed by the text of every header its kernel includes: were a kernel to include
    // lab.h (every family's structs), adding a field for one family would make every tuning stale.
    let set = registry::set().unwrap();
    for v in registry::all().unwrap() {
        let abi: Vec<&str> = jit::included(&v.source, &set.headers)
            .iter()
            .map(|(name, _)| name.as_str())
            .filter(|n| n.starts_with("lab") && n.ends_with(".h") && *n != "lab_base.h")
            .collect();
        let protocol = FamilyId::parse(&v.family).expect("a built variant's family is known").protocol();
        let gemm = matches!(protocol, Protocol::Sgemm | Protocol::TensorCore);
        // A family in fp16 or bf16 storage takes its fp32 family's arguments (softmax_fp16: softmax's).
        let base = v.family.trim_end_matches("_fp16").trim_end_matches("_bf16");
        let own = if gemm { "lab_gemm.h".to_string() } else { format!("lab_{base}.h") };
        assert_eq!(abi, [own.as_str()], "{}: the argument headers it includes", v.name);
    }
}
