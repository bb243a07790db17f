//! The kernel set the build wrote, and the families' sizes, work and references.

use kernel_lab::facts::launch::{Grid, Params};
use kernel_lab::gpu::registry::{self, VariantSpec};
use kernel_lab::measure::families::conv_shape::ConvShape;
use kernel_lab::measure::families::inputs::{random_f32, seed_for};
use kernel_lab::measure::families::{self, can_implement, gemm_reference::full_product, Family, Shape, Shapes};

fn all() -> &'static [VariantSpec] {
    registry::all().expect("`cargo build` writes the kernel set")
}

fn fam(name: &str) -> &'static dyn Family {
    families::get(name).unwrap()
}

#[test]
fn every_variant_is_built_with_resources_and_a_hash() {
    assert!(!all().is_empty());
    for v in all() {
        let fatbin = registry::fatbin(v).unwrap_or_else(|e| panic!("{}: {e}", v.name));
        assert!(!fatbin.is_empty(), "{} has an empty fatbin", v.name);
        assert_eq!(v.source_hash.len(), 16, "{}", v.name);
        assert!(!v.summary.is_empty(), "{}: the kernel file must open with a Technique: line", v.name);
        for t in v.targets.iter().filter(|t| !t.ptx) {
            assert!(v.resources.iter().any(|(r, _)| *r == t.name()), "{}: no ptxas report for {}", v.name, t.name());
        }
        assert!(families::get(&v.family).is_some(), "{}: no Rust family", v.name);
        let family = kernel_lab::facts::family::FamilyId::parse(&v.family).unwrap();
        assert_eq!(v.args, kernel_lab::facts::launch::abi(family, &v.launch), "{}: the struct the set records is its launch's", v.name);
        assert!(!v.test_only, "{}: the lab's own set has no test-only variant", v.name);
    }
    assert!(registry::set().unwrap().archs.iter().any(|a| a == "sm_90"));
}

#[test]
fn names_are_unique_and_rungs_ordered() {
    let mut names: Vec<&str> = all().iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all().len());
    for f in registry::families().unwrap() {
        let rungs: Vec<u32> = all().iter().filter(|v| v.family == f).map(|v| v.rung).collect();
        assert!(rungs.windows(2).all(|w| w[0] <= w[1]), "{f}: {rungs:?}");
    }
}

#[test]
fn every_define_the_build_derives_is_one_the_tuning_hash_knows() {
    // jit::hash takes the generated defines only where a kernel names one of launch::GENERATED: a
    // derived define missing from that list would change code without staling its tunings.
    use kernel_lab::facts::{family::FamilyId, launch};
    for v in all() {
        let family = FamilyId::parse(&v.family).unwrap();
        for d in launch::generated_defines(family, &v.launch) {
            let name = d.trim_start_matches("-D").split('=').next().unwrap().to_string();
            assert!(launch::GENERATED.contains(&name.as_str()), "{}: {name} is not in launch::GENERATED", v.name);
        }
    }
}

