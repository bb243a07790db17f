//! Isolation: each job (one family's shapes) runs in a worker process of its own (`kernel-lab
//! worker`), so a variant that faults or never returns changes nothing for any other entry. The
//! worker reports each subject as it starts and each entry as it is measured; a worker that
//! dies, or goes past a subject's hang limit and is ended, leaves that subject FAILED with the
//! reason, and a new worker takes the job up after it. A fault that costs the worker its CUDA
//! context ends that worker after the faulting entry, and the next one starts clean.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::child::{Child, Line, Next};
use super::families::{self, Shape};
use super::phases::Phases;
use super::plan::{hang_limit, spec_of, Job};
use super::runner::{blank_entry, run_job, Event};
use crate::error::{exit, LabError, Result};
use crate::gpu::device::Gpu;
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Entry, Status};

/// Preparing one shape's inputs and reference (CPU work, and uploads) may take this long.
const PREPARE_LIMIT: Duration = Duration::from_secs(600);

/// What a worker is given on its stdin.
#[derive(Debug, Serialize, Deserialize)]
pub struct WorkerInput {
    pub job: Job,
    /// The (step, subject) to start from.
    pub from: (usize, usize),
}

/// The worker's side: reads its input, runs the job on GPU `ordinal`, and writes one JSON event
/// per line to stdout as it goes.
pub fn worker(ordinal: usize) -> Result<()> {
    let mut text = String::new();
    for line in std::io::stdin().lock().lines() {
        text.push_str(&line.map_err(|e| LabError::Usage(format!("worker input: {e}")))?);
    }
    let input: WorkerInput = serde_json::from_str(&text).map_err(|e| LabError::Usage(format!("worker input: {e}")))?;
    let mut gpu = Gpu::open(ordinal)?;
    let mut out = std::io::stdout().lock();
    run_job(&mut gpu, &input.job, input.from, &mut |ev| {
        let line = serde_json::to_string(&ev).map_err(|e| LabError::Usage(e.to_string()))?;
        writeln!(out, "{line}").and_then(|_| out.flush()).map_err(|e| LabError::Usage(format!("worker output: {e}")))
    })
}

/// How to start workers.
pub struct Isolation<'a> {
    /// This program, which workers run as `kernel-lab worker`.
    pub exe: &'a Path,
    pub gpu: usize,
    /// One hang limit for every subject, seconds (`--hang-limit`); else each subject's own.
    pub hang_limit: Option<f64>,
    pub device: &'a DeviceInfo,
}

/// Where a worker was when it stopped.
#[derive(Clone, Copy)]
enum At {
    Between,
    Preparing(usize),
    Subject(usize, usize, f64),
}

