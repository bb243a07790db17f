//! `kernel-lab tune`: search a variant's tunable constants on the running GPU.
//!
//! The space is the product of the manifest's `tune` lists; candidates that break the
//! manifest's constraints or the architecture's limits are dropped before anything is compiled.
//! Each survivor runs in a child process (`kernel-lab tune-candidate`): NVRTC compiles it for
//! this GPU, it is checked for launchability, verified, and timed. A child that crashes or hangs
//! is recorded as such and the search goes on; each candidate is handed on as it finishes, so
//! nothing measured is lost, and a later search takes it from the cache (`tune_cache`) instead of
//! measuring it again. A strategy (`strategy`) picks the order. The fastest few are then re-timed
//! head to head.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::child::{Child, Line, Next};
use super::families::{self, Shape};
use super::plan::Subject;
use super::runner;
pub use super::strategy::Strategy;
use super::strategy::{self, Space};
use super::timing::Timer;
use super::tune_cache::{self, Cache};
use crate::error::Result;
use crate::gpu::availability;
use crate::gpu::device::Gpu;
use crate::gpu::registry::{Config, VariantSpec};
use crate::schema::device::DeviceInfo;
use crate::schema::entry::Status;
use crate::schema::run::{Policy, Run};
use crate::schema::tuning::{Candidate, CandidateStatus, TuneRecord};

/// A candidate's process is killed after this long.
const CHILD_LIMIT: Duration = Duration::from_secs(120);
/// Rounds of the head-to-head re-timing.
const ROUNDS: usize = 2;

