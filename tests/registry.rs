//! The generated registry, the manifest rules, and the families' sizes, work and references.

use kernel_lab::families::{self, sgemm::full_product, Shape};
use kernel_lab::manifest;
use kernel_lab::registry::{self, BUILD, VARIANTS};

#[test]
fn every_variant_is_built_with_resources_and_a_hash() {
    assert!(!VARIANTS.is_empty());
    for v in VARIANTS {
        assert!(!v.fatbin.is_empty(), "{} has no fatbin", v.name);
        assert_eq!(v.source_hash.len(), 16, "{}", v.name);
        assert!(!v.summary.is_empty(), "{}: the kernel file must open with a Technique: line", v.name);
        for t in v.targets.iter().filter(|t| t.starts_with("sm_")) {
            assert!(v.resources.iter().any(|(r, _)| r == t), "{}: no ptxas report for {t}", v.name);
        }
        assert!(families::get(v.family).is_some(), "{}: no Rust family", v.name);
    }
    assert!(BUILD.archs.contains(&"sm_90"));
}

#[test]
fn names_are_unique_and_rungs_ordered() {
    let mut names: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), VARIANTS.len());
    for f in registry::families() {
        let rungs: Vec<u32> = VARIANTS.iter().filter(|v| v.family == f).map(|v| v.rung).collect();
        assert!(rungs.windows(2).all(|w| w[0] <= w[1]), "{f}: {rungs:?}");
    }
}

#[test]
fn filters_select_family_variant_or_substring() {
    assert_eq!(registry::select(None).unwrap().len(), VARIANTS.len());
    assert!(registry::select(Some("sgemm")).unwrap().iter().all(|v| v.family == "sgemm"));
    assert_eq!(registry::select(Some("sgemm_01_naive")).unwrap().len(), 1);
    assert!(registry::select(Some("copy")).unwrap().iter().all(|v| v.family == "memory"));
    let e = registry::select(Some("nope")).unwrap_err().to_string();
    assert!(e.contains("no family or variant matches 'nope'") && e.contains("sgemm"), "{e}");
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
fn manifest_rules() {
    let ok = "[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [16, 16]\ndefines = { BM = 16 }\n";
    let v = manifest::parse("fam", ok).unwrap();
    assert_eq!((v[0].name.as_str(), v[0].rung, v[0].block), ("fam_01_x", 1, [16, 16, 1]));
    assert_eq!(v[0].config().compiler_defines(), ["-DBLOCK_X=16", "-DBLOCK_Y=16", "-DBLOCK_Z=1", "-DBM=16"]);
    let bad = |text: &str, want: &str| {
        let e = manifest::parse("fam", text).unwrap_err();
        assert!(e.contains(want), "{e} should say {want}");
    };
    bad("[[variant]]\nfile = \"other_01_x.cu\"\nblock = [1]\n", "fam_NN_");
    bad("[[variant]]\nfile = \"fam_1_x.cu\"\nblock = [1]\n", "fam_NN_");
    bad("[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [64, 32]\n", "over CUDA's 1024");
    bad("[[variant]]\nfile = \"fam_01_x.cu\"\nblock = []\n", "1 to 3");
    bad("[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [1]\n[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [1]\n", "used twice");
    bad("[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [1]\narch = \"ampere\"\n", "arch requirement");
    bad("[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [1]\ndefines = { BLOCK_X = 1 }\n", "BLOCK_");
    bad("[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [1]\nname = \"other\"\n", "start with");
    bad("[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [1]\nmultiple_of = { k = 0 }\n", "positive");
    bad("[[variant]]\nfile = \"fam_01_x.cu\"\nblock = [1]\ncolour = 1\n", "unknown field");
}

#[test]
fn sizes_parse_or_explain() {
    let sgemm = families::get("sgemm").unwrap();
    assert_eq!(sgemm.parse_size("1000").unwrap(), Shape(vec![1000, 1000, 1000]));
    assert_eq!(sgemm.parse_size("16384x768x3072").unwrap(), Shape(vec![16384, 768, 3072]));
    for (bad, want) in [
        ("0", "greater than 0"),
        ("abc", "not a positive whole number"),
        ("-5", "not a positive"),
        ("4x4", "neither"),
        ("70000", "elements"),
        ("20000000x1x1", "limit"),
        ("1x0x1", "greater than 0"),
    ] {
        let e = sgemm.parse_size(bad).unwrap_err();
        assert!(e.contains(want), "{bad}: {e}");
    }
    let mem = families::get("memory").unwrap();
    assert_eq!(mem.parse_size("256M").unwrap(), Shape(vec![256 << 20]));
    assert_eq!(mem.parse_size("1G").unwrap(), Shape(vec![1 << 30]));
    assert!(mem.parse_size("6").unwrap_err().contains("4-byte"));
    assert!(mem.parse_size("99999999999999999999G").is_err());
    assert_eq!(mem.label(&Shape(vec![(1 << 30) + 12])), "1024 MiB+12 B");
}

#[test]
fn default_sizes_include_shapes_off_the_tile() {
    let sgemm = families::get("sgemm").unwrap();
    for quick in [false, true] {
        let s = sgemm.default_sizes(quick);
        assert!(s.iter().any(|x| x.0[0] % 8 != 0), "odd size in {s:?}");
    }
    assert!(sgemm.default_sizes(false).contains(&Shape(vec![8192, 8192, 8192])));
    let mem = families::get("memory").unwrap();
    assert!(mem.default_sizes(false).iter().any(|s| s.0[0] % 16 != 0), "a tail that is not a whole vector");
    assert!(mem.default_sizes(false).iter().all(|s| s.0[0] >= 256 << 20), "well above any L2");
}

#[test]
fn declared_work_and_rates() {
    let sgemm = families::get("sgemm").unwrap();
    let w = sgemm.work(&Shape(vec![2, 3, 4]), None);
    assert_eq!((w.flops, w.bytes_read, w.bytes_written), (48.0, 4.0 * (8.0 + 12.0), 24.0));
    assert!((w.rate(sgemm.unit(), 1e-3) - 48.0 / 1e-6 / 1e12).abs() < 1e-12);
    let mem = families::get("memory").unwrap();
    let w = mem.work(&Shape(vec![1 << 30]), None);
    assert!((w.rate(mem.unit(), 1.0) - 2.0 * (1u64 << 30) as f64 / 1e-3 / 1e9).abs() < 1e-6, "read + written");
    let triad = registry::by_name("memory_03_stream_vec4_triad").unwrap();
    let w = mem.work(&Shape(vec![1 << 30]), Some(&triad.config()));
    assert_eq!((w.bytes_read, w.bytes_written), (2.0 * (1u64 << 30) as f64, (1u64 << 30) as f64), "triad reads b and c");
}

#[test]
fn multiple_of_declarations_are_enforced() {
    let sgemm = families::get("sgemm").unwrap();
    let vec4 = registry::by_name("sgemm_06_vectorized").unwrap();
    assert!(sgemm.can_implement(vec4, &vec4.config(), &Shape(vec![1000, 1000, 1000])).is_ok());
    assert!(sgemm.can_implement(vec4, &vec4.config(), &Shape(vec![1023, 1023, 1023])).unwrap_err().contains("% 4"));
    let coalesced = registry::by_name("sgemm_02_coalesced").unwrap();
    let tall = Shape(vec![802816, 64, 576]);
    assert!(sgemm.can_implement(coalesced, &coalesced.config(), &tall).unwrap_err().contains("65535"));
    assert!(sgemm.can_implement(vec4, &vec4.config(), &tall).is_ok());
}

#[test]
fn reference_product_matches_a_plain_triple_loop() {
    let (m, n, k) = (5, 7, 3);
    let a = families::random_f32(m * k, 1);
    let b = families::random_f32(k * n, 2);
    assert!(a.iter().all(|x| (-1.0..1.0).contains(x)) && a.iter().any(|x| *x != 0.0));
    let c = full_product(&a, &b, m, n, k);
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..k).map(|p| a[i * k + p] as f64 * b[p * n + j] as f64).sum();
            assert!((c[i * n + j] - want).abs() < 1e-12);
        }
    }
    assert_ne!(families::random_f32(8, 1), families::random_f32(8, 3), "seeds give fresh inputs");
    let s = Shape(vec![4, 4, 4]);
    assert_ne!(families::seed_for(1, "sgemm", &s), families::seed_for(2, "sgemm", &s));
}

