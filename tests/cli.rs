//! The command line's bad-input cases and its exit codes: one line on stderr, the code of the
//! error's kind (the README's table), nothing written.

use std::path::Path;
use std::process::{Command, Output, Stdio};

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
    one_line_error(&["tune", "sgemm", "--time-budget", "0"], "--time-budget must be a positive number");
    one_line_error(&["tune", "sgemm", "--time-budget", "-1"], "-1");
    one_line_error(&["tune", "sgemm", "--time-budget", "soon"], "invalid value 'soon'");
    one_line_error(&["tune", "sgemm", "--gpus", "0,1"], "runs on one GPU");
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
    let report = |p: &Path| vec!["report".to_string(), "--results-dir".into(), p.display().to_string()];
    let err = |args: Vec<String>, want: &str| one_line_error(&args.iter().map(String::as_str).collect::<Vec<_>>(), want);
    err(report(Path::new("/no/such/file.jsonl")), "cannot read");
    err(report(&garbage), "not JSON");
    err(report(&other), "results schema 0");
    err(report(&one_file), "one-file-per-device.json: a .json file is not a run file");
    one_line_error(&["report", "--format", "pdf", "--results-dir", other.to_str().unwrap()], "invalid value 'pdf'");
    err(report(&dir.path().join("empty")), "cannot read");
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    err(report(&dir.path().join("empty")), "holds no runs");
    one_line_error(&["report", other.to_str().unwrap()], "unexpected argument");
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
    // What the build derives beside the manifest's choices, per variant: the ping-pong tile's
    // four stages of 40 KiB and its two consumers' two TMA-store buffers of two boxes.
    let out = lab(&["list", "--family", "fp16", "--format", "csv"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().find(|l| l.contains(",fp16_07_pingpong,")).unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("LAB_ARGS=lab_gemm_tma_args LAB_RING_BYTES=163840 LAB_SLICE_BYTES=65536 LAB_C_BUFS=2"), "{row}");
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
    vec![root.join("tests/data/nvidia-h200-sm_90").display().to_string(), root.join("tests/data/nvrtc-sm120-build").display().to_string()]
}