#[test]
fn launches_are_typed_from_the_manifest() {
    let sgemm = registry::by_name("sgemm_08_double_buffered").unwrap();
    assert_eq!(sgemm.launch.grid, Grid::Tiles { x: 128, y: 128 });
    let tma = registry::by_name("fp16_05_wgmma_tma").unwrap();
    let Params::Gemm { tma_bk: Some(64), tile: (128, 256), stream_k: false, pad_rows: false, split_k: 1, layout: Some(one_tile) } =
        tma.launch.params
    else {
        panic!("{:?}", tma.launch.params)
    };
    let sk = registry::by_name("fp16_06_stream_k").unwrap();
    let Params::Gemm { tma_bk: Some(64), tile: (128, 256), stream_k: true, pad_rows: false, split_k: 1, layout: Some(persistent) } =
        sk.launch.params
    else {
        panic!("{:?}", sk.launch.params)
    };
    // The build's shared-memory plan: one tile a block stages C in its ring, a persistent block in
    // slices past it; the SIMT GEMM has none.
    assert_eq!((one_tile.slice_bytes, persistent.slice_bytes > 0), (0, true));
    assert!(matches!(sgemm.launch.params, Params::Gemm { layout: None, .. }));
    assert_eq!(tma.launch.dyn_smem_bytes, 231424, "LAB_DYN_SMEM is the launch's dynamic shared memory");
    let peak = registry::by_name("peak_01_simt_fma_fp32").unwrap();
    assert!(
        matches!(peak.launch.params, Params::Peak { prec: 2, iters: 1025, chains: 8, ops: 64, .. }),
        "PREC = \"LAB_FP32\" is lab.h's 2"
    );
    assert!(matches!(peak.launch.grid, Grid::PerSm { blocks_per_sm: 4, resident: true }));
    let blocked = registry::by_name("memory_04_stream_blocked_copy").unwrap();
    assert_eq!(blocked.launch.grid, Grid::Elements { per_thread: 16 }, "UNROLL x VEC");
}

#[test]
fn only_grids_whose_blocks_wait_for_each_other_launch_cooperatively() {
    // A cooperative launch costs microseconds: the grid barrier and persistent stream-K pay it,
    // resident grids whose blocks never wait (the l2 sweep, the peak loops, persistent tiles
    // without stream-K) do not.
    let waits = |name: &str| registry::by_name(name).unwrap().launch.blocks_wait_for_each_other();
    for name in [
        "layernorm_bwd_01_two_pass",
        "layernorm_bwd_02_fused",
        "fp16_06_stream_k",
        "fp16_08_pingpong_stream_k",
        "bf16_08_pingpong_stream_k",
        "fp16_04_mma_ldmatrix_persistent",
    ] {
        assert!(waits(name), "{name}'s blocks wait for each other");
    }
    for name in [
        "l2_01_working_set",
        "peak_01_simt_fma_fp32",
        "fp16_05_wgmma_tma",
        "fp16_07_pingpong",
        "sgemm_13_k_major_stream_k",
        "memory_05_bulk_copy",
    ] {
        assert!(!waits(name), "{name} launches plainly");
    }
    let cooperative: Vec<&str> = all().iter().filter(|v| v.launch.blocks_wait_for_each_other()).map(|v| v.name.as_str()).collect();
    assert!(
        cooperative.iter().all(|n| n.starts_with("layernorm_bwd") || n.contains("stream_k") || n.contains("persistent")),
        "{cooperative:?}"
    );
}

#[test]
fn filters_select_family_variant_or_substring() {
    assert_eq!(registry::select(None).unwrap().len(), all().len());
    assert!(registry::select(Some("sgemm")).unwrap().iter().all(|v| v.family == "sgemm"));
    assert_eq!(registry::select(Some("sgemm_01_naive")).unwrap().len(), 1);
    let whole = registry::select(Some("sgemm_08_double_buffered")).unwrap();
    assert_eq!(whole.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["sgemm_08_double_buffered"], "a whole name picks one");
    assert!(registry::select(Some("sgemm_08")).unwrap().len() >= 2, "part of names picks every match");
    assert!(registry::select(Some("copy")).unwrap().iter().all(|v| v.family == "memory"));
    let e = registry::select(Some("nope")).unwrap_err().to_string();
    assert!(e.contains("no family or variant matches 'nope'") && e.contains("sgemm"), "{e}");
    // Comma-separated terms: their union, each term by the rules above, in the registry's order.
    let union: Vec<_> =
        registry::select(Some("sgemm_08_double_buffered,reduce,sgemm_01_naive")).unwrap().iter().map(|v| v.name.as_str()).collect();
    let want: Vec<_> = all()
        .iter()
        .filter(|v| v.family == "reduce" || ["sgemm_01_naive", "sgemm_08_double_buffered"].contains(&v.name.as_str()))
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(union, want);
    assert_eq!(
        registry::select(Some("sgemm_01_naive,sgemm_01")).unwrap().len(),
        registry::select(Some("sgemm_01")).unwrap().len(),
        "no variant twice"
    );
    let e = registry::select(Some("sgemm_01_naive,nope")).unwrap_err().to_string();
    assert!(e.contains("matches 'nope'"), "{e}");
    assert!(registry::select(Some("sgemm,")).is_err(), "an empty term matches nothing");
    assert!(registry::family("nope").is_err());
}

