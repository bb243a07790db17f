//! The tuner's cache: what earlier searches of a variant at a shape on this GPU model already
//! measured, read back from their run files. A tune run appends each candidate as it finishes,
//! so a search that was killed left its evaluations on disk and no second file is kept; the
//! results folder is already per GPU model, and a candidate counts only while its `jit::hash`
//! (source, included headers, defines, target, NVRTC) is the one the configuration has now.
//!
//! The cache also replays a strategy without a GPU (`simulate`): the stored rates stand in for
//! the measurements, as in Kernel Tuner's simulation mode, so strategies can be compared on
//! what a GPU measured once.

use super::strategy::{drive, Eval, Space, Strategy};
use crate::facts::manifest::Config;
use crate::schema::run::{Record, Run, RunKind};
use crate::schema::tuning::{Candidate, CandidateStatus, TuneRecord};

/// The candidates stored for one variant at one shape, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Cache {
    candidates: Vec<Candidate>,
}

impl Cache {
    /// The candidates of `variant` at `shape` (its label, as run files write it) in `runs`'
    /// tune runs: each candidate record, and the candidates of each finished search's record.
    pub fn new(runs: &[Run], variant: &str, shape: &str) -> Cache {
        let mut tune: Vec<&Run> = runs.iter().filter(|r| r.header.run.kind == RunKind::Tune).collect();
        tune.sort_by(|a, b| a.header.run.date.cmp(&b.header.run.date));
        let mut candidates = Vec::new();
        for r in tune {
            for rec in &r.records {
                match rec {
                    Record::Candidate { variant: v, shape: s, candidate, .. } if v == variant && s == shape => {
                        candidates.push((**candidate).clone());
                    }
                    Record::Tuning(t) if t.variant == variant && t.shape == shape => {
                        candidates.extend(t.candidates.iter().filter(|c| !candidates.contains(c)).cloned().collect::<Vec<_>>());
                    }
                    _ => {}
                }
            }
        }
        Cache { candidates }
    }

    pub fn len(&self) -> usize {
        self.candidates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.candidates.is_empty()
    }

    /// The newest stored evaluation of `config` whose hash is `hash` (what NVRTC would compile
    /// for it now); none for a configuration measured only in another version of its code.
    pub fn get(&self, config: &Config, hash: &str) -> Option<&Candidate> {
        self.candidates.iter().rev().find(|c| c.config == *config && c.hash.as_deref() == Some(hash))
    }

    /// The configurations stored, each once, in the order first stored.
    pub fn configs(&self) -> Vec<Config> {
        let mut out: Vec<Config> = Vec::new();
        for c in &self.candidates {
            if !out.contains(&c.config) {
                out.push(c.config.clone());
            }
        }
        out
    }

    /// Where all the cache holds is stale (measured with older code: `hash` gives what a
    /// configuration compiles to now), the `n` configurations whose newest stored score is
    /// highest, best first: where a search run again after an edit starts (`tune::first_picks`).
    /// None while any stored candidate is current, so a resumed search retraces its own picks.
    pub fn stale_ranking(&self, n: usize, hash: &dyn Fn(&Config) -> Option<String>) -> Vec<Config> {
        if self.candidates.iter().any(|c| hash(&c.config).is_some_and(|h| c.hash.as_deref() == Some(h.as_str()))) {
            return Vec::new();
        }
        let mut scored: Vec<(Config, f64)> = self.configs().into_iter().filter_map(|c| self.score(&c).map(|s| (c, s))).collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.into_iter().take(n).map(|(c, _)| c).collect()
    }

    /// The newest stored score of `config` whatever its hash (simulation has no NVRTC to hash
    /// with): its rate where it verified and was timed, else None.
    pub fn score(&self, config: &Config) -> Option<f64> {
        self.candidates.iter().rev().find(|c| c.config == *config).and_then(score)
    }
}

/// The score a strategy sees for a candidate: its rate where it verified and was timed.
pub fn score(c: &Candidate) -> Option<f64> {
    (c.status == CandidateStatus::Ok).then_some(c.rate).flatten().filter(|r| r.is_finite())
}

/// `strategy` replayed on the cache's configurations, its stored rates as the objective, for at
/// most `limit` evaluations after `first` (the manifest's configuration, as a real search starts):
/// the configurations in the order it picked them, with their scores.
pub fn simulate(strategy: Strategy, cache: &Cache, first: &[Config], seed: u64, limit: usize) -> Vec<(Config, Option<f64>)> {
    let space = Space::new(cache.configs());
    let first: Vec<usize> = first.iter().filter_map(|c| space.index_of(c)).collect();
    let trace: Result<Vec<Eval>, ()> =
        drive(strategy, &space, &first, seed, &mut |e| e.len() < limit, &mut |i| Ok(cache.score(&space.configs[i])));
    trace.unwrap_or_default().into_iter().map(|e| (space.configs[e.index].clone(), e.score)).collect()
}

/// Per seed of `seeds`, how many evaluations `strategy` replayed on the cache (after `first`,
/// as in `simulate`) took to reach a configuration scoring at least `target`; None where it
/// never did. What a strategy is judged by: the search it saves to reach a given configuration.
pub fn evaluations_to(strategy: Strategy, cache: &Cache, first: &[Config], seeds: std::ops::Range<u64>, target: f64) -> Vec<Option<usize>> {
    seeds
        .map(|seed| {
            simulate(strategy, cache, first, seed, usize::MAX).iter().position(|(_, s)| s.is_some_and(|s| s >= target)).map(|i| i + 1)
        })
        .collect()
}

/// The best score stored in the cache.
pub fn best(cache: &Cache) -> Option<f64> {
    cache.candidates.iter().filter_map(score).fold(None, |b, s| Some(b.map_or(s, |b: f64| b.max(s))))
}

/// The newest tune run started with the same arguments as `args` (this process's, the program
/// first), where it did not finish: a search killed and started again takes up its seed, so it
/// retraces its picks from the cache and goes on where it stopped, and keeps the searches it had
/// finished. None where the newest such run finished (a search run again on purpose).
pub fn unfinished<'a>(runs: &'a [Run], args: &[String]) -> Option<&'a Run> {
    let mine = args.get(1..).unwrap_or_default().join(" ");
    runs.iter()
        .filter(|r| r.header.run.kind == RunKind::Tune)
        .filter(|r| r.header.run.command.split_once(' ').map_or("", |(_, rest)| rest) == mine)
        .max_by(|a, b| a.header.run.date.cmp(&b.header.run.date))
        .filter(|r| !r.complete)
}

/// The search of `variant` at `shape` that `run` finished (its tuning record), which a resumed
/// search keeps instead of running it again.
pub fn finished(run: &Run, variant: &str, shape: &str) -> Option<TuneRecord> {
    run.records.iter().rev().find_map(|r| match r {
        Record::Tuning(t) if t.variant == variant && t.shape == shape => Some((**t).clone()),
        _ => None,
    })
}
