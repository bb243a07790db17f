//! Tests that need a GPU. Without one they are listed as ignored ("needs a GPU"), never passed;
//! `cargo make test` runs them with --include-ignored where nvidia-smi lists a GPU.

use kernel_lab::device::Gpu;
use kernel_lab::families::{self, Shape};
use kernel_lab::runner::{self, Options};
use kernel_lab::store::Status;

fn gpu() -> Gpu {
    Gpu::open(0).expect("this test needs a GPU")
}

#[test]
#[ignore = "needs a GPU"]
fn every_variant_verifies_at_the_quick_sizes() {
    let mut gpu = gpu();
    let opts = Options { quick: true, ..Options::default() };
    let plans = runner::plan(&opts).unwrap();
    let entries = runner::run(&mut gpu, &plans, &opts, 42).unwrap();
    let failed: Vec<String> =
        entries.iter().filter(|e| e.status == Status::Failed).map(|e| format!("{} {}: {:?}", e.variant, e.shape, e.reason)).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    for fam in ["memory", "sgemm"] {
        assert!(entries.iter().any(|e| e.family == fam && e.baseline && e.status == Status::Ok), "{fam} baseline");
    }
}

#[test]
#[ignore = "needs a GPU"]
fn an_unwritten_output_fails_the_check() {
    let mut gpu = gpu();
    let fam = families::get("sgemm").unwrap();
    let mut case = fam.prepare(&mut gpu, &Shape(vec![96, 80, 64]), 3).unwrap();
    case.poison(&gpu).unwrap();
    gpu.sync().unwrap();
    let c = case.check(&gpu, fam.precision()).unwrap();
    assert!(!c.passed() && c.nonfinite == 96 * 80, "{}", c.describe());
}

#[test]
#[ignore = "needs a GPU"]
fn odd_and_thin_shapes_verify_or_skip_with_a_reason() {
    let mut gpu = gpu();
    // sgemm at edges of every tile; the Tensor Core family where TMA needs A and B given a
    // padded pitch (k and n not multiples of 8, and rows shorter than one 16-byte chunk).
    for (family, sizes) in [("sgemm", vec!["1023", "257x64x129", "8x1000x3"]), ("tensor", vec!["1001x1003x1005", "130x77x33", "9x5x3"])] {
        let opts = Options { filter: Some(family.into()), sizes: sizes.into_iter().map(String::from).collect(), ..Options::default() };
        let plans = runner::plan(&opts).unwrap();
        let entries = runner::run(&mut gpu, &plans, &opts, 7).unwrap();
        for e in &entries {
            match e.status {
                Status::Ok => assert!(e.verify.as_ref().unwrap().passed()),
                Status::Skipped => assert!(e.reason.as_ref().is_some_and(|r| !r.is_empty())),
                Status::Failed => panic!("{} {}: {:?}", e.variant, e.shape, e.reason),
            }
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn timing_gives_a_rate_and_checks_again() {
    let mut gpu = gpu();
    let opts = Options {
        filter: Some("memory_03_stream_vec4_copy".into()),
        sizes: vec!["64M".into()],
        quick: true,
        time: true,
        ..Options::default()
    };
    let plans = runner::plan(&opts).unwrap();
    let entries = runner::run(&mut gpu, &plans, &opts, 11).unwrap();
    let v = entries.iter().find(|e| e.variant == "memory_03_stream_vec4_copy").unwrap();
    assert_eq!(v.status, Status::Ok, "{:?}", v.reason);
    let t = v.time.unwrap();
    assert!(t.n >= kernel_lab::timing::FLOOR_SAMPLES && t.median_ms > 0.0);
    assert!(v.verify_after.as_ref().unwrap().passed());
    assert!(v.rate.unwrap() > 0.0 && v.vs_baseline.unwrap() > 0.0);
    // GPU machines have NVML: the timed launches carry clocks and power.
    let t = v.telemetry.as_ref().expect("NVML telemetry with a timed entry");
    assert!(t.readings > 0 && t.sm_mhz_median > 0 && t.power_w > 0.0, "{t:?}");
}

#[test]
#[ignore = "needs a GPU"]
fn the_peak_family_is_measured_against_the_sheet() {
    let mut gpu = gpu();
    let opts = Options { filter: Some("peak_01_simt_fma_fp32".into()), quick: true, time: true, ..Options::default() };
    let plans = runner::plan(&opts).unwrap();
    let entries = runner::run(&mut gpu, &plans, &opts, 5).unwrap();
    let e = entries.iter().find(|e| e.variant == "peak_01_simt_fma_fp32").unwrap();
    assert_eq!(e.status, Status::Ok, "{:?}", e.reason);
    assert!(!entries.iter().any(|e| e.baseline), "the peak family has no vendor baseline");
    if kernel_lab::sheet::for_device(&gpu.info.name, gpu.info.sms).is_some() {
        let pct = e.vs_peak.expect("a sheet GPU has a dense fp32 rate");
        assert!(pct > 0.2 && pct < 1.3, "fp32 FMA at {:.0}% of the sheet", 100.0 * pct);
    }
}

#[test]
#[ignore = "needs a GPU"]
fn a_tuning_candidate_compiles_verifies_and_times() {
    use kernel_lab::store::CandidateStatus;
    use kernel_lab::{registry, timing::Policy, tune};
    let mut gpu = gpu();
    let v = registry::by_name("sgemm_08_double_buffered").unwrap();
    let shape = Shape(vec![512, 384, 260]);
    let other = v.config().with("BK", 16).with("WNITER", 4);
    for config in [v.config(), other] {
        let c = tune::evaluate(&mut gpu, v, &shape, &config, 5, &Policy::quick()).unwrap();
        assert_eq!(c.status, CandidateStatus::Ok, "{}: {:?}", config.label(), c.reason);
        assert!(c.median_ms.unwrap() > 0.0 && c.registers.unwrap() > 0 && c.blocks_per_sm.unwrap() > 0);
    }
    // Refused by its own static_asserts (NVRTC): rejected, not an error of the search.
    let too_big = v.config().with("BLOCK_X", 1024).with("BM", 256).with("BN", 256);
    let c = tune::evaluate(&mut gpu, v, &shape, &too_big, 5, &Policy::quick()).unwrap();
    assert_eq!(c.status, CandidateStatus::Rejected, "{c:?}");
}

#[test]
#[ignore = "needs two GPUs"]
fn two_gpus_copy_collect_and_scale_verified() {
    let mut gpus: Vec<_> = (0..2).map(|i| kernel_lab::device::Gpu::open(i).expect("this test needs two GPUs")).collect();
    let m = kernel_lab::multi::measure(&mut gpus, &[4 << 10, 16 << 20], &[8, 1 << 20]).unwrap();
    assert_eq!(m.links.len(), 2);
    assert!(m.copies.iter().all(|c| c.gbs > 0.0), "every copy was timed (and checked inside measure)");
    assert_eq!(m.collectives.len(), 4 * 2 * 2, "4 collectives x 2 types x 2 sizes");
    assert!(m.scaling.iter().any(|s| s.gpus == 2 && s.efficiency.is_some()));
}
