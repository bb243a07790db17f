//! Tolerances, the error norm, NaN handling, and the statistics of timing samples.

use approx::assert_relative_eq;
use kernel_lab::measure::verify::{check, Precision};
use kernel_lab::schema::stats::{percentile, Summary};

/// `output` against `want`, element by element.
fn against(output: &[f32], want: &[f64], p: Precision) -> kernel_lab::measure::verify::Check {
    check(output, want.len(), &|i| (i, want[i]), p)
}

/// Every precision with its tolerance and why it has that value (the measured figures are the
/// H200's committed runs at 8192³; a wrong or missing term of a sum of k = 8192 moves the norm by
/// about 1/sqrt(k) = 1.1e-2, so every tolerance sits below that and above what rounding leaves).
const TOLERANCES: [(Precision, f64, &str); 7] = [
    (Precision::Exact, 0.0, "copies and integer sums have one answer"),
    (Precision::Fp32, 5e-5, "fp32 sums land near sqrt(k) * 6e-8 = 5e-6 at k = 8192; measured 1.7e-6"),
    (Precision::Fp16F32Acc, 1e-3, "exact products, truncating Tensor Core adders; cuBLAS measured 1e-5"),
    (Precision::Tf32, 5e-3, "inputs rounded to a 10-bit mantissa (2^-11); measured 7e-4"),
    (Precision::Fp8F32Acc, 5e-3, "e4m3 products summed narrower than fp32 between promotions; measured 1e-4 to 2.9e-4"),
    (Precision::Fp16Storage, 2e-3, "outputs rounded to 11 significant bits, at most 2^-11 each; softmax and layer norm measured 2e-4 to 4e-4 on the H100"),
    (Precision::Bf16Storage, 1e-2, "outputs rounded to 8 significant bits, at most 2^-8 each; measured 1.6e-3 to 2.3e-3 on the H100"),
];

#[test]
fn tolerances_per_precision() {
    for (p, want, why) in TOLERANCES {
        assert_eq!(p.tolerance(), want, "{p:?}: {why}");
        assert!(want < 1.1e-2, "{p:?}: a wrong term of a long sum must fail");
    }
    let fp32 = Precision::Fp32.tolerance();
    assert!(fp32 > 1e-6 && fp32 < 1e-3, "fp32 tolerance {fp32} must sit between rounding and a bug");
}

#[test]
fn an_error_a_little_above_each_tolerance_fails_and_a_little_below_passes() {
    // A reference of mixed signs and sizes; the output is every element scaled by (1 + e), so the
    // relative error norm is e (to f32's rounding of each element, 6e-8).
    let want: Vec<f64> = (0..64).map(|i| ((i * 37 % 17) as f64 - 8.0) * 0.25 + 0.125).collect();
    let off = |e: f64| -> Vec<f32> { want.iter().map(|w| (w * (1.0 + e)) as f32).collect() };
    for (p, tol, _) in TOLERANCES {
        if tol == 0.0 {
            assert!(against(&off(0.0), &want, p).passed(), "{p:?}: exact passes");
            let mut one_ulp = off(0.0);
            one_ulp[5] = f32::from_bits(one_ulp[5].to_bits() + 1);
            let c = against(&one_ulp, &want, p);
            assert!(!c.passed() && c.first_bad.len() == 1, "{p:?}: one ulp fails: {}", c.describe());
            continue;
        }
        let above = against(&off(tol * 1.02), &want, p);
        let below = against(&off(tol * 0.98), &want, p);
        assert!(!above.passed(), "{p:?}: {}", above.describe());
        assert!(below.passed(), "{p:?}: {}", below.describe());
        assert_relative_eq!(above.error, tol * 1.02, max_relative = 1e-3);
        assert_eq!((above.tolerance, below.tolerance, above.compared), (tol, tol, want.len()));
        // Scaled by at most 2.1 times the tolerance over an RMS of 1.2: within the element bound, so
        // the norm alone decides.
        assert_eq!((above.beyond, below.beyond), (0, 0), "{p:?}");
    }
}

