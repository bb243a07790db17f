//! Tests that need a GPU. Without one they are listed as ignored ("needs a GPU"), never passed;
//! `cargo make test` runs them with --include-ignored where nvidia-smi lists a GPU.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use kernel_lab::analysis::store;
use kernel_lab::error::exit;
use kernel_lab::facts::kernels;
use kernel_lab::gpu::device::Gpu;
use kernel_lab::measure::families::inputs::{memcpy_d2d, Readback};
use kernel_lab::measure::families::{self, Shape};
use kernel_lab::measure::plan::{self, Options};
use kernel_lab::measure::runner;
use kernel_lab::schema::entry::{Entry, Kind, Status};

fn gpu() -> Gpu {
    Gpu::open(0).expect("this test needs a GPU")
}

fn run(opts: &Options, seed: u64) -> Vec<Entry> {
    let mut gpu = gpu();
    let plans = plan::plan(opts, seed).unwrap();
    runner::run(&mut gpu, &plans, opts, seed).unwrap()
}

/// The CLI beside this test binary (a device bundle's dist/), else the one cargo built.
fn cli() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("kernel-lab"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_kernel-lab").into())
}

/// The CLI, with its results in `dir` (but `verify`, which stores none), the kernel set in `set`
/// (None: the lab's own).
fn lab(args: &[&str], dir: &Path, set: Option<&Path>) -> Output {
    let mut cmd = Command::new(cli());
    cmd.args(args);
    if args[0] != "verify" {
        cmd.arg("--results-dir").arg(dir);
    }
    if let Some(s) = set {
        cmd.env(kernels::ENV, s);
    }
    cmd.output().unwrap()
}

/// The test-only kernel set, beside the lab's own.
fn test_set() -> PathBuf {
    let main = kernels::locate(&std::env::current_exe().unwrap()).unwrap();
    main.with_file_name(kernels::TEST_DIR)
}

fn entries(dir: &Path) -> Vec<Entry> {
    store::read(&[dir.to_path_buf()]).unwrap().iter().flat_map(|r| r.entries().cloned().collect::<Vec<_>>()).collect()
}

#[test]
#[ignore = "needs a GPU"]
fn every_variant_verifies_at_the_quick_sizes() {
    let entries = run(&Options { quick: true, ..Options::default() }, 42);
    let failed: Vec<String> =
        entries.iter().filter(|e| e.status == Status::Failed).map(|e| format!("{} {}: {:?}", e.variant, e.shape, e.reason)).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    for fam in ["memory", "sgemm"] {
        assert!(entries.iter().any(|e| e.family == fam && e.kind == Kind::Baseline && e.status == Status::Ok), "{fam} baseline");
    }
}

