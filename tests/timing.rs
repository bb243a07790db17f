//! The host arithmetic of timing, on a CPU: the median's 95% interval against ranks worked out by
//! hand and its coverage against the binomial and a simulation; the pairs' order, roles and
//! ratios; samples dropped; the GPU time spent; the warm-up's end and the rule that stops sampling.

use approx::assert_relative_eq;
use kernel_lab::measure::timing::pairing::{self, Pairing, Pairs, Sampling, DROPS_PER_SAMPLE, HOT_MAX};
use kernel_lab::schema::run::{Policy, Regime, FLOOR_SAMPLES};
use kernel_lab::schema::stats::{median_interval, Interval};

/// 1, 2, ..., n, shuffled so the interval's sort is exercised.
fn ranks(n: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (1..=n).map(|i| i as f64).collect();
    let mut rng = Rng(n as u64);
    for i in (1..n).rev() {
        v.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    v
}

#[test]
fn the_median_interval_is_at_the_ranks_worked_out_by_hand() {
    // With n values sorted, ranks n/2 - 1.96 sqrt(n)/2 and n/2 + 1 + 1.96 sqrt(n)/2, rounded
    // (1-based). n = 20: 10 - 4.38 = 5.62 -> 6, 11 + 4.38 = 15.38 -> 15. n = 100: 50 - 9.8 =
    // 40.2 -> 40, 51 + 9.8 = 60.8 -> 61: the 40th and 61st, the textbook ranks from the exact
    // binomial for n = 100. n = 10: 5 - 3.10 = 1.90 -> 2, 6 + 3.10 = 9.10 -> 9.
    assert_eq!(median_interval(&ranks(10)), Some((5.5, 2.0, 9.0)));
    assert_eq!(median_interval(&ranks(20)), Some((10.5, 6.0, 15.0)));
    assert_eq!(median_interval(&ranks(100)), Some((50.5, 40.0, 61.0)));
    assert_eq!(median_interval(&ranks(101)), Some((51.0, 41.0, 61.0)), "50.5 - 9.85 = 40.65 -> 41, 51.5 + 9.85 = 61.35 -> 61");
    // Few values: the ends are the extremes (rank 0.5 - 0.98 rounds to 0, clamped to the first).
    assert_eq!(median_interval(&[3.0]), Some((3.0, 3.0, 3.0)));
    assert_eq!(median_interval(&[2.0, 1.0]), Some((1.5, 1.0, 2.0)));
    assert_eq!(median_interval(&ranks(5)), Some((3.0, 1.0, 5.0)));
    let i = Interval::of_median(&ranks(100)).unwrap();
    assert_eq!((i.value, i.low, i.high), (50.5, 40.0, 61.0));
    assert_relative_eq!(i.half_width(), 21.0 / 2.0 / 50.5);
}

/// The 1-based ranks of the interval's ends for n values, read back from `median_interval`.
fn interval_ranks(n: usize) -> (usize, usize) {
    let (_, lo, hi) = median_interval(&ranks(n)).unwrap();
    (lo as usize, hi as usize)
}

/// P(lo <= K < hi) for K ~ Binomial(n, 1/2), the count of values below the true median: the
/// interval [x(lo), x(hi)] holds the median exactly when lo <= K <= hi - 1.
fn binomial_coverage(n: usize, lo: usize, hi: usize) -> f64 {
    // ln C(n, k) - n ln 2, built up k by k.
    let mut ln_p = -(n as f64) * std::f64::consts::LN_2;
    let mut sum = 0.0;
    for k in 0..=n {
        if k >= lo && k < hi {
            sum += ln_p.exp();
        }
        ln_p += ((n - k) as f64).ln() - ((k + 1) as f64).ln();
    }
    sum
}

#[test]
fn the_interval_covers_the_median_95_percent_of_the_time_by_the_binomial() {
    for n in [10, 15, 20, 30, 50, 100, 200, 500, 1000, 4000] {
        let (lo, hi) = interval_ranks(n);
        let c = binomial_coverage(n, lo, hi);
        assert!((0.95..0.985).contains(&c), "n = {n}: ranks {lo}..{hi} cover {c:.4}");
    }
}

/// splitmix64: a seeded generator with no crate behind it, so the simulation never moves.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

#[test]
fn the_interval_covers_the_median_95_percent_of_the_time_in_a_simulation() {
    // Samples with a GPU timing's shape: a floor and a long right tail (exponential above 1 ms),
    // whose true median is 1 + ln 2. 4000 samples of each size: a coverage's standard error is
    // about 0.003, so the band below is five of them either side of the binomial's value.
    let mut rng = Rng(70);
    let median = 1.0 + std::f64::consts::LN_2;
    for n in [10, 30, 100, 300] {
        let trials = 4000;
        let mut covered = 0;
        let mut values = vec![0.0; n];
        for _ in 0..trials {
            for v in values.iter_mut() {
                *v = 1.0 - rng.unit().ln();
            }
            let (_, lo, hi) = median_interval(&values).unwrap();
            covered += (lo <= median && median <= hi) as usize;
        }
        let seen = covered as f64 / trials as f64;
        let (lo, hi) = interval_ranks(n);
        let want = binomial_coverage(n, lo, hi);
        assert!((seen - want).abs() < 0.015 && seen > 0.935, "n = {n}: covered {seen:.4}, the binomial says {want:.4}");
    }
}

#[test]
fn a_pair_gives_the_ratio_of_the_subjects_rate_to_the_baselines() {
    // The subject does the baseline's work in half its time: twice the rate.
    assert_eq!(pairing::rate_ratio(1.0, 2.0, 1.0), 2.0);
    // It declares three times the baseline's work and takes 1.5 times as long: twice the rate.
    assert_eq!(pairing::rate_ratio(3.0, 2.0, 3.0), 2.0);
    let policy = Policy::quick();
    let mut p = Pairing::new(1, 1.0);
    p.record(&policy, Some(2.0), Some(1.0));
    assert_eq!(
        (p.out.baseline_ms.as_slice(), p.out.subject_ms.as_slice(), p.out.ratios.as_slice()),
        ([2.0].as_slice(), [1.0].as_slice(), [2.0].as_slice())
    );
}

#[test]
fn pairs_alternate_their_order_and_each_time_goes_to_its_own_side() {
    let policy = Policy::quick();
    let mut p = Pairing::new(1, 1.0);
    // The baseline (3 ms) and the subject (2 ms) in the order the loop launches them.
    let mut orders = Vec::new();
    for _ in 0..4 {
        let subject_first = p.subject_first();
        orders.push(subject_first);
        let (first, second) = if subject_first { (2.0, 3.0) } else { (3.0, 2.0) };
        p.record(&policy, Some(first), Some(second));
    }
    assert_eq!(orders, [false, true, false, true], "AB, BA, AB, BA");
    assert_eq!(p.out.baseline_ms, [3.0; 4]);
    assert_eq!(p.out.subject_ms, [2.0; 4]);
    assert_eq!(p.out.ratios, [1.5; 4], "the same ratio whichever ran first");
    // A dropped pair counts in the alternation: the next pair does not repeat its order.
    let before = p.subject_first();
    assert!(!p.record(&policy, None, Some(2.0)));
    assert_eq!((p.out.dropped, p.out.ratios.len()), (1, 4));
    assert_eq!(p.subject_first(), !before);
    p.record(&policy, Some(2.0), None);
    assert_eq!(p.out.dropped, 2, "either side not at full clock drops the pair");
}

#[test]
fn the_pairs_time_counts_against_the_cap_and_dropped_pairs_do_not() {
    let policy = Policy { min_samples: 100, max_samples: 1000, target: 0.0, cap_s: 0.085, warmup_s: 0.0, regime: Regime::Burst };
    // Three launches a sample (a hot graph): a pair of 4 ms and 6 ms a launch is 30 ms of GPU.
    let mut p = Pairing::new(3, 1.0);
    assert!(!p.record(&policy, Some(4.0), Some(6.0)));
    assert_relative_eq!(p.spent_s(), 0.03);
    assert!(!p.record(&policy, None, None));
    assert_relative_eq!(p.spent_s(), 0.03);
    assert!(!p.record(&policy, Some(4.0), Some(6.0)));
    assert_relative_eq!(p.spent_s(), 0.06);
    assert!(p.record(&policy, Some(6.0), Some(4.0)), "0.09 s: past the cap");
    assert_eq!((p.out.ratios.len(), p.out.dropped), (3, 1));
}

#[test]
fn pairing_stops_at_the_interval_the_sample_count_or_too_many_drops() {
    // Identical pairs: a zero-width interval, so the fewest samples the policy allows.
    let quick = Policy::quick();
    let mut p = Pairing::new(1, 1.0);
    let stops: Vec<bool> = (0..quick.min_samples).map(|_| p.record(&quick, Some(1.0), Some(1.0))).collect();
    assert_eq!(stops.iter().position(|s| *s), Some(quick.min_samples - 1), "{stops:?}");
    // Ratios that never settle stop at the most samples.
    let wide = Policy { target: 0.0, cap_s: f64::INFINITY, ..quick };
    let mut p = Pairing::new(1, 1.0);
    let mut n = 0;
    while !p.record(&wide, Some(1.0 + (n % 7) as f64), Some(1.0)) {
        n += 1;
        assert!(n < 10 * wide.max_samples, "sampling never stopped");
    }
    assert_eq!(p.out.ratios.len(), wide.max_samples);
    // A board that never holds its clock: give up after ten drops per sample allowed.
    let mut p = Pairing::new(1, 1.0);
    let mut drops = 0;
    while !p.record(&quick, None, Some(1.0)) {
        drops += 1;
        assert!(drops < 100 * quick.max_samples, "dropping never stopped");
    }
    assert_eq!((drops + 1, p.out.dropped), (DROPS_PER_SAMPLE * quick.max_samples + 1, DROPS_PER_SAMPLE * quick.max_samples + 1));
    assert!(p.out.paired().is_none(), "no pairs, no ratio");
}

#[test]
fn the_paired_figure_is_the_median_ratio_with_its_interval_and_the_baselines_median() {
    let pairs = Pairs { subject_ms: vec![1.0; 3], baseline_ms: vec![6.0, 4.0, 5.0], ratios: vec![3.0, 1.0, 2.0], dropped: 4, launches: 1 };
    let p = pairs.paired().unwrap();
    assert_eq!((p.ratio.value, p.ratio.low, p.ratio.high, p.pairs, p.baseline_ms), (2.0, 1.0, 3.0, 3, 5.0));
}

#[test]
fn samples_count_their_time_and_their_drops() {
    let policy = Policy { min_samples: 10, max_samples: 20, target: 0.01, cap_s: 1.0, warmup_s: 0.0, regime: Regime::Burst };
    let mut s = Sampling::new(4);
    assert!(!s.keep(&policy, &[1.0, 2.0, 3.0]));
    assert_relative_eq!(s.spent_s(), 6.0 * 4.0 / 1e3);
    assert!(!s.drop_one(&policy, 5.0));
    assert_relative_eq!(s.spent_s(), 0.024 + 0.005, epsilon = 1e-15);
    assert_eq!((s.out.ms.as_slice(), s.out.dropped, s.out.launches), ([1.0, 2.0, 3.0].as_slice(), 1, 4));
    // Enough at the interval: ten equal samples.
    let mut s = Sampling::new(1);
    assert!(!s.keep(&policy, &[1.0; 9]));
    assert!(s.keep(&policy, &[1.0]));
    // Or at the time cap, once past the floor.
    let mut s = Sampling::new(1);
    assert!(!s.keep(&policy, &[600.0, 1.0]), "under the floor of {FLOOR_SAMPLES}");
    assert!(s.keep(&policy, &[700.0]), "1.3 s spent");
    // Or after too many drops, with what was kept.
    let mut s = Sampling::new(1);
    let limit = DROPS_PER_SAMPLE * policy.max_samples;
    assert!((0..limit).all(|_| !s.drop_one(&policy, 0.0)));
    assert!(s.drop_one(&policy, 0.0));
    assert!(pairing::too_many_dropped(&policy, limit + 1) && !pairing::too_many_dropped(&policy, limit));
}

#[test]
fn the_rule_that_stops_sampling() {
    let p = Policy::full();
    assert!(!p.enough(p.min_samples - 1, 0.1, 0.0), "never under the minimum while time is left");
    assert!(p.enough(p.min_samples, 0.1, p.target), "the interval exactly at the target");
    assert!(!p.enough(p.min_samples, 0.1, p.target * 1.001));
    assert!(!p.enough(p.max_samples - 1, p.cap_s * 0.999, 1.0));
    assert!(p.enough(p.max_samples, 0.0, 1.0), "the most samples");
    assert!(p.enough(FLOOR_SAMPLES, p.cap_s, 1.0), "the time cap, once the floor is reached");
    assert!(!p.enough(FLOOR_SAMPLES - 1, 60.0, 0.0), "never under the floor");
    assert_eq!(pairing::half_width(&[]), f64::INFINITY);
    assert_eq!(pairing::half_width(&[2.0; 5]), 0.0);
    assert_relative_eq!(pairing::half_width(&ranks(100)), 21.0 / 2.0 / 50.5);
}

#[test]
fn the_hot_graph_holds_about_two_milliseconds_of_launches() {
    assert_eq!(pairing::hot_launches(1.0), 2);
    assert_eq!(pairing::hot_launches(0.3), 7, "6.67 rounds up");
    assert_eq!(pairing::hot_launches(0.0025), 800);
    assert_eq!(pairing::hot_launches(5.0), 1, "at least one");
    assert_eq!(pairing::hot_launches(1e-6), HOT_MAX, "a launch under 0.1 µs counts as 0.1 µs, then the cap");
    assert_eq!(pairing::hot_launches(0.0), HOT_MAX);
}

#[test]
fn the_warm_up_takes_two_rounds_and_its_time() {
    let p = Policy::full();
    assert!(!pairing::warmed_up(&p, 1, 1e6), "two rounds at least");
    assert!(!pairing::warmed_up(&p, 2, 499.9));
    assert!(pairing::warmed_up(&p, 2, 500.0), "0.5 s of GPU time");
    assert!(!pairing::warmed_up(&p, pairing::WARMUP_MAX_ROUNDS - 1, 0.0));
    assert!(pairing::warmed_up(&p, pairing::WARMUP_MAX_ROUNDS, 0.0), "or enough rounds");
}