#[test]
fn gpu_without_a_target_is_skipped_with_a_reason() {
    let v = registry::by_name("sgemm_01_naive").unwrap();
    assert!(v.runnable_on(90).is_ok());
    assert!(v.runnable_on(89).is_ok());
    let why = v.runnable_on(61).unwrap_err();
    assert!(why.contains("sm_61"), "{why}");
}

#[test]
fn sizes_parse_or_explain() {
    let sgemm = fam("sgemm").info().shapes;
    assert_eq!(sgemm.parse("1000").unwrap(), Shape(vec![1000, 1000, 1000]));
    assert_eq!(sgemm.parse("16384x768x3072").unwrap(), Shape(vec![16384, 768, 3072]));
    for (bad, want) in [
        ("0", "greater than 0"),
        ("abc", "not a positive whole number"),
        ("-5", "not a positive"),
        ("4x4", "neither"),
        ("70000", "elements"),
        ("20000000x1x1", "limit"),
        ("1x0x1", "greater than 0"),
    ] {
        let e = sgemm.parse(bad).unwrap_err();
        assert!(e.contains(want), "{bad}: {e}");
    }
    let mem = fam("memory").info().shapes;
    assert_eq!(mem.parse("256M").unwrap(), Shape(vec![256 << 20]));
    assert_eq!(mem.parse("1G").unwrap(), Shape(vec![1 << 30]));
    assert!(mem.parse("6").unwrap_err().contains("4-byte"));
    assert!(mem.parse("99999999999999999999G").is_err());
    assert_eq!(mem.label(&Shape(vec![(1 << 30) + 12])), "1024 MiB+12 B");
}

#[test]
fn default_sizes_include_shapes_off_the_tile() {
    let sgemm = fam("sgemm");
    for quick in [false, true] {
        let s = sgemm.default_sizes(quick);
        assert!(s.iter().any(|x| x.0[0] % 8 != 0), "odd size in {s:?}");
    }
    assert!(sgemm.default_sizes(false).contains(&Shape(vec![8192, 8192, 8192])));
    let mem = fam("memory");
    assert!(mem.default_sizes(false).iter().any(|s| s.0[0] % 16 != 0), "a tail that is not a whole vector");
    assert!(mem.default_sizes(false).iter().all(|s| s.0[0] >= 256 << 20), "well above any L2");
}

#[test]
fn declared_work_and_rates() {
    let sgemm = fam("sgemm");
    let w = sgemm.work(&Shape(vec![2, 3, 4]), None);
    assert_eq!((w.flops, w.bytes_read, w.bytes_written), (48.0, 4.0 * (8.0 + 12.0), 24.0));
    assert!((w.rate(sgemm.info().unit, 1e-3) - 48.0 / 1e-6 / 1e12).abs() < 1e-12);
    let mem = fam("memory");
    let w = mem.work(&Shape(vec![1 << 30]), None);
    assert!((w.rate(mem.info().unit, 1.0) - 2.0 * (1u64 << 30) as f64 / 1e-3 / 1e9).abs() < 1e-6, "read + written");
    let triad = registry::by_name("memory_03_stream_vec4_triad").unwrap();
    let w = mem.work(&Shape(vec![1 << 30]), Some(&triad.launch));
    assert_eq!((w.bytes_read, w.bytes_written), (2.0 * (1u64 << 30) as f64, (1u64 << 30) as f64), "triad reads b and c");
}

