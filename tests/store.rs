//! Results files: round trip, schema errors, merging, atomic writes.

use kernel_lab::device::DeviceInfo;
use kernel_lab::families::{Unit, Work};
use kernel_lab::stats::Summary;
use kernel_lab::store::{self, Entry, ResultsFile, RunInfo, Status, SCHEMA};
use kernel_lab::timing::Policy;
use kernel_lab::verify::{check, Precision};

fn device() -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "NVIDIA H200".into(),
        cc_major: 9,
        cc_minor: 0,
        sms: 132,
        l2_bytes: 60 << 20,
        smem_per_block_optin: 232448,
        smem_per_sm: 233472,
        total_mem_bytes: 150_000_000_000,
        sm_clock_khz: 1_980_000,
        mem_clock_khz: 3_201_000,
        bus_width_bits: 6016,
        driver: "13.0".into(),
    }
}

fn run(seed: u64) -> RunInfo {
    RunInfo {
        id: 0,
        date: "2026-11-29T00:00:00Z".into(),
        git_commit: "abc".into(),
        lab_version: "0.1.0".into(),
        nvcc: "13.0.88".into(),
        driver: "13.0".into(),
        command: "kernel-lab bench".into(),
        seed,
        policy: Policy::quick(),
        notes: Vec::new(),
    }
}

fn entry(variant: &str, shape: &str, nan: bool) -> Entry {
    let want = [1.0, 2.0];
    let out = if nan { [1.0, f32::NAN] } else { [1.0, 2.0] };
    Entry {
        run: 0,
        family: "sgemm".into(),
        variant: variant.into(),
        baseline: false,
        rung: 1,
        config: "block 16x16".into(),
        shape: shape.into(),
        dims: vec![1024, 1024, 1024],
        status: if nan { Status::Failed } else { Status::Ok },
        reason: None,
        seed: 7,
        verify: Some(check(&out, want.iter().copied().enumerate(), Precision::Fp32)),
        verify_after: None,
        time: Summary::of(&[1.0, 1.1, 0.9]),
        work: Work { flops: 2e9, bytes_read: 8e6, bytes_written: 4e6 },
        unit: Unit::Tflops,
        rate: Some(2.0),
        vs_baseline: Some(0.5),
        peak: Some(67.0),
        vs_peak: Some(0.03),
        source_hash: Some("00ff".into()),
        telemetry: None,
        remeasured: false,
        compiled_here: None,
    }
}

#[test]
fn device_slug_and_peaks() {
    let d = device();
    assert_eq!(d.slug(), "nvidia-h200-sm_90");
    assert!((d.peak_dram_gbs().unwrap() - 4815.0).abs() < 1.0, "{:?}", d.peak_dram_gbs());
    assert!((d.peak_fp32_tflops().unwrap() - 66.9).abs() < 0.1, "{:?}", d.peak_fp32_tflops());
    let unknown = DeviceInfo { sm_clock_khz: 0, ..d };
    assert!(unknown.peak_fp32_tflops().is_none(), "no clock reported, no made-up peak");
}

#[test]
fn round_trip_including_nan_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = store::merge(None, device(), run(1), vec![entry("a", "1024", false), entry("b", "1024", true)]);
    let path = store::path_for(dir.path(), &file.device);
    store::write_atomic(&path, &file).unwrap();
    let back = store::load(&path).unwrap();
    assert_eq!(back.schema, SCHEMA);
    assert_eq!(back.entries[0], file.entries[0]);
    assert!(back.entries[1].verify.as_ref().unwrap().error.is_nan(), "NaN survives as null");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
}

#[test]
fn merge_replaces_same_key_and_drops_orphan_runs() {
    let first = store::merge(None, device(), run(1), vec![entry("a", "1024", false), entry("b", "1024", false)]);
    let second = store::merge(Some(first.clone()), device(), run(2), vec![entry("a", "1024", false)]);
    assert_eq!(second.entries.len(), 2);
    assert_eq!(second.runs.len(), 2);
    let a = second.entries.iter().find(|e| e.variant == "a").unwrap();
    assert_eq!(a.run, 1, "the new run's id");
    let third = store::merge(Some(second), device(), run(3), vec![entry("b", "1024", false)]);
    assert_eq!(third.runs.iter().map(|r| r.id).collect::<Vec<_>>(), [1, 2], "run 0 has no entries left");
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn schema_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let err = |p: &std::path::Path| store::load(p).unwrap_err().to_string();
    let missing = dir.path().join("none.json");
    assert!(err(&missing).contains("cannot read"));
    assert!(err(&write(dir.path(), "x.json", "{nope")).contains("not JSON"));
    assert!(err(&write(dir.path(), "y.json", "{\"a\":1}")).contains("no schema number"));
    let e = err(&write(dir.path(), "z.json", "{\"schema\":999}"));
    assert!(e.contains("schema 999") && e.contains("z.json"), "{e}");
    let e = err(&write(dir.path(), "w.json", &format!("{{\"schema\":{SCHEMA},\"device\":1}}")));
    assert!(e.contains("does not match"), "{e}");
}

#[test]
fn a_results_file_is_self_describing() {
    let file: ResultsFile = store::merge(None, device(), run(9), vec![entry("a", "1024", false)]);
    let v = serde_json::to_value(&file).unwrap();
    for key in ["schema", "device", "runs", "entries"] {
        assert!(v.get(key).is_some(), "{key}");
    }
    let r = &v["runs"][0];
    for key in ["date", "git_commit", "nvcc", "driver", "seed", "policy"] {
        assert!(r.get(key).is_some(), "run.{key}");
    }
    assert_eq!(v["entries"][0]["source_hash"], "00ff");
    assert_eq!(v["device"]["sm_clock_khz"], 1_980_000);
}

#[test]
fn unknown_variants_are_dropped_with_their_runs() {
    let mut file = store::merge(None, device(), run(1), vec![entry("gone_01_x", "1024", false), entry("kept", "1024", false)]);
    let mut base = entry("cuBLAS SGEMM", "1024", false);
    base.baseline = true;
    file = store::merge(Some(file), device(), run(2), vec![base, entry("kept@tuned", "2048", false)]);
    file.retain_known(|v| v == "kept");
    let names: Vec<&str> = file.entries.iter().map(|e| e.variant.as_str()).collect();
    assert_eq!(names, ["kept", "cuBLAS SGEMM", "kept@tuned"]);
    assert_eq!(file.runs.len(), 2);
}