/// Every configuration of the manifest's `tune` lists, the manifest's own first. `only` narrows
/// the search (`tune --only NAME=V,..`): its values replace the list of a tuned constant, or fix
/// one the manifest does not tune.
pub fn space(spec: &VariantSpec, only: &[(String, Vec<i64>)]) -> Vec<Config> {
    let mut lists: Vec<(&str, &[i64])> = spec.tune.iter().map(|(n, v)| (n.as_str(), v.as_slice())).collect();
    for (name, values) in only {
        match lists.iter_mut().find(|(n, _)| n == name) {
            Some(l) => l.1 = values,
            None => lists.push((name, values)),
        }
    }
    let mut configs = vec![spec.config()];
    for (name, values) in lists {
        configs = configs.iter().flat_map(|c| values.iter().map(move |&v| c.with(name, v))).collect();
    }
    let mut out = vec![spec.config()];
    for c in configs {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Where a search starts in `space` (the runnable configurations, the manifest's first): the
/// manifest's configuration as the reference point, then `previous` (an earlier search's pick,
/// where it is still in the space), so a shorter search cannot replace it with a worse one untried,
/// then `earlier` (the configurations earlier searches ranked best, whatever code they were
/// measured with). After an edit to a kernel or to a header it includes, every stored candidate is
/// stale, yet their ranking is the best guess of where the best lies now: a search run again after
/// such an edit re-measures those first and reaches the old pick's neighbourhood in a few tries.
pub fn first_picks(space: &Space, previous: Option<&Config>, earlier: &[Config]) -> Vec<usize> {
    let mut picks: Vec<usize> = Vec::new();
    let wanted =
        std::iter::once(Some(0)).chain([previous.and_then(|p| space.index_of(p))]).chain(earlier.iter().map(|c| space.index_of(c)));
    for i in wanted.flatten().filter(|&i| i < space.len()) {
        if !picks.contains(&i) {
            picks.push(i);
        }
    }
    picks
}

/// The order the random strategy tries `runnable` (the manifest's configuration first): the
/// first picks, then the rest in a seeded random order, so a budget that ends the search early
/// still samples the whole space.
pub fn order(runnable: Vec<Config>, seed: u64, previous: Option<&Config>) -> Vec<Config> {
    let space = Space::new(runnable);
    let first = first_picks(&space, previous, &[]);
    let trace = strategy::drive::<()>(Strategy::Random, &space, &first, seed, &mut |_| true, &mut |_| Ok(None)).unwrap_or_default();
    trace.into_iter().map(|e| space.configs[e.index].clone()).collect()
}

/// Ok when the configuration may launch on a GPU of `sm`: `availability::configuration`.
pub fn prefilter(spec: &VariantSpec, config: &Config, sm: Option<u32>) -> std::result::Result<(), String> {
    availability::configuration(spec, config, sm).map(drop)
}

fn rejected(config: &Config, reason: String) -> Candidate {
    Candidate {
        config: config.clone(),
        status: CandidateStatus::Rejected,
        reason: Some(reason),
        median_ms: None,
        rate: None,
        error: None,
        registers: None,
        smem_bytes: None,
        local_bytes: None,
        blocks_per_sm: None,
        hash: None,
    }
}

/// One candidate, in this process (the child's side): compile, check it can launch, verify,
/// time with `policy`, verify again.
pub fn evaluate(
    gpu: &mut Gpu,
    spec: &'static VariantSpec,
    shape: &Shape,
    config: &Config,
    seed: u64,
    policy: &Policy,
) -> Result<Candidate> {
    let fam = families::of(spec)?;
    if let Err(why) = families::can_run(spec, config, shape, gpu.info.sm()) {
        return Ok(rejected(config, why));
    }
    // A candidate that does not compile is rejected here.
    let compiled = crate::gpu::jit::hash(spec, config, gpu.info.sm()).and_then(|h| Ok((h, gpu.jit(spec, config)?)));
    let (hash, kernel) = match compiled {
        Ok(hk) => hk,
        Err(e) => return Ok(rejected(config, e.to_string())),
    };
    let (registers, smem, local) = kernel.usage()?;
    let blocks = kernel.blocks_per_sm()?;
    let mut c = rejected(config, String::new());
    (c.registers, c.smem_bytes, c.local_bytes, c.blocks_per_sm, c.hash) =
        (Some(registers), Some(smem), Some(local), Some(blocks), Some(hash.clone()));
    if blocks == 0 {
        c.reason = Some(format!("cannot launch: {registers} registers x {} threads, {smem} B shared memory", config.threads()));
        return Ok(c);
    }
    let mut case = fam.prepare(gpu, shape, seed)?;
    let mut timer = Timer::new(gpu)?;
    let subject =
        Subject::Tuned { name: spec.name.clone(), config: config.clone(), tuned_at: "candidate".into(), date: String::new(), hash };
    let (e, _) = runner::measure(gpu, fam, case.as_mut(), &subject, shape, seed, Some(&mut timer), policy, false, &mut None)?;
    c.status = match e.status {
        Status::Ok => CandidateStatus::Ok,
        Status::Failed => CandidateStatus::Failed,
        Status::Skipped => CandidateStatus::Rejected,
    };
    c.reason = e.reason;
    c.median_ms = e.time.map(|t| t.median_ms);
    c.rate = e.rate;
    c.error = e.verify.map(|v| v.error).filter(|x| x.is_finite());
    Ok(c)
}

/// What the search needs to start a child.
pub struct Search<'a> {
    /// This program, which children run as `tune-candidate`.
    pub exe: &'a Path,
    pub gpu: usize,
    pub device: &'a DeviceInfo,
    pub budget_s: f64,
    pub top: usize,
    pub seed: u64,
    pub git_commit: &'a str,
    /// `--only`'s lists (see `space`).
    pub only: &'a [(String, Vec<i64>)],
    pub strategy: Strategy,
    /// The runs of this GPU model whose candidates make the cache (none with `--fresh`).
    pub cache: &'a [Run],
}

impl Search<'_> {
    /// Runs one candidate in a child process. A crash, a hang or unreadable output becomes a
    /// `Crashed` candidate with the end of the child's stderr.
    fn child(&self, spec: &VariantSpec, shape: &Shape, config: &Config, seed: u64, full: bool) -> Candidate {
        // A candidate that crashed, did not compile or was ruled out by the shape carries the hash
        // of what it would compile all the same, so the cache spares the next search its cost.
        let mut c = self.child_run(spec, shape, config, seed, full);
        if c.hash.is_none() {
            c.hash = crate::gpu::jit::hash(spec, config, self.device.sm()).ok();
        }
        c
    }

    fn child_run(&self, spec: &VariantSpec, shape: &Shape, config: &Config, seed: u64, full: bool) -> Candidate {
        let crashed = |why: String| Candidate { status: CandidateStatus::Crashed, ..rejected(config, why) };
        let json = serde_json::to_string(config).expect("a config serialises");
        let mut cmd = Command::new(self.exe);
        cmd.args(["tune-candidate", "--variant", &spec.name, "--size", &shape.to_string(), "--config", &json]).args([
            "--seed",
            &seed.to_string(),
            "--gpu",
            &self.gpu.to_string(),
        ]);
        if full {
            cmd.arg("--full");
        }
        let mut child = match Child::spawn(cmd, "") {
            Ok(c) => c,
            Err(e) => return crashed(format!("cannot start {}: {e}", self.exe.display())),
        };
        let deadline = Instant::now() + CHILD_LIMIT;
        let (mut last_out, mut err_tail) = (None, Vec::new());
        loop {
            match child.next(deadline) {
                Next::Line(Line::Out(l)) => last_out = Some(l),
                Next::Line(Line::Err(l)) => err_tail.push(l),
                Next::Closed => break,
                Next::TimedOut => {
                    child.kill();
                    return crashed(format!("killed after {} s", CHILD_LIMIT.as_secs()));
                }
            }
        }
        let status = child.wait();
        match last_out.as_deref().map(serde_json::from_str::<Candidate>) {
            Some(Ok(c)) if status.is_some_and(|s| s.success()) => c,
            _ => {
                let tail: Vec<&str> = err_tail.iter().rev().take(3).rev().map(String::as_str).collect();
                crashed(format!("{}: {}", status.map(|s| s.to_string()).unwrap_or_default(), tail.join(" | ")))
            }
        }
    }

    /// Searches `spec` at `shape` within `budget_s`, trying `previous` (an earlier search's pick)
    /// right after the manifest's configuration; `tried` gets each candidate measured as it
    /// finishes. Candidates run in child processes on the GPU.
    pub fn run(
        &self,
        spec: &'static VariantSpec,
        shape: &Shape,
        label: &str,
        previous: Option<&Config>,
        tried: &mut dyn FnMut(&Candidate) -> Result<()>,
    ) -> Result<TuneRecord> {
        let sm = self.device.sm();
        let mut child = |config: &Config, seed: u64, full: bool| self.child(spec, shape, config, seed, full);
        let hash = |config: &Config| crate::gpu::jit::hash(spec, config, sm).ok();
        self.run_with(spec, shape, label, previous, tried, &mut child, &hash)
    }

    /// `run` with what measures a candidate (`measure(config, seed, full policy)`) and what
    /// hashes a configuration given, so a test runs the search, cache included, on the CPU.
    #[allow(clippy::too_many_arguments)]
    pub fn run_with(
        &self,
        spec: &'static VariantSpec,
        shape: &Shape,
        label: &str,
        previous: Option<&Config>,
        tried: &mut dyn FnMut(&Candidate) -> Result<()>,
        measure: &mut dyn FnMut(&Config, u64, bool) -> Candidate,
        hash: &dyn Fn(&Config) -> Option<String>,
    ) -> Result<TuneRecord> {
        let all = space(spec, self.only);
        let sm = self.device.sm();
        let mut rec = TuneRecord {
            family: spec.family.to_string(),
            variant: spec.name.to_string(),
            shape: label.to_string(),
            dims: shape.0.clone(),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            git_commit: self.git_commit.to_string(),
            budget_s: self.budget_s,
            space: all.len(),
            ..TuneRecord::default()
        };
        let mut runnable = Vec::new();
        for c in all {
            match prefilter(spec, &c, Some(sm)) {
                Ok(()) => runnable.push(c),
                Err(why) => match rec.pruned.iter_mut().find(|(r, _)| *r == why) {
                    Some((_, n)) => *n += 1,
                    None => rec.pruned.push((why, 1)),
                },
            }
        }
        let space = Space::new(runnable);
        let cache = Cache::new(self.cache, &spec.name, label);
        let first = first_picks(&space, previous, &cache.stale_ranking(self.top, hash));
        let bar = ProgressBar::new((space.len() + self.top * ROUNDS) as u64);
        bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}").unwrap());
        bar.set_message(format!("{} {label}", spec.name));
        let start = Instant::now();
        let (measured, cached) = (std::cell::Cell::new(0usize), std::cell::Cell::new(0usize));
        let mut more = |evals: &[strategy::Eval]| {
            // The budget covers the head-to-head too: the search stops while the finalists'
            // re-runs, at the measured candidates' mean time so far, still fit. Cached candidates
            // cost nothing.
            let spent = start.elapsed().as_secs_f64();
            let finals = spent / measured.get().max(1) as f64 * (self.top.min(evals.len()) * ROUNDS) as f64;
            let go = measured.get() == 0 || spent + finals <= self.budget_s;
            if !go && evals.len() < space.len() {
                bar.suspend(|| {
                    eprintln!("{}: budget of {} s reached after {} of {} candidates", spec.name, self.budget_s, evals.len(), space.len())
                });
            }
            go
        };
        let mut eval = |i: usize| -> Result<Option<f64>> {
            let config = &space.configs[i];
            let hit = if cache.is_empty() { None } else { hash(config).and_then(|h| cache.get(config, &h)).cloned() };
            let c = match hit {
                Some(c) => {
                    cached.set(cached.get() + 1);
                    c
                }
                None => {
                    let c = measure(config, self.seed.wrapping_add(rec.candidates.len() as u64), false);
                    measured.set(measured.get() + 1);
                    tried(&c)?;
                    c
                }
            };
            rec.tried += 1;
            let score = tune_cache::score(&c);
            rec.candidates.push(c);
            bar.inc(1);
            Ok(score)
        };
        strategy::drive(self.strategy, &space, &first, self.seed, &mut more, &mut eval)?;
        if cached.get() > 0 {
            bar.suspend(|| eprintln!("{}: {} of {} candidates from the cache", spec.name, cached.get(), rec.tried));
        }
        // Ranked by rate, not time: a constant may change the declared work (the peak family's
        // CHAINS), and then the fastest launch is not the fastest configuration.
        let fam = families::of(spec).ok();
        let rate_of = |config: &Config, ms: f64| {
            let launch = availability::configuration(spec, config, Some(sm)).ok();
            fam.map_or(-ms, |f| f.work(shape, launch.as_ref()).rate(f.info().unit, ms))
        };
        let mut finalists: Vec<&Candidate> =
            rec.candidates.iter().filter(|c| c.status == CandidateStatus::Ok && c.median_ms.is_some()).collect();
        finalists.sort_by(|a, b| rate_of(&b.config, b.median_ms.unwrap()).total_cmp(&rate_of(&a.config, a.median_ms.unwrap())));
        let finalists: Vec<Candidate> = finalists.into_iter().take(self.top).cloned().collect();
        let mut scores: Vec<(Candidate, Vec<f64>)> = finalists.into_iter().map(|c| (c, Vec::new())).collect();
        for round in 0..ROUNDS {
            for (i, (c, medians)) in scores.iter_mut().enumerate() {
                let seed = self.seed.wrapping_add(1_000_000 + (round * 100 + i) as u64);
                let again = measure(&c.config, seed, true);
                if again.status == CandidateStatus::Ok {
                    medians.push(again.median_ms.unwrap_or(f64::INFINITY));
                    *c = Candidate { median_ms: c.median_ms, ..again };
                } else {
                    medians.push(f64::INFINITY);
                }
                bar.inc(1);
            }
        }
        let mean = |m: &[f64]| m.iter().sum::<f64>() / m.len().max(1) as f64;
        rec.head_to_head = scores.iter().map(|(c, m)| (c.config.label(), m.clone())).collect();
        if let Some((c, m)) = scores
            .iter()
            .filter(|(_, m)| m.iter().all(|x| x.is_finite()))
            .max_by(|a, b| rate_of(&a.0.config, mean(&a.1)).total_cmp(&rate_of(&b.0.config, mean(&b.1))))
        {
            rec.best = Some(c.config.clone());
            rec.best_hash = c.hash.clone();
            rec.best_median_ms = Some(mean(m));
            rec.best_rate = Some(rate_of(&c.config, mean(m)));
        }
        bar.finish_and_clear();
        Ok(rec)
    }
}