#[test]
fn a_16_bit_output_may_be_off_by_its_rounding_beyond_the_element_bound() {
    // Ten thousand elements of 1e-3 and one of 1: RMS 0.01, so bf16's element bound is
    // 4 x 1e-2 x 0.01 = 4e-4, and the large element's rounding in bf16 alone can reach 1/256.
    let mut want = vec![1e-3f64; 10_000];
    want[7] = 1.0;
    let at = |d: f32| -> Vec<f32> {
        let mut out: Vec<f32> = want.iter().map(|&w| w as f32).collect();
        out[7] += d;
        out
    };
    for (p, rounding) in [(Precision::Bf16Storage, 1.0 / 256.0), (Precision::Fp16Storage, 1.0 / 2048.0)] {
        assert_eq!(p.rounding(), rounding, "{p:?}: half an ulp of the significand");
        let bound = 4.0 * p.tolerance() * 0.01;
        let within = against(&at((0.8 * rounding) as f32), &want, p);
        assert!(0.8 * rounding > bound && within.passed(), "{p:?}: a rounded element passes: {}", within.describe());
        let beyond = against(&at((rounding + 2.0 * bound) as f32), &want, p);
        assert!(!beyond.passed() && beyond.beyond == 1 && beyond.first_bad[0].0 == 7, "{p:?}: {}", beyond.describe());
    }
    assert_eq!(Precision::Fp32.rounding(), 0.0, "fp32's rounding is inside its tolerance");
}