#[test]
#[ignore = "needs a GPU"]
fn the_gpu_comparison_finds_what_the_cpu_check_finds() {
    use kernel_lab::gpu::compare::Compare;
    use kernel_lab::measure::verify::{self, Precision};
    let gpu = gpu();
    let n = 3_000_017;
    let want: Vec<f64> = (0..n).map(|i| ((i * 7919 % 1999) as f64 - 999.0) / 64.0).collect();
    let mut out: Vec<f32> = want.iter().map(|&w| w as f32).collect();
    for (i, d) in [(2_000_003, 0.5), (17, 0.25), (2_999_999, -1.0)] {
        out[i] += d;
    }
    out[1_500_000] = f32::NAN;
    out[1_500_001] = f32::INFINITY;
    let reference = gpu.stream.clone_htod(&want).unwrap();
    let mut compare = Compare::new(&gpu).unwrap();
    for p in [Precision::Fp32, Precision::Tf32] {
        let cpu = verify::check(&out, n, &|i| (i, want[i]), p);
        let ref2: f64 = want.iter().map(|w| w * w).sum();
        let sums =
            compare.run(&gpu, &gpu.stream.clone_htod(&out).unwrap(), &reference, verify::element_bound(p, ref2, n), p.rounding()).unwrap();
        let dev = verify::from_sums(&sums, n, p, None);
        assert_eq!((dev.beyond, dev.nonfinite, sums.first_beyond), (cpu.beyond, cpu.nonfinite, Some(17)), "{p:?}: {}", cpu.describe());
        assert_eq!((dev.beyond, dev.nonfinite), (5, 2), "{p:?}");
        assert!(dev.error.is_nan() && cpu.error.is_nan());
        assert!((dev.worst / cpu.worst - 1.0).abs() < 1e-12, "{} {}", dev.worst, cpu.worst);
    }
    // A 16-bit output may be off by its rounding's share of its own value beyond the bound, on the
    // GPU as on the CPU: every element here is off by 0.99 of the bound and an eighth of a bf16 ulp
    // of itself (a quarter of the allowance).
    let p = Precision::Bf16Storage;
    let ref2: f64 = want.iter().map(|w| w * w).sum();
    let bound = verify::element_bound(p, ref2, n);
    let off: Vec<f32> = want.iter().map(|&w| (w + w.signum() * (0.99 * bound + w.abs() / 1024.0)) as f32).collect();
    let cpu = verify::check(&off, n, &|i| (i, want[i]), p);
    let dev = compare.run(&gpu, &gpu.stream.clone_htod(&off).unwrap(), &reference, bound, p.rounding()).unwrap();
    assert_eq!((cpu.beyond, dev.beyond), (0, 0), "{}", cpu.describe());
    let strict = compare.run(&gpu, &gpu.stream.clone_htod(&off).unwrap(), &reference, bound, 0.0).unwrap();
    assert!(strict.beyond > n as u64 / 2, "without the allowance most are beyond: {}", strict.beyond);
    // Integers, exactly: one off by one.
    let ints: Vec<i32> = (0..n as i32).map(|i| i % 1000 - 500).collect();
    let mut got = ints.clone();
    got[123_456] += 1;
    let reference = gpu.stream.clone_htod(&ints.iter().map(|&x| x as f64).collect::<Vec<_>>()).unwrap();
    let sums = compare.run(&gpu, &gpu.stream.clone_htod(&got).unwrap(), &reference, 0.0, 0.0).unwrap();
    assert_eq!((sums.beyond, sums.first_beyond, sums.nonfinite, sums.diff2), (1, Some(123_456), 0, 1.0));
    let sums = compare.run(&gpu, &gpu.stream.clone_htod(&ints).unwrap(), &reference, 0.0, 0.0).unwrap();
    assert_eq!((sums.beyond, sums.first_beyond, sums.diff2), (0, None, 0.0));
}

#[test]
#[ignore = "needs a GPU"]
fn an_unwritten_output_fails_the_check() {
    let mut gpu = gpu();
    let fam = families::get("sgemm").unwrap();
    let mut case = fam.prepare(&mut gpu, &Shape(vec![96, 80, 64]), 3).unwrap();
    case.poison(&gpu).unwrap();
    gpu.sync().unwrap();
    let c = case.check(&gpu, fam.info().precision).unwrap();
    assert!(!c.passed() && c.nonfinite == 96 * 80, "{}", c.describe());
}

#[test]
#[ignore = "needs a GPU"]
fn a_read_back_holds_what_the_work_queued_before_it_wrote() {
    // A check reads the output through a pinned buffer while milliseconds of copies are still
    // queued ahead of its own: it must see their result, not the buffer's last contents.
    let gpu = gpu();
    let n = 64 << 20;
    let src = gpu.stream.clone_htod(&vec![1.0f32; n]).unwrap();
    let mut dst = gpu.stream.alloc_zeros::<f32>(n).unwrap();
    let mut back = Readback::default();
    assert!(back.read(&gpu, &dst).unwrap().iter().all(|&x| x == 0.0));
    for _ in 0..50 {
        memcpy_d2d(&gpu, &mut dst, &src).unwrap();
    }
    let got = back.read(&gpu, &dst).unwrap();
    let stale = got.iter().filter(|&&x| x != 1.0).count();
    assert_eq!(stale, 0, "{stale} of {n} elements read back before the copies wrote them");
}

