//! `kernel-lab tune`: search a variant's tunable constants on the running GPU.
//!
//! The space is the product of the manifest's `tune` lists; candidates that break the
//! manifest's constraints or the architecture's limits are dropped before anything is compiled.
//! Each survivor runs in a child process (`kernel-lab tune-candidate`): NVRTC compiles it for
//! this GPU, it is checked for launchability, verified, and timed. A child that crashes or hangs
//! is recorded as such and the search goes on; the record is saved after every candidate, so
//! nothing measured is lost. The fastest few are then re-timed head to head.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::arch;
use crate::device::{DeviceInfo, Gpu};
use crate::error::{LabError, Result};
use crate::families::{self, Shape};
use crate::registry::{Config, VariantSpec};
use crate::runner::{self, Subject};
use crate::store::{Candidate, CandidateStatus, Status, TuneRecord};
use crate::timing::{Policy, Timer};

/// A candidate's process is killed after this long.
const CHILD_LIMIT: Duration = Duration::from_secs(120);
/// Rounds of the head-to-head re-timing.
const ROUNDS: usize = 2;

/// Every configuration of the manifest's `tune` lists, the manifest's own first.
pub fn space(spec: &VariantSpec) -> Vec<Config> {
    let mut configs = vec![spec.config()];
    for (name, values) in spec.tune {
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

/// Ok when the configuration may launch on `arch`: its manifest constraints hold and its
/// block fits the architecture.
pub fn prefilter(spec: &VariantSpec, config: &Config, arch: Option<&arch::Arch>) -> std::result::Result<(), String> {
    crate::expr::check_all(spec.constraints, &|n| config.value(n))?;
    let threads = config.threads();
    let max = arch.map_or(1024, |a| a.max_threads_per_sm.min(1024));
    if threads == 0 || threads > max {
        return Err(format!("{threads} threads per block; this GPU takes at most {max}"));
    }
    Ok(())
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
    let fam = families::get(spec.family).ok_or_else(|| LabError::Usage(format!("no family {}", spec.family)))?;
    if let Err(why) = fam.can_implement(spec, config, shape) {
        return Ok(rejected(config, why));
    }
    // The hash is of the generated PTX: a candidate that does not compile is rejected here.
    let compiled = crate::jit::hash(spec, config, gpu.info.sm()).and_then(|h| Ok((h, gpu.jit(spec, config)?)));
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
    let subject = Subject::Compiled { kernel, name: spec.name.to_string(), note: "candidate".into(), hash };
    let e = runner::measure(gpu, fam, case.as_mut(), &subject, shape, seed, Some(&mut timer), policy)?;
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
}

impl Search<'_> {
    /// Runs one candidate in a child process. A crash, a hang or unreadable output becomes a
    /// `Crashed` candidate with the end of the child's stderr.
    fn child(&self, spec: &VariantSpec, shape: &Shape, config: &Config, seed: u64, full: bool) -> Candidate {
        let crashed = |why: String| Candidate { status: CandidateStatus::Crashed, ..rejected(config, why) };
        let json = serde_json::to_string(config).expect("a config serialises");
        let mut cmd = Command::new(self.exe);
        cmd.args(["tune-candidate", "--variant", spec.name, "--size", &shape.to_string(), "--config", &json])
            .args(["--seed", &seed.to_string(), "--gpu", &self.gpu.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if full {
            cmd.arg("--full");
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return crashed(format!("cannot start {}: {e}", self.exe.display())),
        };
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if start.elapsed() > CHILD_LIMIT => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return crashed(format!("killed after {} s", CHILD_LIMIT.as_secs()));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return crashed(format!("lost the child process: {e}")),
            }
        };
        let (mut out, mut err) = (String::new(), String::new());
        child.stdout.take().map(|mut s| s.read_to_string(&mut out));
        child.stderr.take().map(|mut s| s.read_to_string(&mut err));
        match out.lines().last().map(serde_json::from_str::<Candidate>) {
            Some(Ok(c)) if status.success() => c,
            _ => {
                let tail: Vec<&str> = err.lines().rev().take(3).collect();
                crashed(format!("{status}: {}", tail.into_iter().rev().collect::<Vec<_>>().join(" | ")))
            }
        }
    }

    /// Searches `spec` at `shape` within `budget_s`; `save` gets the record after every step.
    pub fn run(
        &self,
        spec: &'static VariantSpec,
        shape: &Shape,
        label: &str,
        save: &mut dyn FnMut(&TuneRecord) -> Result<()>,
    ) -> Result<TuneRecord> {
        let all = space(spec);
        let arch = arch::lookup(self.device.cc_major, self.device.cc_minor);
        let mut rec = TuneRecord {
            family: spec.family.to_string(),
            variant: spec.name.to_string(),
            shape: label.to_string(),
            dims: shape.0.clone(),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            git_commit: self.git_commit.to_string(),
            budget_s: self.budget_s,
            space: all.len(),
            tried: 0,
            pruned: Vec::new(),
            candidates: Vec::new(),
            head_to_head: Vec::new(),
            best: None,
            best_hash: None,
            best_median_ms: None,
            best_rate: None,
        };
        let mut runnable = Vec::new();
        for c in all {
            match prefilter(spec, &c, arch) {
                Ok(()) => runnable.push(c),
                Err(why) => match rec.pruned.iter_mut().find(|(r, _)| *r == why) {
                    Some((_, n)) => *n += 1,
                    None => rec.pruned.push((why, 1)),
                },
            }
        }
        // The manifest's configuration first (the reference point), the rest in a seeded random
        // order, so a budget that ends the search early still samples the whole space.
        if runnable.len() > 2 {
            use rand::{seq::SliceRandom, SeedableRng};
            runnable[1..].shuffle(&mut rand::rngs::SmallRng::seed_from_u64(self.seed));
        }
        let bar = ProgressBar::new((runnable.len() + self.top * ROUNDS) as u64);
        bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}").unwrap());
        bar.set_message(format!("{} {label}", spec.name));
        let start = Instant::now();
        for (i, config) in runnable.iter().enumerate() {
            if start.elapsed().as_secs_f64() > self.budget_s {
                bar.suspend(|| {
                    eprintln!("{}: budget of {} s reached after {i} of {} candidates", spec.name, self.budget_s, runnable.len())
                });
                break;
            }
            let c = self.child(spec, shape, config, self.seed.wrapping_add(i as u64), false);
            rec.tried += 1;
            rec.candidates.push(c);
            save(&rec)?;
            bar.inc(1);
        }
        // Ranked by rate, not time: a constant may change the declared work (the peak family's
        // CHAINS), and then the fastest launch is not the fastest configuration.
        let fam = families::get(spec.family);
        let rate_of = |config: &Config, ms: f64| fam.map_or(-ms, |f| f.work(shape, Some(config)).rate(f.unit(), ms));
        let mut finalists: Vec<&Candidate> =
            rec.candidates.iter().filter(|c| c.status == CandidateStatus::Ok && c.median_ms.is_some()).collect();
        finalists.sort_by(|a, b| rate_of(&b.config, b.median_ms.unwrap()).total_cmp(&rate_of(&a.config, a.median_ms.unwrap())));
        let finalists: Vec<Candidate> = finalists.into_iter().take(self.top).cloned().collect();
        let mut scores: Vec<(Candidate, Vec<f64>)> = finalists.into_iter().map(|c| (c, Vec::new())).collect();
        for round in 0..ROUNDS {
            for (i, (c, medians)) in scores.iter_mut().enumerate() {
                let seed = self.seed.wrapping_add(1_000_000 + (round * 100 + i) as u64);
                let again = self.child(spec, shape, &c.config, seed, true);
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
            rec.best_rate = fam.map(|f| f.work(shape, Some(&c.config)).rate(f.unit(), mean(m)));
        }
        save(&rec)?;
        bar.finish_and_clear();
        Ok(rec)
    }
}