#[test]
fn families_in_16_bit_storage_build_their_fp32_familys_rungs_and_move_half_the_bytes() {
    use kernel_lab::facts::family::{FamilyId, Storage};
    use kernel_lab::facts::launch::generated_defines;
    let stored = [
        (FamilyId::SoftmaxFp16, "softmax", Storage::Fp16),
        (FamilyId::SoftmaxBf16, "softmax", Storage::Bf16),
        (FamilyId::LayerNormFp16, "layernorm", Storage::Fp16),
        (FamilyId::LayerNormBf16, "layernorm", Storage::Bf16),
    ];
    for (id, base, storage) in stored {
        assert_eq!(id.storage(), storage);
        let variants: Vec<&VariantSpec> = all().iter().filter(|v| v.family == id.name()).collect();
        assert!(!variants.is_empty(), "{} has rungs", id.name());
        for v in variants {
            assert!(v.file.starts_with(&format!("{base}/")), "{}: built from {base}'s file, not {}", v.name, v.file);
            let twin = registry::by_name(&v.symbol).unwrap_or_else(|e| panic!("{}: no fp32 rung {}: {e}", v.name, v.symbol));
            assert_eq!((twin.file.as_str(), twin.launch), (v.file.as_str(), v.launch), "{}: the fp32 rung's file and launch", v.name);
            let defines = generated_defines(id, &v.launch);
            assert!(defines.contains(&format!("-DLAB_ELEM={}", storage.c_type())), "{}: {defines:?}", v.name);
            let shape = Shape(vec![1000, 512]);
            let (half, full) = (fam(id.name()).work(&shape, Some(&v.launch)), fam(base).work(&shape, Some(&twin.launch)));
            assert_eq!((2.0 * half.bytes_read, 2.0 * half.bytes_written), (full.bytes_read, full.bytes_written), "{}", v.name);
        }
    }
    let fp32 = registry::by_name("softmax_06_registers").unwrap();
    assert_eq!(generated_defines(FamilyId::Softmax, &fp32.launch), ["-DLAB_ARGS=lab_softmax_args"], "fp32 families get no LAB_ELEM");
}

#[test]
fn multiple_of_declarations_are_enforced() {
    let sgemm = fam("sgemm");
    let vec4 = registry::by_name("sgemm_06_vectorized").unwrap();
    assert!(can_implement(sgemm, vec4, &vec4.launch, &Shape(vec![1000, 1000, 1000])).is_ok());
    assert!(can_implement(sgemm, vec4, &vec4.launch, &Shape(vec![1023, 1023, 1023])).unwrap_err().contains("% 4"));
    let coalesced = registry::by_name("sgemm_02_coalesced").unwrap();
    let tall = Shape(vec![802816, 64, 576]);
    assert!(can_implement(sgemm, coalesced, &coalesced.launch, &tall).unwrap_err().contains("65535"));
    assert!(can_implement(sgemm, vec4, &vec4.launch, &tall).is_ok());
    assert!(families::can_run(vec4, &vec4.config(), &tall, 90).is_ok(), "the one decision agrees");
    assert!(families::can_run(vec4, &vec4.config(), &tall, 61).unwrap_err().contains("sm_61"));
    // The any-shape rungs declare nothing; rung 10's 16-byte copies still do.
    let odd = Shape(vec![1023, 4097, 3]);
    for name in ["sgemm_07_warptiling", "sgemm_08_double_buffered", "sgemm_09_l2_swizzle", "sgemm_11_register_prefetch"] {
        let v = registry::by_name(name).unwrap();
        assert!(v.multiple_of.is_empty() && can_implement(sgemm, v, &v.launch, &odd).is_ok(), "{name}");
    }
    let cp = registry::by_name("sgemm_10_cp_async").unwrap();
    assert!(can_implement(sgemm, cp, &cp.launch, &odd).unwrap_err().contains("% 4"));
}

