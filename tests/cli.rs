//! The command line's bad-input cases and its exit codes: one line on stderr, the code of the
//! error's kind (the README's table), nothing written.

use std::path::Path;
use std::process::{Command, Output};

use kernel_lab::error::exit;

fn lab(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kernel-lab")).args(args).current_dir(cwd).output().unwrap()
}

/// Fails unless the command exited with `code` and exactly one stderr line containing `want`,
/// leaving no results behind.
fn fails_with(code: u8, args: &[&str], want: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = lab(args, dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code as i32), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line:\n{err}");
    assert!(err.contains(want), "{args:?}: {err} should contain {want}");
    assert!(!dir.path().join("results").exists(), "{args:?} left a results folder");
}

/// Bad usage: exit 2.
fn one_line_error(args: &[&str], want: &str) {
    fails_with(exit::USAGE, args, want)
}

fn gpu_present() -> bool {
    kernel_lab::gpu::device::list().is_ok()
}

#[test]
fn unknown_family_or_variant() {
    one_line_error(&["list", "--family", "nope"], "unknown family 'nope'");
    one_line_error(&["verify", "nope"], "no family or variant matches 'nope'");
    one_line_error(&["bench", "nope"], "no family or variant matches 'nope'");
}

#[test]
fn bad_sizes() {
    one_line_error(&["bench", "sgemm", "--size", "0"], "greater than 0");
    one_line_error(&["bench", "sgemm", "--size", "abc"], "not a positive whole number");
    one_line_error(&["verify", "sgemm", "--size", "10x10"], "neither N nor MxNxK");
    one_line_error(&["bench", "memory", "--size", "7"], "4-byte");
    one_line_error(&["bench", "sgemm", "--size", "1024,-1"], "not a positive whole number");
}

#[test]
fn bad_suites_and_tuning_requests() {
    one_line_error(&["bench", "--suite", "nope"], "no selected family has a suite 'nope'");
    one_line_error(&["bench", "memory", "--suite", "bert"], "no selected family has a suite 'bert'");
    one_line_error(&["tune", "nope"], "unknown family 'nope'");
    one_line_error(&["tune", "sgemm", "sgemm_01"], "has tunable constants");
    one_line_error(&["tune", "sgemm", "memory_02"], "names no variant of sgemm");
    one_line_error(
        &["tune", "sgemm", "sgemm_11", "--suite", "resnet,nope"],
        "sgemm has no suite 'nope' (its suites: square, odd, bert, resnet)",
    );
    one_line_error(&["tune", "memory", "--suite", "bert"], "memory has no suite 'bert' (its suites: none)");
    one_line_error(&["tune", "sgemm", "--budget", "0"], "--budget must be a positive number");
    one_line_error(&["tune", "sgemm", "--budget", "-1"], "-1");
    one_line_error(&["tune", "sgemm", "--budget", "soon"], "invalid value 'soon'");
    one_line_error(&["tune", "sgemm", "--size", "0"], "greater than 0");
}

#[test]
fn bad_results_files() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.jsonl");
    std::fs::write(&garbage, "not json").unwrap();
    let other = dir.path().join("other.jsonl");
    std::fs::write(&other, "{\"schema\": 0, \"entries\": []}").unwrap();
    let one_file = dir.path().join("one-file-per-device.json");
    std::fs::write(&one_file, "{\"schema\": 1, \"entries\": []}").unwrap();
    one_line_error(&["report", "/no/such/file.jsonl"], "cannot read");
    one_line_error(&["report", garbage.to_str().unwrap()], "not JSON");
    one_line_error(&["report", other.to_str().unwrap()], "results schema 0");
    one_line_error(&["report", one_file.to_str().unwrap()], "one-file-per-device.json: a .json file is not a run file");
    one_line_error(&["report", "--format", "pdf", other.to_str().unwrap()], "invalid value 'pdf'");
    one_line_error(&["report", dir.path().join("empty").to_str().unwrap()], "cannot read");
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    one_line_error(&["report", dir.path().join("empty").to_str().unwrap()], "holds no runs");
}

#[test]
fn unknown_architecture_for_resources() {
    one_line_error(&["resources", "--arch", "sm_99"], "no variant was built for 'sm_99'");
}

/// Without a GPU (none here, or none visible: the same answer either way), exit 3.
#[test]
fn no_gpu_is_one_line_that_points_to_report() {
    for cmd in [&["bench"][..], &["verify", "sgemm"], &["devices"], &["transfers"], &["tune", "sgemm"]] {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_kernel-lab"))
            .args(cmd)
            .env("CUDA_VISIBLE_DEVICES", "")
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(exit::NO_GPU as i32), "{cmd:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{cmd:?}: {err}");
        assert!(err.contains("no GPU") && err.contains("kernel-lab report"), "{cmd:?}: {err}");
        assert!(!dir.path().join("results").exists(), "{cmd:?} left a results folder");
    }
}

#[test]
fn bad_run_flags() {
    one_line_error(&["bench", "sgemm", "--hang-limit", "0"], "--hang-limit must be a positive number");
    one_line_error(&["bench", "sgemm", "--hang-limit", "soon"], "invalid value 'soon'");
    one_line_error(&["verify", "sgemm", "--fuzz", "0"], "--fuzz must be at least 1");
    one_line_error(&["verify", "sgemm", "--fuzz", "-3"], "unexpected argument");
    one_line_error(&["report", "--by", "colour"], "invalid value 'colour'");
}

