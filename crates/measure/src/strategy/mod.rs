//! The tuner's search strategies: which configuration to evaluate next, as a pure function of
//! the space, the evaluations so far and a seeded generator. Nothing here touches a GPU, so a
//! test drives a strategy on the CPU with a synthetic objective, and the cache replays one from
//! stored evaluations (`tune_cache::simulate`).
//!
//! - `random` samples the space uniformly without repeats: no assumption about the landscape, so
//!   an early stop still samples all of it.
//! - `genetic` is a steady-state genetic algorithm (Kernel Tuner's `genetic_algorithm` works the
//!   same way): two parents by tournament among the best so far, uniform crossover, a mutation
//!   that moves a constant to a neighbouring value, and the child moved to the nearest
//!   configuration not yet evaluated. It bets that good configurations sit near each other, which
//!   holds for tile sizes (occupancy and reuse change by steps); a share of random picks keeps it
//!   from spending the budget around one local best.
//! - `bayes` is Bayesian optimisation (Kernel Tuner's `bayes_opt`): a Gaussian process over the
//!   grid and expected improvement (`bayes.rs`).

pub mod bayes;

use rand::rngs::SmallRng;
use rand::RngExt;

use crate::facts::manifest::Config;

/// How the search picks its next configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Random,
    Genetic,
    Bayes,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [Strategy::Random, Strategy::Genetic, Strategy::Bayes];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Genetic => "genetic",
            Strategy::Bayes => "bayes",
        }
    }

    pub fn parse(text: &str) -> Result<Strategy, String> {
        Strategy::ALL.into_iter().find(|s| s.name() == text).ok_or_else(|| {
            let names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
            format!("no strategy '{text}' (strategies: {})", names.join(", "))
        })
    }
}

/// Scored evaluations before the genetic algorithm breeds: fewer would make the first parents
/// the luck of the first draws.
const INITIAL: usize = 6;
/// The parents are drawn from this many of the best so far.
const POPULATION: usize = 10;
/// The share of picks made at random (immigrants), so the population does not close in on one
/// corner of the space.
const IMMIGRANTS: f64 = 0.1;

/// The configurations a search may evaluate (the space after pruning), with each placed on a
/// grid: for every constant whose value varies, the rank of its value among the values present,
/// spread over [0, 1]. Distances on this grid say which configurations are neighbours.
pub struct Space {
    pub configs: Vec<Config>,
    coords: Vec<Vec<f64>>,
    /// Per grid dimension, the coordinates its values take, ascending.
    levels: Vec<Vec<f64>>,
}