#[test]
fn reference_product_matches_a_plain_triple_loop() {
    let (m, n, k) = (5, 7, 3);
    let a = random_f32(m * k, 1);
    let b = random_f32(k * n, 2);
    assert!(a.iter().all(|x| (-1.0..1.0).contains(x)) && a.iter().any(|x| *x != 0.0));
    let c = full_product(&a, &b, m, n, k);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k).map(|p| a[i * k + p] as f64 * b[p * n + j] as f64).sum();
            assert!((c[i * n + j] - want).abs() < 1e-12);
        }
    }
    assert_ne!(random_f32(8, 1), random_f32(8, 3), "seeds give fresh inputs");
    let s = Shape(vec![4, 4, 4]);
    assert_ne!(seed_for(1, "sgemm", &s), seed_for(2, "sgemm", &s));
}

#[test]
fn l2_knee_is_the_midpoint_crossing() {
    use kernel_lab::measure::families::l2::{checksum, knee, passes};
    let mib = (1u64 << 20) as f64;
    // The 1 MiB set cannot fill the GPU and 40 MiB aliases: both dip below the midpoint inside
    // the plateau, and neither is the knee.
    let pts: Vec<(f64, f64)> =
        [(1.0, 2000.0), (8.0, 10000.0), (32.0, 9800.0), (40.0, 6500.0), (48.0, 9000.0), (64.0, 5000.0), (256.0, 4000.0)]
            .iter()
            .map(|&(m, r)| (m * mib, r))
            .collect();
    let k = knee(&pts).unwrap() / mib;
    assert!((k - (48.0 + 16.0 * 2000.0 / 4000.0)).abs() < 1e-9, "{k}");
    assert!(knee(&pts[..2]).is_none(), "no drop, no knee");
    assert!(knee(&[(mib, 5000.0), (2.0 * mib, 5000.0)]).is_none(), "flat, no knee");
    assert_eq!(passes(1 << 20), 4096);
    assert_eq!(passes(1 << 30), 4);
    assert_eq!(passes(1 << 40), 2);
    assert_eq!(checksum(&[u32::MAX, 2], 3), 3, "wrapping sums, times the passes");
}

#[test]
fn pcie_rates_per_generation() {
    use kernel_lab::schema::transfers::Pcie;
    let link = |g, w| Pcie { gen_current: g, gen_max: g, width_current: w, width_max: w };
    assert!((link(5, 16).theoretical_gbs().unwrap() - 63.0).abs() < 0.1);
    assert!((link(4, 16).theoretical_gbs().unwrap() - 31.5).abs() < 0.1);
    assert!((link(3, 8).theoretical_gbs().unwrap() - 7.88).abs() < 0.01);
    assert!(link(9, 16).theoretical_gbs().is_none());
}

#[test]
fn every_family_has_sizes_work_and_a_manifest() {
    for f in families::all() {
        let name = f.info().name();
        assert!(!f.default_sizes(false).is_empty() && !f.default_sizes(true).is_empty(), "{name}");
        assert!(registry::families().unwrap().contains(&name), "{name} has no manifest");
        assert!(kernel_lab::facts::family::FamilyId::parse(name).is_some(), "{name} has no row in the family table");
        for s in f.default_sizes(false) {
            if f.info().baseline.is_some() {
                assert!(f.work(&s, None).bytes_read > 0.0, "{name} {s}: the baseline reads");
            }
            for v in all().iter().filter(|v| v.family == name) {
                let w = f.work(&s, Some(&v.launch));
                assert!(w.flops + w.bytes_read + w.bytes_written > 0.0, "{} {s}: no declared work", v.name);
            }
        }
    }
    // The workload suites in every GEMM precision: the Tensor Core families run sgemm's shapes.
    let suite = |f: &str, n: &str| fam(f).suites().into_iter().find(|s| s.name == n).map(|s| s.shapes);
    for f in ["fp16", "bf16", "tf32", "int8", "fp8"] {
        for n in ["bert", "resnet"] {
            assert!(suite(f, n).is_some() && suite(f, n) == suite("sgemm", n), "{f} {n}");
        }
    }
    let t = fam("transpose").info().shapes;
    assert_eq!(t.parse("16383x16385").unwrap(), Shape(vec![16383, 16385]));
    assert!(t.parse("70000x70000").unwrap_err().contains("2^31"));
    let v = registry::by_name("reduce_05_single_pass").unwrap();
    assert_eq!(fam("reduce").work(&Shape(vec![1 << 30]), Some(&v.launch)).bytes_written, 0.0, "a reduction's bytes are reads");
}