#[test]
fn registry_commands_need_no_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let out = lab(&["list"], dir.path());
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sgemm_01_naive") && text.contains("memory_03_stream_vec4_triad"), "{text}");
    assert!(text.contains("not built for sm_70"), "the skipped architecture is said: {text}");
    let out = lab(&["resources", "--arch", "sm_89"], dir.path());
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sgemm_03_smem_tiling") && text.contains("sm_89") && !text.contains("sm_90"), "{text}");
    // Volta, which nvcc 13 cannot build, through NVRTC 12 (scripts/setup.sh installs it).
    let out = lab(&["resources", "--arch", "sm_70"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("sgemm_08_double_buffered") && text.contains("NVRTC 12.") && !text.contains("sgemm_10"), "{text}");
}

/// Runs of the H200 copied or trimmed from the reference results, and the runs of a build whose
/// fatbins lacked sm_90, which the report shows as a second column.
fn committed() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        root.join("tests/data/nvidia-h200-sm_90").display().to_string(),
        root.join("tests/data/nvrtc-sm120-build").display().to_string(),
    ]
}

#[test]
fn report_renders_every_format() {
    let committed = committed();
    let dir = tempfile::tempdir().unwrap();
    for format in ["table", "markdown", "csv", "json", "html"] {
        let mut args = vec!["report", "--format", format, "--price", "H200 SXM=30000"];
        args.extend(committed.iter().map(String::as_str));
        let out = lab(&args, dir.path());
        assert!(out.status.success(), "{format}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("cuBLAS SGEMM") && text.contains("sgemm_01_naive"), "{format}: {text}");
        if format == "html" {
            assert!(text.contains("<svg") && text.contains("bounds"), "the page has the roofline and the sheet's bounds");
        }
        if format == "markdown" {
            assert!(text.contains("measured ceilings") && text.contains("RTX 4090 bound"), "{text}");
        }
    }
    let file = committed[0].as_str();
    one_line_error(&["report", file, "--price", "H200 SXM=-3"], "not a positive number of dollars");
    one_line_error(&["report", file, "--price", "H200 SXM=free"], "not a positive number of dollars");
    one_line_error(&["report", file, "--price", "H900=3"], "no GPU 'H900' in the sheet");
    one_line_error(&["report", file, "--price", "H200 SXM"], "expected GPU=USD");
}

/// The runs of a build whose fatbins lacked the GPU's architecture (`bundle.sh nvrtc`): the
/// report says where each kernel was compiled.
#[test]
fn report_names_kernels_compiled_at_run_time() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nvrtc-sm120-build");
    let dir = tempfile::tempdir().unwrap();
    let out = lab(&["report", "--format", "markdown", file], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tensor_05_wgmma_tma") && text.contains("compiled by NVRTC") && text.contains("sm_90 is not in the fatbin"),
        "{text}"
    );
}

#[test]
fn multi_needs_two_gpus() {
    if gpu_present() {
        one_line_error(&["multi", "--gpus", "0"], "needs 2 or more GPUs");
    } else {
        fails_with(exit::NO_GPU, &["multi"], "kernel-lab report");
    }
    one_line_error(&["multi", "--max-collective", "lots"], "not a positive whole number");
}

#[test]
fn the_sheet_prints_and_rejects_unknown_gpus() {
    one_line_error(&["sheet", "RTX 9090"], "no GPU 'RTX 9090' in the sheet");
    let dir = tempfile::tempdir().unwrap();
    let out = lab(&["sheet", "rtx 4090"], dir.path());
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("RTX 4090") && text.contains("660.6") && !text.contains("1321"), "dense rates only: {text}");
}

/// Each kind of error has its code (the CLI exits with `exit_code`, whatever the command): a
/// fault of the driver or cuBLAS outside a variant is 4, apart from usage (2) and no GPU (3).
#[test]
fn error_kinds_map_to_the_documented_codes() {
    use cudarc::cublas::result::CublasError;
    use cudarc::cublas::sys::cublasStatus_t;
    use cudarc::driver::sys::CUresult;
    use cudarc::driver::DriverError;
    use kernel_lab::LabError;
    assert_eq!(LabError::Driver(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY)).exit_code(), exit::DRIVER);
    assert_eq!(LabError::Cublas(CublasError(cublasStatus_t::CUBLAS_STATUS_EXECUTION_FAILED)).exit_code(), exit::DRIVER);
    assert_eq!(LabError::NoGpu("none".into()).exit_code(), exit::NO_GPU);
    assert_eq!(LabError::Unavailable("no NVRTC".into()).exit_code(), exit::NO_GPU);
    assert_eq!(LabError::Usage("bad".into()).exit_code(), exit::USAGE);
    assert_eq!(LabError::Results { path: "x".into(), msg: "bad".into() }.exit_code(), exit::USAGE);
    let codes = [exit::OK, exit::FAILED, exit::USAGE, exit::NO_GPU, exit::DRIVER];
    assert_eq!(codes, [0, 1, 2, 3, 4], "the README's table");
}
