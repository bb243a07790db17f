//! The tuner's strategies on the CPU: a synthetic landscape over a real variant's pruned space
//! stands in for the GPU, so what a strategy picks, and how soon it finds the best, is checked
//! without one.

mod common;

use kernel_lab::facts::manifest::Config;
use kernel_lab::gpu::registry;
use kernel_lab::measure::strategy::{drive, next, Eval, Space, Strategy};
use kernel_lab::measure::tune;
use rand::SeedableRng;

/// sgemm_08's space as the tuner searches it on an H100 or H200 (sm_90): the product of its tune
/// lists, pruned by its constraints and the launch limits.
fn sgemm_08_space() -> Vec<Config> {
    let v = registry::by_name("sgemm_08_double_buffered").unwrap();
    tune::space(v, &[]).into_iter().filter(|c| tune::prefilter(v, c, Some(90)).is_ok()).collect()
}

/// A deterministic number in [-1, 1) from a configuration and a landscape's seed: the noise.
fn noise(config: &Config, seed: u64) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in serde_json::to_string(config).unwrap().bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    (h >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A landscape with structure, as tile sizes give one: the rate falls smoothly (quadratically in
/// log2 of each constant) away from an optimum placed at one configuration of the space, each
/// constant with its own weight, plus noise of a few percent of the range, as timing has.
struct Landscape {
    target: Config,
    weights: Vec<(String, f64)>,
    seed: u64,
}

impl Landscape {
    fn new(space: &[Config], seed: u64) -> Landscape {
        let target = space[(seed as usize * 7919) % space.len()].clone();
        let mut names = vec!["BLOCK_X".to_string()];
        names.extend(target.defines.iter().map(|(n, _)| n.clone()));
        let weights = names.into_iter().enumerate().map(|(i, n)| (n, 0.5 + ((i as u64 * 31 + seed) % 5) as f64 * 0.25)).collect();
        Landscape { target, weights, seed }
    }

    /// The rate, or None for the tenth of configurations that fail (verification, launch), as
    /// some do on a GPU; never the best.
    fn score(&self, c: &Config) -> Option<f64> {
        (noise(c, self.seed ^ 0xfa11) < 0.8 || *c == self.target).then(|| self.rate(c))
    }

    fn rate(&self, c: &Config) -> f64 {
        let log = |v: i64| (v.max(1) as f64).log2();
        let fall: f64 = self
            .weights
            .iter()
            .map(|(n, w)| match (c.value(n), self.target.value(n)) {
                (Some(a), Some(b)) => w * (log(a) - log(b)).powi(2),
                _ => 0.0,
            })
            .sum();
        20.0 / (1.0 + 0.15 * fall) * (1.0 + 0.02 * noise(c, self.seed))
    }
}

/// How many evaluations `strategy` takes to evaluate the landscape's best configuration,
/// starting from the manifest's (position 0), as the tuner does.
fn evaluations_to_best(strategy: Strategy, space: &Space, land: &Landscape, seed: u64) -> usize {
    let score = |i: usize| land.score(&space.configs[i]).unwrap_or(f64::NEG_INFINITY);
    let best = (0..space.len()).max_by(|&a, &b| score(a).total_cmp(&score(b))).unwrap();
    let trace: Vec<Eval> =
        drive::<()>(strategy, space, &[0], seed, &mut |e| !e.iter().any(|x| x.index == best), &mut |i| Ok(land.score(&space.configs[i])))
            .unwrap();
    assert_eq!(trace.last().unwrap().index, best, "the search ends on the best");
    trace.len()
}

fn median(mut xs: Vec<usize>) -> usize {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

#[test]
fn the_genetic_search_reaches_the_best_configuration_in_fewer_evaluations_than_random() {
    let configs = sgemm_08_space();
    assert!(configs.len() > 100, "sgemm_08's pruned space has {} configurations", configs.len());
    let space = Space::new(configs.clone());
    // Several landscapes (optimum and weights), each searched from several seeds.
    for land_seed in 1..=3u64 {
        let land = Landscape::new(&configs, land_seed);
        let seeds: Vec<u64> = (0..9).map(|s| s * 1000 + land_seed).collect();
        let random: Vec<usize> = seeds.iter().map(|&s| evaluations_to_best(Strategy::Random, &space, &land, s)).collect();
        let genetic: Vec<usize> = seeds.iter().map(|&s| evaluations_to_best(Strategy::Genetic, &space, &land, s)).collect();
        eprintln!("landscape {land_seed}, {} configurations: random {random:?}, genetic {genetic:?}", space.len());
        let (r, g) = (median(random), median(genetic));
        assert!(g * 2 <= r, "landscape {land_seed}: genetic's median {g} evaluations, random's {r}: not half");
    }
}

#[test]
fn the_bayesian_search_reaches_the_best_configuration_in_fewer_evaluations_than_random() {
    // A model per pick over every open configuration: a third of sgemm_08's space keeps the
    // test to seconds.
    let configs: Vec<Config> = sgemm_08_space().into_iter().step_by(3).collect();
    let space = Space::new(configs.clone());
    for land_seed in 1..=3u64 {
        let land = Landscape::new(&configs, land_seed);
        let seeds: Vec<u64> = (0..5).map(|s| s * 1000 + land_seed).collect();
        let random: Vec<usize> = seeds.iter().map(|&s| evaluations_to_best(Strategy::Random, &space, &land, s)).collect();
        let bayes: Vec<usize> = seeds.iter().map(|&s| evaluations_to_best(Strategy::Bayes, &space, &land, s)).collect();
        eprintln!("landscape {land_seed}, {} configurations: random {random:?}, bayes {bayes:?}", space.len());
        let (r, b) = (median(random), median(bayes));
        assert!(b * 2 <= r, "landscape {land_seed}: bayes's median {b} evaluations, random's {r}: not half");
    }
}

#[test]
fn expected_improvement_rewards_a_higher_mean_and_more_doubt() {
    use kernel_lab::measure::strategy::bayes::expected_improvement as ei;
    assert!(ei(1.0, 0.1, 0.0) > ei(0.5, 0.1, 0.0), "a higher mean");
    assert!(ei(0.0, 1.0, 0.0) > ei(0.0, 0.1, 0.0), "more doubt at the same mean");
    assert_eq!(ei(-1.0, 0.0, 0.0), 0.0, "a sure loss gains nothing");
    // E[max(f - 0.01, 0)] for f ~ N(0, 1): 0.3989 - 0.01 * 0.5 + O(1e-4), by the closed form.
    assert!((ei(0.0, 1.0, 0.0) - 0.394_0).abs() < 1e-3, "{}", ei(0.0, 1.0, 0.0));
}

#[test]
fn a_strategy_never_picks_a_configuration_twice_and_covers_the_space() {
    let space = Space::new(sgemm_08_space().into_iter().take(60).collect());
    for strategy in Strategy::ALL {
        let trace = drive::<()>(strategy, &space, &[0, 5], 7, &mut |_| true, &mut |i| Ok((i % 3 != 0).then_some(i as f64))).unwrap();
        let mut picked: Vec<usize> = trace.iter().map(|e| e.index).collect();
        assert_eq!(&picked[..2], &[0, 5], "{}: the given ones first", strategy.name());
        picked.sort_unstable();
        picked.dedup();
        assert_eq!(picked.len(), space.len(), "{}: every configuration once", strategy.name());
        assert_eq!(trace.len(), space.len());
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        assert_eq!(next(strategy, &space, &trace, &mut rng), None, "nothing left");
    }
}

#[test]
fn the_same_seed_and_scores_give_the_same_picks() {
    let configs = sgemm_08_space();
    let space = Space::new(configs.clone());
    let land = Landscape::new(&configs, 2);
    for strategy in Strategy::ALL {
        let run = |seed| {
            drive::<()>(strategy, &space, &[0], seed, &mut |e| e.len() < 40, &mut |i| Ok(Some(land.rate(&space.configs[i])))).unwrap()
        };
        assert_eq!(run(11), run(11), "{}", strategy.name());
        assert_ne!(run(11), run(12), "{}: another seed, another path", strategy.name());
    }
}

#[test]
fn strategies_are_named_on_the_command_line() {
    assert_eq!(Strategy::parse("genetic"), Ok(Strategy::Genetic));
    assert_eq!(Strategy::parse("random"), Ok(Strategy::Random));
    let e = Strategy::parse("annealing").unwrap_err();
    assert_eq!(Strategy::parse("bayes"), Ok(Strategy::Bayes));
    assert!(e.contains("random, genetic, bayes"), "{e}");
}

/// A record of a search in which `ok` candidates (config, search-pass ms, rate) were timed and
/// `finals` (config, head-to-head ms) re-timed, the last of `finals` the pick.
fn record(ok: &[(&Config, f64, f64)], finals: &[(&Config, f64)]) -> kernel_lab::schema::tuning::TuneRecord {
    use kernel_lab::schema::tuning::{Candidate, CandidateStatus, TuneRecord};
    let candidate = |&(c, ms, rate): &(&Config, f64, f64)| Candidate {
        config: c.clone(),
        status: CandidateStatus::Ok,
        reason: None,
        median_ms: Some(ms),
        rate: Some(rate),
        error: None,
        registers: None,
        smem_bytes: None,
        local_bytes: None,
        blocks_per_sm: None,
        hash: None,
    };
    let best = finals.last().map(|(c, _)| (*c).clone());
    TuneRecord {
        budget_s: 30.0,
        space: 72,
        tried: ok.len(),
        candidates: ok.iter().map(candidate).collect(),
        head_to_head: finals.iter().map(|(c, ms)| (c.label(), vec![*ms, *ms])).collect(),
        best,
        best_median_ms: finals.last().map(|f| f.1),
        ..common::tune_record("fp16", "fp16_07_pingpong", &[8192; 3])
    }
}

#[test]
fn a_pick_is_judged_against_the_manifest_under_one_timing_policy() {
    let space = sgemm_08_space();
    let (manifest, other) = (&space[0], &space[1]);
    // Only the manifest tried: the head-to-head's longer timing runs it slower (a power-limited
    // kernel), and it is still no slower than itself.
    let alone = record(&[(manifest, 1.00, 100.0)], &[(manifest, 1.15)]);
    let g = alone.gain_over(manifest).unwrap();
    assert_eq!((g.manifest_ms, g.best_ms, g.gain, g.head_to_head), (1.15, 1.15, 1.0, true));
    // Both finalists: the head-to-head judges.
    let both = record(&[(manifest, 1.00, 100.0), (other, 0.95, 100.0 / 0.95)], &[(manifest, 1.20), (other, 1.10)]);
    let g = both.gain_over(manifest).unwrap();
    assert_eq!((g.manifest_ms, g.best_ms), (1.20, 1.10));
    assert!((g.gain - 1.20 / 1.10).abs() < 1e-9, "{}", g.gain);
    // The manifest not a finalist: the search pass judges, never its time against a re-timing.
    let alone_pick = record(&[(manifest, 1.00, 100.0), (other, 0.80, 125.0)], &[(other, 1.05)]);
    let g = alone_pick.gain_over(manifest).unwrap();
    assert_eq!((g.manifest_ms, g.best_ms, g.gain, g.head_to_head), (1.00, 0.80, 1.25, false));
    // No verified manifest, no pick, or no rate: nothing to compare.
    assert!(record(&[(other, 0.80, 125.0)], &[(other, 1.05)]).gain_over(manifest).is_none());
    assert!(record(&[(manifest, 1.00, 100.0)], &[]).gain_over(manifest).is_none());
    assert!(record(&[(manifest, 1.00, 0.0), (other, 0.80, 125.0)], &[(other, 1.05)]).gain_over(manifest).is_none());
}

#[test]
fn a_failed_head_to_head_round_survives_the_file() {
    let space = sgemm_08_space();
    let mut rec = record(&[(&space[0], 1.00, 100.0), (&space[1], 0.90, 111.0)], &[(&space[0], 1.1), (&space[1], 1.0)]);
    rec.head_to_head[0].1[1] = f64::INFINITY;
    let line = serde_json::to_string(&rec).unwrap();
    assert!(line.contains("null"), "a failed round is written as null: {line}");
    let back: kernel_lab::schema::tuning::TuneRecord = serde_json::from_str(&line).expect("a record with a failed round reads back");
    assert_eq!(back.head_to_head, rec.head_to_head);
}