#[test]
fn tma_pitches_keep_rows_on_the_sector_grid() {
    use kernel_lab::measure::families::tensor::tma::fast_pitch;
    assert_eq!(fast_pitch(4096, 2, false), 4096);
    assert_eq!(fast_pitch(4112, 2, false), 4112, "8224-byte rows are whole sectors: no copy");
    assert_eq!(fast_pitch(4104, 2, false), 4160, "16-byte-aligned is not enough");
    assert_eq!(fast_pitch(4097, 2, false), 4160);
    assert_eq!(fast_pitch(4111, 2, false), 4160);
    assert_eq!(fast_pitch(1003, 4, false), 1024);
    assert_eq!(fast_pitch(4097, 1, false), 4224, "fp8 and int8: 128-byte rows");
    assert_eq!(fast_pitch(3003, 4, false), 3008, "tf32: 12032-byte rows, whole sectors after 128-byte padding");
    assert_eq!(fast_pitch(4104, 2, true), 4104, "a pair reads 16-byte-aligned rows in place");
    assert_eq!(fast_pitch(4097, 2, true), 4160, "rows off the 16-byte grid are copied for a pair too");
}

#[test]
fn every_tensor_core_precision_has_the_wgmma_rung() {
    // Every precision's rung composes its kernel from the same parts (csrc/include/hopper_*.cuh)
    // over its type's MMA traits: each names lab.h's precision, and every stage row is 128 bytes
    // (BK elements of the type).
    use kernel_lab::gpu::ffi::{LAB_BF16_F32ACC, LAB_FP16_F32ACC, LAB_FP8_F32ACC, LAB_INT8, LAB_TF32};
    for (family, prec, elem) in [
        ("fp16", LAB_FP16_F32ACC, 2),
        ("bf16", LAB_BF16_F32ACC, 2),
        ("tf32", LAB_TF32, 4),
        ("int8", LAB_INT8, 1),
        ("fp8", LAB_FP8_F32ACC, 1),
        ("fp8_e5m2", LAB_FP8_F32ACC, 1),
    ] {
        let rung = all().iter().find(|v| v.family == family && v.file.ends_with("_wgmma_tma.cu")).unwrap_or_else(|| panic!("{family}"));
        let Params::Gemm { tma_bk: Some(bk), .. } = rung.launch.params else { panic!("{}: not a TMA launch", rung.name) };
        assert_eq!(bk * elem, 128, "{}", rung.name);
        assert!(rung.defines.iter().any(|(k, v)| k == "PREC" && *v == prec as i64), "{}", rung.name);
        assert_eq!(rung.arch.describe(), "sm_90a", "{}", rung.name);
    }
}

#[test]
fn fp8_inputs_are_exact_e4m3_values() {
    use kernel_lab::measure::families::tensor::kinds::{Fp8, Kind};
    let (bits, exact) = Fp8::draw(4096, 5);
    assert!(exact.iter().any(|&x| x != 0.0) && exact.iter().all(|x| x.abs() <= 1.0));
    for (b, x) in bits.iter().zip(&exact) {
        assert_eq!(float8::F8E4M3::from_f32(*x).to_bits(), *b, "{x} is representable, and is what the GPU reads");
    }
}

