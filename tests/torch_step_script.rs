//! `scripts/torch_step.py`'s own arithmetic, run by python3 without PyTorch (a stub module stands
//! in for it; the functions tested touch no GPU): how it sorts a kernel into a category, which
//! `advise --against` compares the model's parts with, and how it counts a profiled step's idle
//! stretches.

use std::process::Command;

/// Runs `body` in python3 with the script imported as `ts`; its stdout, or a panic with stderr.
fn python(body: &str) -> String {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/torch_step.py");
    let prelude = format!(
        "import sys, types, json, glob, importlib.util\n\
         sys.modules['torch'] = types.ModuleType('torch')\n\
         spec = importlib.util.spec_from_file_location('ts', {script:?})\n\
         ts = importlib.util.module_from_spec(spec)\n\
         spec.loader.exec_module(ts)\n"
    );
    let out = Command::new("python3").arg("-c").arg(prelude + body).current_dir(env!("CARGO_MANIFEST_DIR")).output().expect("python3 runs");
    assert!(out.status.success(), "python3 failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Every kernel of the committed profiles sorts into the category recorded beside it: a change
/// to the script's patterns that moves a kernel to another category changes what advise's parts
/// are held to, and must come with profiles taken again.
#[test]
fn the_committed_profiles_kernels_sort_as_recorded() {
    let out = python(
        "n = 0\n\
         for f in sorted(glob.glob('results/*/pytorch/steps.jsonl')):\n\
         \x20   for line in open(f):\n\
         \x20       for k in (json.loads(line).get('profile') or {}).get('top', []):\n\
         \x20           if 'category' in k:\n\
         \x20               n += 1\n\
         \x20               got = ts.category(k['kernel'])\n\
         \x20               if got != k['category']:\n\
         \x20                   print('MOVED', k['category'], '->', got, k['kernel'][:100])\n\
         print('sorted', n)\n",
    );
    assert!(!out.contains("MOVED"), "{out}");
    let n: usize = out.trim().strip_prefix("sorted ").unwrap().parse().unwrap();
    assert!(n > 200, "the profiles list their kernels with categories: {n}");
    // The order of the patterns matters: cuDNN's batch norms are normalisation, a cast is no
    // convolution, a fused optimizer's foreach kernel is the optimizer's.
    let out = python(
        "for k in ['void cudnn::bn_fw_inf_1C11_kernel_NCHW<float>', \
         'void at::native::float16_copy_kernel_cuda_convert', 'sm90_xmma_fprop_implicit_gemm_f16', \
         'nvjet_sm90_hsh_128x256_64x4', 'multi_tensor_apply_kernel<FusedSgdMathFunctor>', \
         'cudnn_generated_fort_native_sdpa_sm90_flash_fprop']:\n\
         \x20   print(ts.category(k))\n",
    );
    assert_eq!(out.lines().collect::<Vec<_>>(), ["normalisation", "element-wise", "convolution", "gemm", "optimizer", "attention"]);
}

/// The idle stretches between activities (overlapping ones merged), counted and summed by
/// length, the time outside the first and last, and the longest with their neighbours.
#[test]
fn a_profiles_idle_stretches_are_counted_by_length() {
    // Activities in microseconds: a gap of 2 (a to b), b to d overlapping c, 70 (to e), 390 (to
    // f), 3 (to g, on a bin's edge: a bin holds its upper bound); the step is 0.6 ms, the
    // activities span 0.505 ms.
    let out = python(
        "acts = [(12, 20, 'b'), (0, 10, 'a'), (20, 30, 'c'), (25, 28, 'd'), (100, 110, 'e'), (504, 505, 'g'), (500, 501, 'f')]\n\
         print(json.dumps(ts.idle_stretches(acts, 0.6)))\n\
         print(json.dumps(ts.idle_stretches([], 0.5)))\n\
         print(json.dumps(sum(t - s for s, t, _, _ in ts.merged(acts))))\n",
    );
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let g = &lines[0];
    assert_eq!(g["up_to_us"], serde_json::json!([3, 10, 50, 200, null]));
    assert_eq!(g["calls"], serde_json::json!([2, 0, 0, 1, 1]));
    assert_eq!(g["ms"], serde_json::json!([0.005, 0.0, 0.0, 0.07, 0.39]));
    assert!((g["outside_ms"].as_f64().unwrap() - 0.095).abs() < 1e-9, "{g}");
    let longest: Vec<(f64, &str, &str)> = g["longest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["us"].as_f64().unwrap(), l["after"].as_str().unwrap(), l["before"].as_str().unwrap()))
        .collect();
    assert_eq!(longest, [(390.0, "e", "f"), (70.0, "c", "e"), (3.0, "f", "g"), (2.0, "a", "b")]);
    // No activity: the whole step is outside.
    assert_eq!(lines[1]["calls"], serde_json::json!([0, 0, 0, 0, 0]));
    assert_eq!(lines[1]["outside_ms"], serde_json::json!(0.5));
    // The busy time, what the step's launch gaps are its time less: each overlap counted once.
    assert_eq!(lines[2], serde_json::json!(40));
}