#[test]
fn an_element_is_beyond_when_off_by_more_than_the_element_bound_times_the_tolerance_times_the_rms() {
    // RMS 2: with fp32, more than 4 x 5e-5 x 2 = 4e-4 off is beyond, and listed.
    assert_eq!(kernel_lab::measure::verify::ELEMENT_BOUND, 4.0);
    let want = [2.0, -2.0, 2.0, -2.0];
    let c = against(&[2.0, -2.0 - 4.8e-4, 2.0 + 3.2e-4, -2.0], &want, Precision::Fp32);
    assert_eq!(c.first_bad.iter().map(|b| b.0).collect::<Vec<_>>(), [1]);
    assert_eq!(c.beyond, 1);
    assert_relative_eq!(c.first_bad[0].1, -2.0 - 4.8e-4, max_relative = 1e-7);
    assert_eq!(c.first_bad[0].2, -2.0);
    assert_relative_eq!(c.worst, 2.4e-4, max_relative = 1e-3);
    // At most five listed, in index order; all counted.
    let c = against(&[9.0; 8], &[1.0; 8], Precision::Fp32);
    assert_eq!(c.first_bad.iter().map(|b| b.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    assert_eq!(c.beyond, 8);
    // Nothing compared: nothing wrong.
    let c = check::<f32>(&[], 0, &|i| (i, 0.0), Precision::Fp32);
    assert!(c.passed() && c.error == 0.0 && c.compared == 0 && c.first_bad.is_empty());
}

#[test]
fn one_element_beyond_the_bound_fails_though_the_norm_passes() {
    // A million elements of RMS 1, one off by 1e-2: the norm is 1e-5, under fp32's 5e-5, and a
    // sample of a few thousand would miss the element; counted, it fails the check.
    let n = 1 << 20;
    let want: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let mut out: Vec<f32> = want.iter().map(|&w| w as f32).collect();
    out[777_777] += 1e-2;
    let c = against(&out, &want, Precision::Fp32);
    assert!(c.error < Precision::Fp32.tolerance(), "{}", c.describe());
    assert_eq!((c.beyond, c.first_bad[0].0), (1, 777_777));
    assert!(!c.passed(), "{}", c.describe());
    assert!(c.describe().contains("1 beyond 2e-4 of the RMS"), "{}", c.describe());
}

#[test]
fn integer_words_match_exactly_or_fail_naming_the_first_mismatch() {
    use kernel_lab::measure::verify::check_words;
    let ok = check_words(None, 4096);
    assert!(ok.passed() && ok.error == 0.0 && ok.compared == 4096 && ok.first_bad.is_empty());
    let bad = check_words(Some((17, 5, 6)), 4096);
    assert!(!bad.passed());
    assert_eq!((bad.error, bad.tolerance, bad.nonfinite, bad.first_bad.as_slice()), (1.0, 0.0, 0, [(17, 5.0, 6.0)].as_slice()));
    assert!(bad.describe().contains("[17] got 5e0 want 6e0"), "{}", bad.describe());
}

#[test]
fn a_check_round_trips_through_json_with_nan_as_null() {
    let c = against(&[f32::NAN], &[1.0], Precision::Fp32);
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains("\"error\":null"), "{json}");
    let back: kernel_lab::measure::verify::Check = serde_json::from_str(&json).unwrap();
    assert!(back.error.is_nan() && back.nonfinite == 1 && back.tolerance == 5e-5);
    let c = against(&[3.0, 4.5], &[3.0, 4.0], Precision::Tf32);
    let back: kernel_lab::measure::verify::Check = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!((back.error, back.compared, back.tolerance), (c.error, 2, 5e-3));
    assert_eq!(c.describe(), "error 1.000e-1 (tolerance 5.0e-3) over 2 elements, 1 beyond 2e-2 of the RMS (worst 1.4e-1), 0 non-finite; first bad: [1] got 4.5e0 want 4e0");
}

#[test]
fn exact_match_passes_and_any_difference_fails_exact() {
    let want = [1.0, -2.0, 3.5];
    let c = against(&[1.0, -2.0, 3.5], &want, Precision::Exact);
    assert!(c.passed());
    assert_eq!(c.error, 0.0);
    let c = against(&[1.0, -2.0, 3.5000002], &want, Precision::Exact);
    assert!(!c.passed());
    assert_eq!(c.first_bad.len(), 1);
    assert_eq!(c.first_bad[0].0, 2);
}

#[test]
fn error_norm_is_relative() {
    let want = [3.0, 4.0];
    let c = against(&[3.0, 4.5], &want, Precision::Fp32);
    assert_relative_eq!(c.error, 0.5 / 5.0, epsilon = 1e-12);
    assert!(!c.passed());
    let c = against(&[3.0, 4.0001], &want, Precision::Fp32);
    assert!(c.passed(), "{}", c.describe());
}

#[test]
fn nan_fails_even_outside_the_compared_elements() {
    let want = [1.0];
    let c = against(&[1.0, f32::NAN], &want, Precision::Fp32);
    assert_eq!(c.error, 0.0);
    assert_eq!(c.nonfinite, 1);
    assert!(!c.passed(), "an unwritten (poisoned) element must fail");
    let c = against(&[f32::NAN], &want, Precision::Fp32);
    assert!(!c.passed() && c.error.is_nan());
    let c = against(&[f32::INFINITY], &want, Precision::Fp32);
    assert!(!c.passed());
}

#[test]
fn zero_reference_with_wrong_output_fails() {
    let c = against(&[1e-3], &[0.0], Precision::Fp32);
    assert!(!c.passed() && c.error.is_infinite());
}

#[test]
fn summary_median_percentiles_and_spread() {
    let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
    assert_eq!(s.n, 5);
    assert_eq!(s.median_ms, 3.0);
    assert_eq!((s.min_ms, s.max_ms), (1.0, 5.0));
    assert_relative_eq!(s.mean_ms, 3.0);
    assert_relative_eq!(s.p10_ms, 1.4);
    assert_relative_eq!(s.p90_ms, 4.6);
    assert_relative_eq!(s.spread_pct(), 100.0 * 3.2 / 3.0);
    assert_relative_eq!(s.stddev_ms, 2.5f64.sqrt());
    let even = Summary::of(&[1.0, 2.0, 3.0, 10.0]).unwrap();
    assert_eq!(even.median_ms, 2.5, "median is robust to one slow sample");
}

#[test]
fn summary_rejects_empty_and_non_finite() {
    assert!(Summary::of(&[]).is_none());
    assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    let one = Summary::of(&[2.0]).unwrap();
    assert_eq!((one.median_ms, one.stddev_ms, one.spread_pct()), (2.0, 0.0, 0.0));
    // A median of zero (launches too short for the events to see) has no spread to divide.
    assert_eq!(Summary::of(&[0.0, 0.0, 0.0]).unwrap().spread_pct(), 0.0);
    assert_eq!(percentile(&[1.0, 2.0], 0.0), 1.0);
    assert_eq!(percentile(&[1.0, 2.0], 100.0), 2.0);
}

#[test]
fn sampling_stops_at_the_interval_or_the_caps() {
    use kernel_lab::schema::run::{Policy, FLOOR_SAMPLES};
    let p = Policy::full();
    assert!(!p.enough(p.min_samples - 1, 0.1, 0.0), "never under the minimum while time is left");
    assert!(p.enough(p.min_samples, 0.1, p.target), "the interval is narrow enough");
    assert!(!p.enough(p.min_samples, 0.1, 2.0 * p.target), "not yet");
    assert!(p.enough(p.max_samples, 0.1, 1.0), "the most samples");
    assert!(p.enough(FLOOR_SAMPLES, p.cap_s, 1.0), "the time cap, once the floor is reached");
    assert!(!p.enough(FLOOR_SAMPLES - 1, 60.0, 0.0), "never under the floor");
}

#[test]
fn the_median_interval_covers_the_median_and_narrows_with_samples() {
    use kernel_lab::schema::stats::{median_interval, Interval};
    let wide: Vec<f64> = (0..10).map(|i| 1.0 + 0.01 * i as f64).collect();
    let narrow: Vec<f64> = (0..200).map(|i| 1.0 + 0.01 * (i % 10) as f64).collect();
    let (m, lo, hi) = median_interval(&wide).unwrap();
    assert!(lo <= m && m <= hi && lo > 1.0 - 1e-12 && hi < 1.1, "{lo} {m} {hi}");
    let w = Interval::of_median(&wide).unwrap().half_width();
    let n = Interval::of_median(&narrow).unwrap().half_width();
    assert!(n <= w, "more samples, no wider: {n} vs {w}");
    assert!(median_interval(&[]).is_none() && median_interval(&[1.0, f64::NAN]).is_none());
    // A long right tail (a few slow samples) leaves the median's interval alone.
    let mut tail = vec![1.0; 40];
    tail.extend([5.0, 9.0, 20.0]);
    let (m, lo, hi) = median_interval(&tail).unwrap();
    assert_eq!((m, lo, hi), (1.0, 1.0, 1.0));
}

#[test]
fn a_large_check_on_many_threads_finds_the_same_first_bad_elements() {
    let n = 5 << 20;
    let want: Vec<f64> = (0..n).map(|i| (i % 97) as f64 - 48.0).collect();
    let mut out: Vec<f32> = want.iter().map(|&w| w as f32).collect();
    for i in [3 << 20, 1 << 20, (4 << 20) + 7] {
        out[i] += 1000.0;
    }
    let c = against(&out, &want, Precision::Fp32);
    assert!(!c.passed());
    let bad: Vec<usize> = c.first_bad.iter().map(|b| b.0).collect();
    assert_eq!(bad, [1 << 20, 3 << 20, (4 << 20) + 7], "in index order across the threads' chunks");
    out[1 << 20] = f32::NAN;
    let c = against(&out, &want, Precision::Fp32);
    assert_eq!((c.nonfinite, c.first_bad[0].0), (1, 1 << 20), "NaN first, then the rest");
}

#[test]
fn a_non_finite_element_outside_the_sample_is_described_without_a_reference() {
    let want = [1.0, 2.0];
    let out = [1.0, 2.0, f32::NAN];
    let c = check(&out, want.len(), &|i| (i, want[i]), Precision::Fp32);
    assert!(!c.passed());
    let d = c.describe();
    assert!(d.contains("[2] got NaN") && !d.contains("want NaN"), "{d}");
    let c = against(&[1.0, 9.0], &want, Precision::Fp32);
    assert!(c.describe().contains("[1] got 9e0 want 2e0"), "{}", c.describe());
}

#[test]
fn an_output_that_does_not_repeat_its_bits_fails_and_says_so() {
    let exact = against(&[1.0, 2.0], &[1.0, 2.0], Precision::Fp32);
    assert!(exact.passed() && !exact.describe().contains("bits"));
    let drifted = kernel_lab::measure::verify::Check { unrepeated: 1, ..exact };
    assert!(!drifted.passed(), "a column sum whose bits moved between launches passed");
    assert!(drifted.describe().contains("1 not the bits of the first launch"), "{}", drifted.describe());
}