#[test]
fn fp8_e5m2_draws_a_in_e5m2_and_b_in_e4m3() {
    use kernel_lab::measure::families::tensor::kinds::{Fp8, Fp8E5m2, Kind};
    let (bits, exact) = Fp8E5m2::draw_a(4096, 5);
    assert!(exact.iter().any(|&x| x != 0.0) && exact.iter().all(|x| x.abs() <= 1.0));
    for (b, x) in bits.iter().zip(&exact) {
        assert_eq!(float8::F8E5M2::from_f32(*x).to_bits(), *b, "{x} is an e5m2 value, and is what the GPU reads");
    }
    // e5m2 keeps 2 mantissa bits, so some of A's values are not B's e4m3 values of the same draw.
    assert_ne!(exact, Fp8::draw(4096, 5).1);
    assert_eq!(Fp8E5m2::draw(4096, 5).0, Fp8::draw(4096, 5).0, "B is fp8's e4m3");
}

#[test]
fn fuzz_adds_random_shapes_to_the_sizes_asked_for() {
    use kernel_lab::measure::plan::{plan, Options};
    let opts = |sizes: &[&str]| Options {
        filter: Some("sgemm_13_k_major".into()),
        sizes: sizes.iter().map(|s| s.to_string()).collect(),
        fuzz: Some(5),
        ..Options::default()
    };
    let plans = plan(&opts(&["4097", "3x5000x7"]), 11).unwrap();
    let shapes = &plans[0].shapes;
    assert_eq!(shapes.len(), 7, "{shapes:?}");
    assert_eq!(shapes[..2], [Shape(vec![4097, 4097, 4097]), Shape(vec![3, 5000, 7])], "the sizes first, as asked");
    assert_eq!(plan(&opts(&[]), 11).unwrap()[0].shapes.len(), 5, "without sizes, the random shapes alone");
}

#[test]
fn fuzzed_shapes_stay_in_bounds_and_reach_the_edges() {
    use rand::SeedableRng;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    for f in families::all() {
        let shapes: Vec<Shape> = (0..300).map(|_| f.fuzz_shape(&mut rng)).collect();
        for s in &shapes {
            // A convolution, or a batch norm's pass in training, is written in its own syntax,
            // which its label is.
            let text = match f.info().shapes {
                Shapes::Conv | Shapes::Nhwc => f.info().shapes.label(s),
                _ => s.0.iter().map(u64::to_string).collect::<Vec<_>>().join("x"),
            };
            assert_eq!(f.info().shapes.parse(&text).as_ref(), Ok(s), "{} {s}", f.info().name());
            let dims = f.info().shapes.dims();
            assert!(s.0.iter().zip(dims).all(|(&d, name)| d >= 1 || *name == "pad"), "{} {s}: only padding may be 0", f.info().name());
        }
        if f.info().name() == "sgemm" {
            assert!(shapes.iter().any(|s| s.0.contains(&1)), "a dimension of 1");
            assert!(shapes.iter().any(|s| s.0[1] % 2 == 1 && s.0[2] % 2 == 1), "odd rows of A and B");
            assert!(shapes.iter().any(|s| s.0.iter().any(|d| [127, 129, 255, 257].contains(d))), "a tile size +-1");
            assert!(shapes.iter().all(|s| s.0.iter().product::<u64>() <= 1 << 26), "the whole product stays the reference");
        }
        if f.info().shapes == Shapes::Conv {
            let convs: Vec<ConvShape> = shapes.iter().map(ConvShape::of).collect();
            assert!(convs.iter().any(|c| c.c % 8 != 0) && convs.iter().any(|c| c.c % 8 == 0), "channels with and without 16-byte runs");
            assert!(convs.iter().any(|c| c.stride > 1 && c.pad == 0 && c.r > 1), "strided, unpadded windows");
            assert!(convs.iter().all(|c| c.gemm().iter().product::<u64>() <= 1 << 26), "the whole output stays the reference");
        }
    }
}