impl Space {
    pub fn new(configs: Vec<Config>) -> Space {
        let mut names: Vec<String> = ["BLOCK_X", "BLOCK_Y", "BLOCK_Z"].map(String::from).to_vec();
        for c in &configs {
            for (n, _) in &c.defines {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        let mut coords = vec![Vec::new(); configs.len()];
        let mut levels = Vec::new();
        for name in &names {
            let mut values: Vec<i64> = configs.iter().filter_map(|c| c.value(name)).collect();
            values.sort_unstable();
            values.dedup();
            if values.len() < 2 {
                continue;
            }
            let step = 1.0 / (values.len() - 1) as f64;
            for (c, xs) in configs.iter().zip(coords.iter_mut()) {
                let rank = c.value(name).and_then(|v| values.binary_search(&v).ok()).unwrap_or(0);
                xs.push(rank as f64 * step);
            }
            levels.push((0..values.len()).map(|i| i as f64 * step).collect());
        }
        Space { configs, coords, levels }
    }

    pub fn len(&self) -> usize {
        self.configs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }

    pub fn index_of(&self, config: &Config) -> Option<usize> {
        self.configs.iter().position(|c| c == config)
    }

    /// The grid distance (sum over constants of rank differences, each constant's range 1).
    fn distance(&self, at: &[f64], i: usize) -> f64 {
        at.iter().zip(&self.coords[i]).map(|(a, b)| (a - b).abs()).sum()
    }
}

/// One evaluation: a position in the space and its score (the rate; higher is better), None
/// where the configuration did not run (rejected, failed, crashed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Eval {
    pub index: usize,
    pub score: Option<f64>,
}

/// The next position of `space` to evaluate, never one in `evals`; None when all were.
pub fn next(strategy: Strategy, space: &Space, evals: &[Eval], rng: &mut SmallRng) -> Option<usize> {
    let mut done = vec![false; space.len()];
    for e in evals {
        done[e.index] = true;
    }
    let open: Vec<usize> = (0..space.len()).filter(|&i| !done[i]).collect();
    if open.is_empty() {
        return None;
    }
    let random = |rng: &mut SmallRng| open[rng.random_range(0..open.len())];
    match strategy {
        Strategy::Random => Some(random(rng)),
        Strategy::Genetic => {
            let mut scored: Vec<(usize, f64)> =
                evals.iter().filter_map(|e| e.score.filter(|s| s.is_finite()).map(|s| (e.index, s))).collect();
            scored.sort_by(|a, b| b.1.total_cmp(&a.1));
            if scored.len() < INITIAL || space.levels.is_empty() || rng.random_bool(IMMIGRANTS) {
                return Some(random(rng));
            }
            scored.truncate(POPULATION);
            let child = breed(space, &scored, rng);
            Some(nearest(space, &child, &open, rng))
        }
        Strategy::Bayes => bayes::pick(space, evals, &open, rng).or_else(|| Some(random(rng))),
    }
}

/// A child's grid position: two parents, each the better of two drawn from `population` (best
/// first), uniform crossover, then each constant moved one value up or down with probability
/// 1/dimensions (at least one constant moves, so a child of two equal parents is not the parent).
fn breed(space: &Space, population: &[(usize, f64)], rng: &mut SmallRng) -> Vec<f64> {
    let tournament = |rng: &mut SmallRng| {
        let (a, b) = (rng.random_range(0..population.len()), rng.random_range(0..population.len()));
        population[a.min(b)].0
    };
    let (a, b) = (tournament(rng), tournament(rng));
    let dims = space.levels.len();
    let mut child: Vec<f64> = (0..dims).map(|d| if rng.random_bool(0.5) { space.coords[a][d] } else { space.coords[b][d] }).collect();
    let forced = rng.random_range(0..dims);
    for (d, x) in child.iter_mut().enumerate() {
        if d == forced || rng.random_bool(1.0 / dims as f64) {
            let levels = &space.levels[d];
            let at = levels.iter().position(|l| (l - *x).abs() < 1e-9).unwrap_or(0);
            let to = match (at, rng.random_bool(0.5)) {
                (0, _) => 1,
                (i, _) if i + 1 == levels.len() => i - 1,
                (i, true) => i + 1,
                (i, false) => i - 1,
            };
            *x = levels[to];
        }
    }
    child
}

/// The position in `open` nearest `at` on the grid, ties drawn at random: the child itself when
/// it is open, else its closest valid neighbour (the constraints leave holes in the grid).
fn nearest(space: &Space, at: &[f64], open: &[usize], rng: &mut SmallRng) -> usize {
    let d: Vec<f64> = open.iter().map(|&i| space.distance(at, i)).collect();
    let best = d.iter().copied().fold(f64::INFINITY, f64::min);
    let ties: Vec<usize> = open.iter().zip(&d).filter(|(_, x)| **x <= best + 1e-9).map(|(&i, _)| i).collect();
    ties[rng.random_range(0..ties.len())]
}

/// A search: `first` in order (the manifest's configuration, an earlier pick), then `strategy`'s
/// picks from a generator seeded with `seed`, while `more` agrees given the evaluations so far and
/// the space is not exhausted; `eval` scores each pick. The same seed, space and scores give the
/// same picks, which is what lets a cache replay a search.
pub fn drive<E>(
    strategy: Strategy,
    space: &Space,
    first: &[usize],
    seed: u64,
    more: &mut dyn FnMut(&[Eval]) -> bool,
    eval: &mut dyn FnMut(usize) -> Result<Option<f64>, E>,
) -> Result<Vec<Eval>, E> {
    use rand::SeedableRng;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut evals: Vec<Eval> = Vec::new();
    let mut queue = first.iter().copied().filter(|&i| i < space.len());
    while more(&evals) {
        let pick = match queue.by_ref().find(|i| !evals.iter().any(|e| e.index == *i)) {
            Some(i) => i,
            None => match next(strategy, space, &evals, &mut rng) {
                Some(i) => i,
                None => break,
            },
        };
        let score = eval(pick)?;
        evals.push(Eval { index: pick, score });
    }
    Ok(evals)
}
