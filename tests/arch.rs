//! The architecture table and build.rs's choice of targets (the same code build.rs runs).

use kernel_lab::facts::arch::{lookup, plan_archs, variant_targets, ArchReq, Target, ARCHS};

fn nvcc13() -> Vec<String> {
    "sm_75 sm_80 sm_86 sm_87 sm_88 sm_89 sm_90 sm_100 sm_110 sm_103 sm_120 sm_121".split(' ').map(String::from).collect()
}

#[test]
fn table_is_ordered_and_covers_volta_to_blackwell() {
    assert!(ARCHS.windows(2).all(|w| w[0].sm < w[1].sm), "ascending, unique");
    let sms: Vec<u32> = ARCHS.iter().map(|a| a.sm).collect();
    assert_eq!(sms, [70, 75, 80, 86, 89, 90, 100, 120]);
    for a in ARCHS {
        assert!(a.smem_per_block_optin <= a.smem_per_sm, "{}", a.name());
        assert!(a.fp32_lanes_per_sm == 64 || a.fp32_lanes_per_sm == 128, "{}", a.name());
        assert_eq!(a.regs_per_sm, 65536, "{}", a.name());
        assert_eq!(a.cp_async, a.sm >= 80, "cp.async arrived with Ampere: {}", a.name());
    }
    assert_eq!(lookup(7, 0).unwrap().family, "Volta");
    assert_eq!(lookup(8, 9).unwrap().family, "Ada");
    assert_eq!(lookup(9, 0).unwrap().family, "Hopper");
}

#[test]
fn lookup_takes_the_nearest_older_row_of_the_same_major() {
    assert_eq!(lookup(8, 7).unwrap().sm, 86);
    assert_eq!(lookup(12, 1).unwrap().sm, 120);
    assert_eq!(lookup(10, 3).unwrap().sm, 100);
    assert!(lookup(6, 1).is_none(), "Pascal is not in the table");
}

#[test]
fn cuda13_drops_volta_with_a_reason() {
    let plan = plan_archs(&nvcc13(), "13.0.88", None).unwrap();
    assert_eq!(plan.archs, [75, 80, 86, 89, 90, 100, 120]);
    assert_eq!(plan.skipped.len(), 1);
    assert_eq!(plan.skipped[0].0, "sm_70");
    assert!(plan.skipped[0].1.contains("Volta"), "{}", plan.skipped[0].1);
}

#[test]
fn override_list_is_honoured_and_checked() {
    let plan = plan_archs(&nvcc13(), "13.0", Some("sm_90, sm_89,sm_90")).unwrap();
    assert_eq!(plan.archs, [89, 90]);
    let plan = plan_archs(&nvcc13(), "13.0", Some("sm_70,sm_90")).unwrap();
    assert_eq!(plan.archs, [90]);
    assert_eq!(plan.skipped[0].0, "sm_70");
    assert!(plan_archs(&nvcc13(), "13.0", Some("sm_91")).unwrap_err().contains("not in the lab's table"));
    assert!(plan_archs(&nvcc13(), "13.0", Some("ampere")).unwrap_err().contains("sm_XY"));
    assert_eq!(plan_archs(&nvcc13(), "13.0", Some("  ")).unwrap().archs.len(), 7, "blank means no override");
}

#[test]
fn variant_targets_follow_the_requirement() {
    let plan = plan_archs(&nvcc13(), "13.0", None).unwrap();
    let names = |req: &ArchReq| variant_targets(&plan, req).iter().map(Target::name).collect::<Vec<_>>();
    assert_eq!(names(&ArchReq::AtLeast(70)), ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "compute_120"]);
    assert_eq!(names(&ArchReq::AtLeast(90)), ["sm_90", "sm_100", "sm_120", "compute_120"]);
    assert_eq!(names(&ArchReq::parse("sm_90a").unwrap()), ["sm_90a"], "arch-specific: SASS only, no PTX");
    let volta_only = plan_archs(&nvcc13(), "13.0", Some("sm_70")).unwrap();
    assert!(variant_targets(&volta_only, &ArchReq::AtLeast(70)).is_empty());
}

#[test]
fn gencode_and_compatibility() {
    let t = |s: &str| Target::parse(s).unwrap();
    assert_eq!(t("sm_90a").gencode(), "arch=compute_90a,code=sm_90a");
    assert_eq!(t("compute_120").gencode(), "arch=compute_120,code=compute_120");
    assert_eq!(t("sm_80").gencode(), "arch=compute_80,code=sm_80");
    assert!(t("sm_80").runs_on(86) && t("sm_80").runs_on(89) && !t("sm_80").runs_on(90));
    assert!(t("sm_90a").runs_on(90) && !t("sm_90a").runs_on(100));
    assert!(t("compute_90").runs_on(120) && !t("compute_90").runs_on(89));
    assert!(Target::parse("sm_x").is_none() && Target::parse("90").is_none());
}

#[test]
fn arch_requirements_parse() {
    assert_eq!(ArchReq::parse("sm_80+").unwrap(), ArchReq::AtLeast(80));
    assert_eq!(ArchReq::parse("sm_90a").unwrap(), ArchReq::Exact { sm: 90, arch_specific: true });
    for bad in ["sm_90a+", "compute_90", "80+", ""] {
        assert!(ArchReq::parse(bad).is_err(), "{bad}");
    }
    assert!(ArchReq::AtLeast(80).admits(90) && !ArchReq::AtLeast(80).admits(75));
}