#[test]
fn l2_knee_is_the_midpoint_crossing() {
    use kernel_lab::families::l2::{checksum, knee, passes};
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
    use kernel_lab::transfers::Pcie;
    let link = |g, w| Pcie { gen_current: g, gen_max: g, width_current: w, width_max: w };
    assert!((link(5, 16).theoretical_gbs().unwrap() - 63.0).abs() < 0.1);
    assert!((link(4, 16).theoretical_gbs().unwrap() - 31.5).abs() < 0.1);
    assert!((link(3, 8).theoretical_gbs().unwrap() - 7.88).abs() < 0.01);
    assert!(link(9, 16).theoretical_gbs().is_none());
}

#[test]
fn every_family_has_sizes_work_and_a_manifest() {
    for fam in families::all() {
        assert!(!fam.default_sizes(false).is_empty() && !fam.default_sizes(true).is_empty(), "{}", fam.name());
        assert!(registry::families().contains(&fam.name()), "{} has no manifest", fam.name());
        for s in fam.default_sizes(false) {
            if fam.baseline().is_some() {
                assert!(fam.work(&s, None).bytes_read > 0.0, "{} {s}: the baseline reads", fam.name());
            }
            for v in registry::VARIANTS.iter().filter(|v| v.family == fam.name()) {
                let w = fam.work(&s, Some(&v.config()));
                assert!(w.flops + w.bytes_read + w.bytes_written > 0.0, "{} {s}: no declared work", v.name);
            }
        }
    }
    let t = families::get("transpose").unwrap();
    assert_eq!(t.parse_size("16383x16385").unwrap(), Shape(vec![16383, 16385]));
    assert!(t.parse_size("70000x70000").unwrap_err().contains("2^31"));
    let r = families::get("reduce").unwrap();
    let v = registry::by_name("reduce_05_single_pass").unwrap();
    assert_eq!(r.work(&Shape(vec![1 << 30]), Some(&v.config())).bytes_written, 0.0, "a reduction's bytes are reads");
}

#[test]
fn tma_pitches_keep_rows_on_the_sector_grid() {
    use kernel_lab::families::tensor::fast_pitch;
    assert_eq!(fast_pitch(4096, 2), 4096);
    assert_eq!(fast_pitch(4112, 2), 4112, "8224-byte rows are whole sectors: no copy");
    assert_eq!(fast_pitch(4104, 2), 4160, "16-byte-aligned is not enough");
    assert_eq!(fast_pitch(4097, 2), 4160);
    assert_eq!(fast_pitch(4111, 2), 4160);
    assert_eq!(fast_pitch(1003, 4), 1024);
}