#[test]
#[ignore = "needs a GPU"]
fn odd_and_thin_shapes_verify_or_skip_with_a_reason() {
    // sgemm at edges of every tile; the Tensor Core families where TMA needs A and B given a
    // padded pitch (k and n not multiples of 16 bytes, and rows shorter than one 16-byte chunk).
    let odd = || vec!["1001x1003x1005", "130x77x33", "9x5x3", "1"];
    let tensor_core = ["fp16", "bf16", "tf32", "int8", "fp8", "fp8_e5m2", "linear_fp16", "linear_bf16"].map(|f| (f, odd()));
    for (family, sizes) in [("sgemm", vec!["1023", "257x64x129", "8x1000x3"])].into_iter().chain(tensor_core) {
        let opts = Options { filter: Some(family.into()), sizes: sizes.into_iter().map(String::from).collect(), ..Options::default() };
        for e in run(&opts, 7) {
            match e.status {
                Status::Ok => assert!(e.verify.as_ref().unwrap().passed()),
                Status::Skipped => assert!(e.reason.as_ref().is_some_and(|r| !r.is_empty())),
                Status::Failed => panic!("{} {}: {:?}", e.variant, e.shape, e.reason),
            }
        }
    }
}

/// Every variant of `family` passes at `sizes` and `fuzz` random shapes, or is skipped where its
/// manifest says it cannot take the shape; the first rung runs at every shape but those of a
/// pass only the vendor's routine runs (a gradient, a batch norm in training), where it is
/// skipped with that reason; the cuDNN baseline passes at every shape, or is skipped because
/// cuDNN is not installed (any other error of cuDNN's fails it).
fn verifies_against_cudnn(family: &str, sizes: &[&str], fuzz: usize) {
    let opts = Options {
        filter: Some(family.into()),
        sizes: sizes.iter().map(|s| s.to_string()).collect(),
        fuzz: Some(fuzz),
        ..Options::default()
    };
    let entries = run(&opts, 5);
    let vendor_only =
        |e: &Entry| e.reason.as_ref().is_some_and(|r| r.starts_with("needs the forward pass") || r.starts_with("needs the inference pass"));
    let first: Vec<&Entry> = entries.iter().filter(|e| e.variant.starts_with(&format!("{family}_01_"))).collect();
    assert_eq!(first.len(), sizes.len() + fuzz);
    for e in &first {
        assert!(e.status == Status::Ok || (e.status == Status::Skipped && vendor_only(e)), "{e:?}");
    }
    assert_eq!(entries.iter().filter(|e| e.kind == Kind::Baseline).count(), sizes.len() + fuzz);
    for e in &entries {
        match e.status {
            Status::Ok => assert!(e.verify.as_ref().unwrap().passed()),
            Status::Skipped if e.kind == Kind::Baseline => {
                assert!(e.reason.as_ref().is_some_and(|r| r.contains("cuDNN is not installed")), "{e:?}")
            }
            Status::Skipped => assert!(e.reason.as_ref().is_some_and(|r| r.contains("needs")), "{e:?}"),
            Status::Failed => panic!("{} {}: {:?}", e.variant, e.shape, e.reason),
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn convolutions_verify_at_odd_shapes_and_through_the_device_reference() {
    // Channels off the 16-byte runs (the stem's 3, 5), strided and unpadded windows, an image
    // smaller than the filter's reach, and one above 2^30 multiply-adds, whose reference is the
    // GPU's sum of tap GEMMs anchored to the CPU's sample.
    verifies_against_cudnn(
        "conv_fp16",
        &["3x23x19x3-17x7x7-s2", "2x9x9x5-33x3x3-s3-p0", "1x2x3x8-8x3x3", "4x15x15x64-72x1x1-s2", "2x9x9x16-24x3x3", "32x56x56x64-64x3x3"],
        6,
    );
}

#[test]
#[ignore = "needs a GPU"]
fn convolution_gradients_verify_at_odd_shapes_and_through_the_device_reference() {
    // cuDNN's two gradients: strides whose windows leave input rows unread (10 - 3 = 7 is not a
    // multiple of 3), the stem's 3 channels, a 1x1 at stride 2, and each pass above 2^30
    // multiply-adds (dx through the GPU's forward reference of the turned filters, dw through
    // its tap GEMMs). The rungs run none of them and say why.
    verifies_against_cudnn(
        "conv_fp16",
        &[
            "2x10x10x5-33x3x3-s3-p0-dgrad",
            "2x10x10x5-33x3x3-s3-p0-wgrad",
            "3x23x19x3-17x7x7-s2-wgrad",
            "4x15x15x64-72x1x1-s2-dgrad",
            "4x15x15x64-72x1x1-s2-wgrad",
            "32x56x56x64-64x3x3-dgrad",
            "32x56x56x64-64x3x3-wgrad",
        ],
        0,
    );
}

#[test]
#[ignore = "needs a GPU"]
fn the_convolution_baseline_times_plans_of_cudnns_graph_api_for_every_pass() {
    // Each pass's graph makes plans (PyTorch's engines) that run, so a graph cuDNN silently
    // refuses, or plans whose every launch fails, cannot leave the baseline on the legacy
    // algorithms alone. A strided shape whose input, filters and output differ in size, so a
    // tensor bound to another's role would fault or fail, and `launch` refuses buffers of the
    // wrong sizes. Whichever candidate wins is held to
    // the f64 reference by the conv family's own checks (the two tests above, the suites).
    use half::f16;
    use kernel_lab::gpu::dnn_conv::{ConvDims, ConvOp, Pass};
    let gpu = gpu();
    let d = ConvDims { n: 4, h: 16, w: 16, c: 32, k: 64, r: 3, stride: 2, pad: 1 };
    let (x, w, y) = (4 * 16 * 16 * 32, 64 * 3 * 3 * 32, 4 * 8 * 8 * 64);
    let buffer =
        |n: usize| gpu.stream.clone_htod(&(0..n).map(|i| f16::from_f32((i % 7) as f32 / 8.0 - 0.375)).collect::<Vec<_>>()).unwrap();
    for (pass, a, b, out) in [(Pass::Forward, x, w, y), (Pass::Data, y, w, x), (Pass::Filter, x, y, w)] {
        let (a, b, mut out) = (buffer(a), buffer(b), buffer(out));
        match ConvOp::new(&gpu, d, pass, &a, &b, &mut out) {
            Ok(mut op) => {
                assert!(op.graph_plans_timed() > 0, "{pass:?}: no plan of cuDNN's graph API ran");
                // Buffers in each other's roles are refused before cuDNN reads them.
                assert!(matches!(op.launch(&b, &a, &mut out), Err(kernel_lab::LabError::Usage(_))), "{pass:?}: swapped buffers ran");
            }
            Err(kernel_lab::LabError::Unavailable(why)) => eprintln!("skipped: {why}"),
            Err(e) => panic!("{pass:?}: {e}"),
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn batch_norms_verify_with_and_without_whole_vectors_and_tables() {
    // Channels off the 4-element accesses (3, 7), past the rung's table of 2048 (2056), and the
    // stem's.
    verifies_against_cudnn("batchnorm_fp16", &["2x9x7x3", "3x5x5x7", "2x3x3x2056", "8x112x112x64"], 4);
}

#[test]
#[ignore = "needs a GPU"]
fn batch_norms_in_training_verify_every_output() {
    // cuDNN's forward and backward in training, y or dx and each per-channel array checked:
    // channels off 4-element accesses (3, 7), past 2048 (2056), and the stem's at batch 8. The
    // rung runs neither and says why.
    verifies_against_cudnn(
        "batchnorm_fp16",
        &["2x9x7x3-train", "2x9x7x3-backward", "3x5x5x7-backward", "2x3x3x2056-train", "8x112x112x64-train", "8x112x112x64-backward"],
        0,
    );
}

#[test]
#[ignore = "needs a GPU"]
fn timing_gives_a_rate_and_checks_again() {
    let opts = Options {
        filter: Some("memory_03_stream_vec4_copy".into()),
        sizes: vec!["64M".into()],
        quick: true,
        time: true,
        ..Options::default()
    };
    let entries = run(&opts, 11);
    let v = entries.iter().find(|e| e.variant == "memory_03_stream_vec4_copy").unwrap();
    assert_eq!(v.status, Status::Ok, "{:?}", v.reason);
    let t = v.time.unwrap();
    assert!(t.n >= kernel_lab::schema::run::FLOOR_SAMPLES && t.median_ms > 0.0);
    assert!(v.verify_after.as_ref().unwrap().passed());
    assert!(v.rate.unwrap() > 0.0 && v.vs_baseline.unwrap() > 0.0);
    // GPU machines have NVML: the timed launches carry clocks and power.
    let t = v.telemetry.as_ref().expect("NVML telemetry with a timed entry");
    assert!(t.readings > 0 && t.sm_mhz_median > 0 && t.power_w > 0.0, "{t:?}");
}

#[test]
#[ignore = "needs a GPU"]
fn the_peak_family_is_measured_against_the_sheet() {
    let gpu = gpu();
    let opts = Options { filter: Some("peak_01_simt_fma_fp32".into()), quick: true, time: true, ..Options::default() };
    let entries = run(&opts, 5);
    let e = entries.iter().find(|e| e.variant == "peak_01_simt_fma_fp32").unwrap();
    assert_eq!(e.status, Status::Ok, "{:?}", e.reason);
    assert!(!entries.iter().any(|e| e.kind == Kind::Baseline), "the peak family has no vendor baseline");
    if kernel_lab::facts::sheet::for_device(&gpu.info.name, gpu.info.sms).is_some() {
        let pct = e.vs_peak.expect("a sheet GPU has a dense fp32 rate");
        assert!(pct > 0.2 && pct < 1.3, "fp32 FMA at {:.0}% of the sheet", 100.0 * pct);
    }
}

#[test]
#[ignore = "needs a GPU"]
fn a_tuning_candidate_compiles_verifies_and_times() {
    use kernel_lab::gpu::registry;
    use kernel_lab::measure::tune;
    use kernel_lab::schema::run::Policy;
    use kernel_lab::schema::tuning::CandidateStatus;
    let mut gpu = gpu();
    let v = registry::by_name("sgemm_08_double_buffered").unwrap();
    let shape = Shape(vec![512, 384, 260]);
    let other = v.config().with("BK", 16).with("WNITER", 4);
    for config in [v.config(), other] {
        let c = tune::evaluate(&mut gpu, v, &shape, &config, 5, &Policy::quick()).unwrap();
        assert_eq!(c.status, CandidateStatus::Ok, "{}: {:?}", config.label(), c.reason);
        assert!(c.median_ms.unwrap() > 0.0 && c.registers.unwrap() > 0 && c.blocks_per_sm.unwrap() > 0);
    }
    // Refused by its own constraints before compiling: rejected, not an error of the search.
    let too_big = v.config().with("BLOCK_X", 1024).with("BM", 256).with("BN", 256);
    let c = tune::evaluate(&mut gpu, v, &shape, &too_big, 5, &Policy::quick()).unwrap();
    assert_eq!(c.status, CandidateStatus::Rejected, "{c:?}");
}

/// The fault-isolation run: `bench sgemm --size 4096` over the test set, whose rung 0 writes out
/// of bounds and whose rung 5 never returns, against the same bench over the lab's own set.
#[test]
#[ignore = "needs a GPU"]
fn a_faulting_and_a_hanging_variant_change_nothing_for_the_others() {
    let (clean_dir, faulty_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = ["bench", "sgemm", "--size", "4096", "--seed", "13"];
    let clean = lab(&args, clean_dir.path(), None);
    assert_eq!(clean.status.code(), Some(0), "{}", String::from_utf8_lossy(&clean.stderr));
    let started = Instant::now();
    let faulty = lab(&args, faulty_dir.path(), Some(&test_set()));
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&faulty.stdout);
    eprintln!("{stdout}\nthe run with both broken variants took {:.0} s", took.as_secs_f64());
    assert_eq!(faulty.status.code(), Some(exit::FAILED as i32), "a failed entry is exit 1");

    let runs = store::read(&[faulty_dir.path().to_path_buf()]).unwrap();
    assert_eq!(runs.len(), 1);
    assert!(runs[0].complete, "the results file is whole: its end record is there");
    let bad: Vec<&Entry> = runs[0].entries().filter(|e| e.status == Status::Failed && e.variant.contains("_fault_")).collect();
    let reason = |name: &str| bad.iter().find(|e| e.variant == name).and_then(|e| e.reason.clone()).unwrap_or_default();
    assert_eq!(bad.len(), 2, "only the two broken variants fail: {bad:#?}");
    assert!(reason("sgemm_00_fault_oob").contains("ILLEGAL_ADDRESS"), "{}", reason("sgemm_00_fault_oob"));
    let hang = reason("sgemm_05_fault_hang");
    assert!(hang.contains("no completion after"), "{hang}");
    let limit: f64 = hang.split("after ").nth(1).and_then(|s| s.split(' ').next()).and_then(|s| s.parse().ok()).unwrap();
    assert!(took < Duration::from_secs_f64(limit + 60.0), "the run ends within a minute of the hang limit ({limit} s): {took:?}");

    let ok_clean = entries(clean_dir.path());
    for e in runs[0].entries().filter(|e| !e.variant.contains("_fault_") && !e.variant.contains("_test_")) {
        assert_eq!(e.status, Status::Ok, "{}: {:?}", e.variant, e.reason);
        let twin = ok_clean.iter().find(|c| c.variant == e.variant).unwrap();
        if e.kind != Kind::Baseline && e.telemetry.as_ref().is_none_or(|t| !t.throttled()) {
            let (a, b) = (e.vs_baseline.unwrap(), twin.vs_baseline.unwrap());
            eprintln!("{}: {a:.3}x with the broken variants, {b:.3}x without", e.variant);
            assert!((a / b - 1.0).abs() < 0.03, "{}: {a:.3} vs {b:.3}", e.variant);
        }
    }
}

#[test]
#[ignore = "needs a GPU"]
fn one_wrong_element_or_a_piece_added_twice_fails_with_its_index() {
    // At 4096³ a check of a sample (4,096 random elements, the last row and column) would pass
    // both products most of the time; every element is compared, and the first one beyond is
    // named. One element off by 1 leaves the error norm under fp32's tolerance: only the element
    // bound catches it.
    let dir = tempfile::tempdir().unwrap();
    let args = ["verify", "sgemm_08_test_corrupt_one,sgemm_03_test_piece_twice", "--size", "4096", "--seed", "5", "--format", "json"];
    let out = lab(&args, dir.path(), Some(&test_set()));
    assert_eq!(out.status.code(), Some(exit::FAILED as i32), "{}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let (n, tolerance) = (4096u64, 5e-5);
    for (variant, want_index) in [("sgemm_08_test_corrupt_one", Some((n / 2 + 5) * n + n / 2 + 7)), ("sgemm_03_test_piece_twice", None)] {
        let r = rows.iter().find(|r| r["variant"] == variant).unwrap_or_else(|| panic!("{variant}: {rows:#?}"));
        let reason = r["reason"].as_str().unwrap_or_default();
        eprintln!("{variant}: {reason}");
        assert_eq!(r["status"], "failed", "{variant}");
        assert_eq!(r["compared"].as_u64(), Some(n * n), "{variant}: every element compared");
        let first: u64 = reason.split("first bad: [").nth(1).and_then(|s| s.split(']').next()).and_then(|s| s.parse().ok()).unwrap();
        let (row, col) = (first / n, first % n);
        assert!(row < n - 1 && col < n - 1, "{variant}: [{first}] lies in an interior tile, where no edge sample looks");
        if let Some(want) = want_index {
            assert_eq!(first, want, "{variant}");
            assert_eq!(r["beyond"].as_u64(), Some(1), "{variant}: one element");
            assert!(r["error"].as_f64().unwrap() < tolerance, "{variant}: the norm alone passes it");
        } else {
            assert!(r["beyond"].as_u64().unwrap() >= 32 * 32 / 2, "{variant}: a tile's elements");
        }
    }
}

/// A copy of the test set in `dir` where `slowed` stands in for rung 8: renamed to rung 8's name,
/// rung 8 itself left out, as rebuilding rung 8 with the slowdown define would leave the set.
fn set_with_rung_8_slowed(slowed: &str, dir: &Path) {
    let from = test_set();
    let mut set = kernels::KernelSet::load(&from).unwrap();
    set.variants.retain(|v| v.name != "sgemm_08_double_buffered");
    for v in &mut set.variants {
        v.fatbin = v.fatbin.take().map(|f| from.join(f).display().to_string());
        if v.name == slowed {
            v.name = "sgemm_08_double_buffered".into();
        }
    }
    set.write(dir).unwrap();
}

#[test]
#[ignore = "needs a GPU"]
fn compare_calls_a_slowed_kernel_slower_and_exits_1() {
    let args = ["bench", "sgemm_08_double_buffered", "--size", "4096", "--seed", "5"];
    let base = tempfile::tempdir().unwrap();
    let out = lab(&args, base.path(), None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for (slowed, least) in [("sgemm_08_test_slowdown_3pct", 0.02), ("sgemm_08_test_slowdown_2x", 0.4)] {
        let (set, new) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        set_with_rung_8_slowed(slowed, set.path());
        let out = lab(&args, new.path(), Some(set.path()));
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let files: Vec<PathBuf> = [&base, &new].iter().map(|d| store::read(&[d.path().to_path_buf()]).unwrap()[0].path.clone()).collect();
        let cmp = Command::new(cli()).arg("compare").arg("--base").arg(&files[0]).arg("--new").arg(&files[1]).output().unwrap();
        let text = String::from_utf8_lossy(&cmp.stdout);
        eprintln!("{slowed} as rung 8:\n{text}");
        assert_eq!(cmp.status.code(), Some(exit::FAILED as i32), "a slower entry is exit 1");
        let row = text.lines().find(|l| l.contains("sgemm_08_double_buffered")).expect("rung 8 is compared");
        assert!(row.contains("SLOWER"), "{row}");
        let change: f64 = row.split_whitespace().find_map(|w| w.strip_suffix('%')?.parse().ok()).expect("a change in %");
        assert!(-change / 100.0 >= least, "{slowed}: {change}%");
    }
}

#[test]
#[ignore = "needs a GPU"]
fn reruns_add_and_a_killed_bench_keeps_what_it_finished() {
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let out = lab(&["bench", "sgemm_08", "--size", "4096", "--quick"], dir.path(), None);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(runs.len(), 2, "two runs, two files");
    assert!(runs.iter().all(|r| r.entries().any(|e| e.variant == "sgemm_08_double_buffered" && e.status == Status::Ok)));

    // A bench killed halfway: the entries it finished are on disk, the file still reads.
    let killed = tempfile::tempdir().unwrap();
    let mut child = Command::new(cli())
        .args(["bench", "sgemm", "--size", "2048,4096"])
        .arg("--results-dir")
        .arg(killed.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let finished = loop {
        let n = store::read(&[killed.path().to_path_buf()]).map(|r| r.iter().map(|r| r.entries().count()).sum::<usize>()).unwrap_or(0);
        if n >= 4 || Instant::now() > deadline {
            break n;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let runs = store::read(&[killed.path().to_path_buf()]).unwrap();
    assert_eq!(runs.len(), 1);
    assert!(!runs[0].complete, "it was cut short");
    assert!(runs[0].entries().count() >= finished && finished >= 4, "{finished} entries kept");
}

#[test]
#[ignore = "needs two GPUs"]
fn two_gpus_copy_collect_and_scale_verified() {
    let mut gpus: Vec<_> = (0..2).map(|i| Gpu::open(i).expect("this test needs two GPUs")).collect();
    let m = kernel_lab::measure::multi::measure(&mut gpus, &[4 << 10, 16 << 20], &[8, 1 << 20]).unwrap();
    assert_eq!(m.links.len(), 2);
    assert!(m.copies.iter().all(|c| c.gbs > 0.0), "every copy was timed (and checked inside measure)");
    assert_eq!(m.collectives.len(), 4 * 2 * 2, "4 collectives x 2 types x 2 sizes");
    assert!(m.scaling.iter().any(|s| s.gpus == 2 && s.efficiency.is_some()));
}

/// Two identical GPUs bench into one model folder and keep each other's entries.
#[test]
#[ignore = "needs two GPUs"]
fn two_gpus_keep_their_own_entries() {
    let dir = tempfile::tempdir().unwrap();
    for gpu in ["0", "1"] {
        let out = lab(&["bench", "sgemm_08", "--size", "2048", "--quick", "--gpus", gpu], dir.path(), None);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    let cards = store::views(&runs, store::Group::Card);
    assert_eq!(cards.len(), 2, "a view per card");
    assert!(cards.iter().all(|v| v.entries.iter().any(|e| e.variant == "sgemm_08_double_buffered" && e.status == Status::Ok)));
}

#[test]
#[ignore = "needs a GPU"]
fn a_bench_cut_short_resumes_and_its_file_ends_as_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["bench", "sgemm_0", "--size", "256,512", "--quick", "--seed", "7"];
    let out = lab(&args, dir.path(), None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let whole = entries(dir.path());
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    let path = runs[0].path.clone();
    // The kill: the header, the first shape's baseline and three more entries, half a line.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut cut: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    cut.push_str(r#"{"record":"entry","fam"#);
    std::fs::write(&path, &cut).unwrap();
    let resume = ["bench", "sgemm_0", "--size", "256,512", "--quick", "--resume", path.to_str().unwrap()];
    let out = lab(&resume, dir.path(), None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let run = store::read_run(&path).unwrap();
    assert!(run.complete, "the resumed run ends with its end record");
    let keys = |es: &[Entry]| {
        let mut k: Vec<_> = es.iter().map(|e| e.key()).collect();
        k.sort();
        k.dedup();
        k
    };
    let resumed: Vec<Entry> = run.entries().cloned().collect();
    assert_eq!(keys(&resumed), keys(&whole), "every subject, once measured");
    assert_eq!(resumed.iter().filter(|e| e.kind == Kind::Baseline).count(), 3, "the half-done shape's baseline again");
    assert_eq!(store::read(&[dir.path().to_path_buf()]).unwrap().len(), 1, "no second file");
}

#[test]
#[ignore = "needs a GPU"]
fn transfers_time_a_small_kernels_launches_three_ways_and_store_them() {
    // The small copy is checked after its queued launches and after its graph's, in the
    // measurement itself, so a launch that did not run fails the command.
    let dir = tempfile::tempdir().unwrap();
    let out = lab(&["transfers", "--size", "4K"], dir.path(), None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("launches: 100 x memory_04_stream_blocked_copy"));
    let runs = store::read(&[dir.path().to_path_buf()]).unwrap();
    let l = runs[0].records.iter().find_map(|r| match r {
        kernel_lab::schema::run::Record::Transfers(t) => t.launches.clone(),
        _ => None,
    });
    let l = l.expect("the run stores its launches");
    assert!([l.host_us, l.queued_us, l.graph_us].iter().all(|v| v.is_finite() && *v > 0.0), "{l:?}");
}