#[test]
fn report_renders_every_format() {
    let committed = committed();
    let dir = tempfile::tempdir().unwrap();
    for format in ["table", "markdown", "csv", "json", "html"] {
        let mut args = vec!["report", "--format", format, "--price", "H200 SXM=30000"];
        args.extend(committed.iter().flat_map(|c| ["--results-dir", c.as_str()]));
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
    one_line_error(&["report", "--results-dir", file, "--price", "H200 SXM=-3"], "not a positive number of dollars");
    one_line_error(&["report", "--results-dir", file, "--price", "H200 SXM=free"], "not a positive number of dollars");
    one_line_error(&["report", "--results-dir", file, "--price", "H900=3"], "no GPU 'H900' in the sheet");
    one_line_error(&["report", "--results-dir", file, "--price", "H200 SXM"], "expected GPU=USD");
}

/// The runs of a build whose fatbins lacked the GPU's architecture (`bundle.sh nvrtc`): the
/// report says where each kernel was compiled.
#[test]
fn report_names_kernels_compiled_at_run_time() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nvrtc-sm120-build");
    let dir = tempfile::tempdir().unwrap();
    let out = lab(&["report", "--format", "markdown", "--results-dir", file], dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fp16_05_wgmma_tma") && text.contains("compiled by NVRTC") && text.contains("sm_90 is not in the fatbin"),
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

/// `kernel-lab` alone: the help laid out to read, exit 2 (nothing was run).
#[test]
fn no_arguments_prints_readable_help() {
    let dir = tempfile::tempdir().unwrap();
    let out = lab(&[], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(exit::USAGE as i32), "{err}");
    assert!(err.contains("Usage: kernel-lab") && err.contains("report"), "{err}");
    assert!(err.lines().count() > 10, "laid out on lines: {err}");
    assert!(err.lines().all(|l| l.chars().count() < 250), "no line of thousands of characters: {err}");
}

/// Standard output that cannot take the output (`> /dev/full`): one line naming it, exit 2 (the
/// README's code for a file the lab cannot write). A reader that closes the pipe early: exit 0,
/// and no error said.
#[test]
fn io_faults_are_one_line_and_a_closed_pipe_is_quiet() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nvidia-h200-sm_90");
    let commands: [&[&str]; 6] = [
        &["report", "--results-dir", data],
        &["report", "--results-dir", data, "--format", "csv"],
        &["sheet"],
        &["list"],
        &["list", "--format", "json"],
        &["history", "sgemm_08_double_buffered", "--results-dir", data],
    ];
    for args in commands {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_kernel-lab")).args(args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(exit::USAGE as i32), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("standard output: cannot write") && !err.contains("panicked"), "{args:?}: {err}");

        let mut child =
            Command::new(env!("CARGO_BIN_EXE_kernel-lab")).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        // A command whose output fit the pipe's buffer before the reader left ends as usual,
        // with its notes on stderr; none says an error.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("error") && !err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn size_ranges_expand_and_share_the_shape_rule() {
    use kernel_lab::measure::families::shapes::expand;
    let ex = |t: &[&str]| expand(&t.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(ex(&["1024:4096:1024"]).unwrap(), ["1024", "2048", "3072", "4096"]);
    assert_eq!(ex(&["512", "1K:3K:1K"]).unwrap(), ["512", "1024", "2048", "3072"]);
    assert_eq!(ex(&["1:10:4"]).unwrap(), ["1", "5", "9"], "up to the end where the steps land");
    assert_eq!(ex(&["4096x1024:2048:1024x64:128:64"]).unwrap(), ["4096x1024x64", "4096x1024x128", "4096x2048x64", "4096x2048x128"]);
    assert!(ex(&["4096:1024:1"]).unwrap_err().contains("ends (1024) before it starts (4096)"));
    assert!(ex(&["1:100000:1"]).unwrap_err().contains("over 4096 sizes"));
    assert!(ex(&["1:2"]).unwrap_err().contains("START:END:STEP"));
    // Through the commands: the expanded sizes meet each family's rule.
    one_line_error(&["bench", "sgemm", "--size", "0:4096:1024"], "greater than 0");
    one_line_error(&["verify", "sgemm", "--size", "1024:4096:0"], "greater than 0");
    one_line_error(&["bench", "sgemm", "--size", "1:100000:1"], "over 4096 sizes");
    one_line_error(&["bench", "sgemm", "--size", "16777217:16777218:1"], "over the lab's limit");
    one_line_error(&["tune", "sgemm", "--size", "4096:1024:1024"], "before it starts");
    one_line_error(&["advise", "--workload", "gemm 100000000000"], "over the lab's limit");
    one_line_error(&["bench", "sgemm", "--gpus", "0,1"], "runs on one GPU");
}

#[test]
fn history_finds_a_shape_in_any_spelling() {
    let dir = tempfile::tempdir().unwrap();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let rows = |shape: &str| {
        let out = lab(&["history", "sgemm_08_double_buffered", "--shape", shape, "--results-dir", data, "--format", "csv"], dir.path());
        assert!(out.status.success(), "{shape}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().skip(1).map(String::from).collect::<Vec<_>>()
    };
    let written = rows("4096x4096x4096");
    assert!(written.len() >= 3 && written.iter().all(|r| r.contains(",4096x4096x4096,")), "{written:?}");
    assert_eq!(rows("4096"), written, "N is NxNxN, as bench takes it");
    assert_eq!(rows("4K"), written);
    assert_eq!(rows("4Kx4096x4K"), written);
    assert_eq!(rows("1024:4096:3072"), written, "a range that lands on it");
    one_line_error(&["history", "sgemm_08_double_buffered", "--shape", "4097", "--results-dir", data], "was measured under");
}

/// `report --format csv` and `json`: one row per measurement (each view's entries), loadable in
/// one call; read here with Python's csv module (pandas where it is installed).
#[test]
fn report_data_is_one_row_per_measurement() {
    use kernel_lab::analysis::store;
    let dir = tempfile::tempdir().unwrap();
    let data = committed();
    let mut args = vec!["report", "--format", "csv"];
    args.extend(data.iter().flat_map(|c| ["--results-dir", c.as_str()]));
    let out = lab(&args, dir.path());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = dir.path().join("report.csv");
    std::fs::write(&csv, &out.stdout).unwrap();
    let measurements: usize = data
        .iter()
        .map(|d| store::views(&store::read(&[d.into()]).unwrap(), store::Group::Model).iter().map(|v| v.entries.len()).sum::<usize>())
        .sum();
    let script = r#"
import csv, sys
try:
    import pandas
    frame = pandas.read_csv(sys.argv[1])
    rows, columns = len(frame), list(frame.columns)
except ImportError:
    with open(sys.argv[1], newline="") as f:
        records = list(csv.DictReader(f))
    rows, columns = len(records), list(records[0].keys())
    assert all(len(r) == len(columns) and None not in r for r in records), "every row has every column"
    assert all(r["status"] in ("ok", "failed", "skipped") for r in records)
    assert all(r["rate"] == "" or float(r["rate"]) >= 0 for r in records)
print(rows, ",".join(columns))
"#;
    let py = Command::new("python3").args(["-c", script]).arg(&csv).output().unwrap();
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
    let said = String::from_utf8_lossy(&py.stdout);
    let (rows, columns) = said.trim().split_once(' ').unwrap();
    assert_eq!(rows.parse::<usize>().unwrap(), measurements, "one row per measurement");
    for c in ["run", "card", "family", "variant", "shape", "config", "status", "rate", "unit", "ratio", "ratio_low", "ratio_high"] {
        assert!(columns.split(',').any(|x| x == c), "{c} in {columns}");
    }
    for c in ["regime", "flush", "sm_mhz", "power_w"] {
        assert!(columns.split(',').any(|x| x == c), "{c} in {columns}");
    }
    args[2] = "json";
    let out = lab(&args, dir.path());
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(rows.as_array().unwrap().len(), measurements);
}

/// A run saved as a named baseline, then compared by name: `compare --baseline NAME` finds it
/// under --results-dir and sets it against the newest results of its GPU model.
#[test]
fn a_named_baseline_is_saved_and_compared() {
    use kernel_lab::analysis::baselines;
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let model = results.join("nvidia-h200-sm_90");
    std::fs::create_dir_all(&model).unwrap();
    let run = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nvidia-h200-sm_90/2026-11-30T21-19-56Z-vm-gpu0-1208.jsonl");
    let copy = model.join("run.jsonl");
    std::fs::copy(run, &copy).unwrap();
    let saved = baselines::save(&copy, "before-change").unwrap();
    assert!(saved.ends_with("nvidia-h200-sm_90/baselines/before-change.jsonl"), "{}", saved.display());
    let out = lab(&["compare", "--baseline", "before-change"], dir.path());
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("0 slower"), "{text}{err}");
    assert!(err.contains("baseline 'before-change'"), "{err}");
    // The report reads the run once, not its baseline copy again.
    let out = lab(&["report", "--format", "csv"], dir.path());
    let once = String::from_utf8_lossy(&out.stdout).lines().count();
    std::fs::remove_dir_all(model.join("baselines")).unwrap();
    let out = lab(&["report", "--format", "csv"], dir.path());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), once);
    one_line_error(&["compare", "--baseline", "before-change"], "no baseline 'before-change'");
    one_line_error(&["bench", "sgemm", "--save-baseline", "../up"], "baseline name '../up'");
}

#[test]
fn advise_against_takes_pytorchs_steps_instead_of_a_workload() {
    one_line_error(&["advise", "--against", "no-such-steps.jsonl"], "no-such-steps.jsonl");
    one_line_error(&["advise", "--against", "steps.jsonl", "--workload", "bert-base"], "cannot be used with");
    one_line_error(&["advise"], "--workload");
}