impl Isolation<'_> {
    fn limit(&self, job: &Job, step: usize, subject: usize) -> Result<f64> {
        if let Some(s) = self.hang_limit {
            return Ok(s);
        }
        let fam = families::get(&job.family).ok_or_else(|| LabError::Usage(format!("no family '{}'", job.family)))?;
        let spec = spec_of(&job.steps[step].subjects[subject])?;
        let launch = spec.map(|s| &s.launch);
        Ok(hang_limit(fam, spec, &Shape(job.steps[step].dims.clone()), fam.peak(self.device, launch), job))
    }

    fn failed_entry(&self, job: &Job, step: usize, subject: usize, reason: String) -> Result<Entry> {
        let fam = families::get(&job.family).ok_or_else(|| LabError::Usage(format!("no family '{}'", job.family)))?;
        let s = &job.steps[step];
        let mut e = blank_entry(fam, &s.subjects[subject], &Shape(s.dims.clone()), s.seed, self.device)?;
        e.status = Status::Failed;
        e.reason = Some(reason);
        Ok(e)
    }

    /// Runs every job in workers; `sink` gets each entry (measured, or failed for a worker that
    /// died or hung) in order, `log` each line the workers write to stderr, `phases` the time.
    pub fn run(
        &self,
        jobs: &[Job],
        sink: &mut dyn FnMut(Entry) -> Result<()>,
        log: &mut dyn FnMut(&str),
        phases: &mut Phases,
    ) -> Result<()> {
        for job in jobs {
            let mut from = (0usize, 0usize);
            while from.0 < job.steps.len() {
                let input = serde_json::to_string(&WorkerInput { job: job.clone(), from }).map_err(|e| LabError::Usage(e.to_string()))?;
                let mut cmd = Command::new(self.exe);
                cmd.args(["worker", "--gpu", &self.gpu.to_string()]);
                phases.spawned();
                let mut child = Child::spawn(cmd, &input)
                    .map_err(|e| LabError::Unavailable(format!("cannot start a worker ({}): {e}", self.exe.display())))?;
                let (mut at, mut deadline, mut events) = (At::Between, Instant::now() + PREPARE_LIMIT, 0usize);
                let mut tail: VecDeque<String> = VecDeque::new();
                let hung = loop {
                    match child.next(deadline) {
                        Next::Line(Line::Out(text)) => {
                            let Ok(ev) = serde_json::from_str::<Event>(&text) else {
                                log(&text);
                                continue;
                            };
                            events += 1;
                            if events == 1 {
                                phases.started();
                            }
                            phases.on(&ev);
                            match ev {
                                Event::Preparing { step } => {
                                    (at, deadline) = (At::Preparing(step), Instant::now() + PREPARE_LIMIT);
                                }
                                Event::Start { step, subject } => {
                                    let limit = self.limit(job, step, subject)?;
                                    (at, deadline) = (At::Subject(step, subject, limit), Instant::now() + Duration::from_secs_f64(limit));
                                }
                                Event::Entry { step, subject, entry } => {
                                    sink(*entry)?;
                                    from = next(job, step, subject);
                                    (at, deadline) = (At::Between, Instant::now() + PREPARE_LIMIT);
                                }
                            }
                        }
                        Next::Line(Line::Err(text)) => {
                            log(&text);
                            if tail.len() == 3 {
                                tail.pop_front();
                            }
                            tail.push_back(text);
                        }
                        Next::Closed => break false,
                        Next::TimedOut => break true,
                    }
                };
                let status = if hung { child.kill() } else { child.wait() };
                let said = tail.iter().map(|l| l.trim_start_matches("error: ").to_string()).collect::<Vec<_>>().join(" | ");
                if !hung && status.is_some_and(|s| s.success()) {
                    // A worker that finished its job; or one that stopped early, which is a bug.
                    if from.0 < job.steps.len() {
                        return Err(LabError::Usage(format!(
                            "a {} worker stopped at step {} of {} without saying why",
                            job.family,
                            from.0,
                            job.steps.len()
                        )));
                    }
                    break;
                }
                if events == 0 {
                    // It never started: no GPU, no kernels. Its own error, with its own code.
                    let code = status.and_then(|s| s.code()).unwrap_or(exit::DRIVER as i32);
                    return Err(match code as u8 {
                        exit::NO_GPU => LabError::Unavailable(said),
                        exit::USAGE => LabError::Usage(said),
                        _ => LabError::Usage(format!("a worker failed before it started: {said}")),
                    });
                }
                let how = status.map(|s| s.to_string()).unwrap_or_else(|| "its status is unknown".into());
                match at {
                    // After an entry: the worker ended itself (a fault cost its context); go on.
                    At::Between => {}
                    At::Preparing(step) => {
                        for subject in from.1..job.steps[step].subjects.len() {
                            sink(self.failed_entry(job, step, subject, format!("preparing the inputs failed ({how}): {said}"))?)?;
                        }
                        from = (step + 1, 0);
                    }
                    At::Subject(step, subject, limit) => {
                        let reason = if hung {
                            format!("no completion after {limit:.0} s (hang limit): its process was ended")
                        } else {
                            format!("its process died ({how}): {said}")
                        };
                        sink(self.failed_entry(job, step, subject, reason)?)?;
                        from = next(job, step, subject);
                    }
                }
            }
        }
        Ok(())
    }
}

/// The (step, subject) after `subject` of `step`.
fn next(job: &Job, step: usize, subject: usize) -> (usize, usize) {
    if subject + 1 < job.steps[step].subjects.len() {
        (step, subject + 1)
    } else {
        (step + 1, 0)
    }
}
