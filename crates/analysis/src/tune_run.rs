//! A `tune` command from its arguments to its stored run: which variants and shapes it searches
//! (every bad argument refused before any GPU work), the cache of earlier searches of this GPU
//! model, an unfinished search with the same arguments taken up where it stopped, and each
//! search's candidates and result stored as they come. The CLI parses and prints; this decides.

use std::path::{Path, PathBuf};

use crate::error::{LabError, Result};
use crate::gpu::device::Gpu;
use crate::gpu::jit;
use crate::gpu::registry::{self, VariantSpec};
use crate::measure::families::{self, inputs, shapes, Family, Shape};
use crate::measure::{tune, tune_cache};
use crate::schema::run::{Record, RunKind};
use crate::schema::tuning::TuneRecord;
use crate::store::{self, Recorder};

/// What the user asked `tune` for, as given.
pub struct Request {
    pub family: String,
    /// A variant of the family, or part of variant names (all of the family's when `None`).
    pub filter: Option<String>,
    /// Shapes in the family's syntax, with lists and START:END:STEP ranges.
    pub sizes: Vec<String>,
    pub suites: Vec<String>,
    /// Seconds in all, shared by the variants and shapes.
    pub time_budget: f64,
    /// Finalists re-timed head to head.
    pub top: usize,
    pub results_dir: PathBuf,
    pub seed: Option<u64>,
    pub gpu: usize,
    /// `NAME=V[,V..]` lists that narrow or fix a constant.
    pub only: Vec<String>,
    pub strategy: String,
    /// Ignore the cache and any unfinished search.
    pub fresh: bool,
    /// The command line, which an unfinished search with the same arguments is found by.
    pub command: Vec<String>,
}

/// What a request searches: the family, its tunable variants that match, the shapes, the values
/// `--only` fixes and the strategy.
pub struct Selection {
    pub family: &'static dyn Family,
    pub variants: Vec<&'static VariantSpec>,
    pub shapes: Vec<Shape>,
    pub only: Vec<(String, Vec<i64>)>,
    pub strategy: tune::Strategy,
}

fn usage(msg: String) -> LabError {
    LabError::Usage(msg)
}

impl Request {
    /// The variants and shapes this request searches, or the first thing wrong with it.
    pub fn select(&self) -> Result<Selection> {
        let name = registry::family(&self.family)?;
        let family =
            families::get(name).ok_or_else(|| usage(format!("the kernel set names a family the lab does not implement: {name}")))?;
        let filter = self.filter.as_deref().unwrap_or(name);
        let matching: Vec<_> = registry::select(Some(filter))?.into_iter().filter(|v| v.family == name).collect();
        if matching.is_empty() {
            return Err(usage(format!("'{filter}' names no variant of {name}")));
        }
        let variants: Vec<_> = matching.into_iter().filter(|v| !v.tune.is_empty()).collect();
        if variants.is_empty() {
            return Err(usage(format!(
                "no variant of {} matching '{filter}' has tunable constants (a `tune = {{ ... }}` table in its manifest entry)",
                self.family
            )));
        }
        if !(self.time_budget.is_finite() && self.time_budget > 0.0) {
            return Err(usage(format!("--time-budget must be a positive number of seconds, not {}", self.time_budget)));
        }
        let only = only_lists(&self.only, &variants)?;
        let strategy = tune::Strategy::parse(&self.strategy).map_err(|e| usage(format!("--strategy: {e}")))?;
        if self.top == 0 {
            return Err(usage("--top must be at least 1".into()));
        }
        let sizes = shapes::expand(&self.sizes).map_err(usage)?;
        let mut shapes = if sizes.is_empty() { Vec::new() } else { families::parse_sizes(family, &sizes)? };
        for name in &self.suites {
            let suites = family.suites();
            let Some(suite) = suites.iter().find(|s| s.name == name) else {
                let known: Vec<&str> = suites.iter().map(|s| s.name).collect();
                let known = if known.is_empty() { "none".into() } else { known.join(", ") };
                return Err(usage(format!("{} has no suite '{name}' (its suites: {known})", self.family)));
            };
            shapes.extend(suite.shapes.iter().cloned());
        }
        if shapes.is_empty() {
            shapes = family.tune_sizes();
        }
        Ok(Selection { family, variants, shapes, only, strategy })
    }
}

/// `--only NAME=V,V`: a constant every variant searched has (a define or BLOCK_X/Y/Z), and its values.
fn only_lists(texts: &[String], variants: &[&VariantSpec]) -> Result<Vec<(String, Vec<i64>)>> {
    let mut out: Vec<(String, Vec<i64>)> = Vec::new();
    for t in texts {
        let Some((name, values)) = t.split_once('=') else {
            return Err(usage(format!("--only takes NAME=V[,V..], not '{t}'")));
        };
        let values: Vec<i64> = values
            .split(',')
            .map(|v| v.trim().parse().map_err(|_| usage(format!("--only {name}: '{v}' is not an integer"))))
            .collect::<Result<_>>()?;
        if let Some(v) = variants.iter().find(|v| v.config().value(name).is_none()) {
            return Err(usage(format!("--only: {} has no constant {name}", v.name)));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(usage(format!("--only names {name} twice")));
        }
        out.push((name.to_string(), values));
    }
    Ok(out)
}

/// What a person is told as a tune run goes, before its table.
pub enum Note<'a> {
    /// An unfinished search with the same arguments, taken up from its run file.
    Resumed(&'a Path),
    /// The GPU, the seconds each variant and shape gets, the strategy and the seed.
    Started { gpu: &'a str, arch: String, budget_s: f64, strategy: &'a str, seed: u64 },
}

/// Runs the searches of `sel` on the request's GPU, storing the run under the results folder as
/// it goes: each candidate as it is measured, then each search's `TuneRecord`, which `each` also
/// gets with its variant. A search the unfinished run had finished is kept as it was. Returns the
/// run file (none when nothing was written).
pub fn run(
    req: &Request,
    sel: &Selection,
    note: &mut dyn FnMut(Note),
    each: &mut dyn FnMut(&VariantSpec, &TuneRecord),
) -> Result<Option<PathBuf>> {
    let gpu = Gpu::open(req.gpu)?;
    if !jit::available() {
        return Err(LabError::Unavailable("the tuner compiles candidates with NVRTC, and libnvrtc.so was not found".into()));
    }
    let exe = std::env::current_exe().map_err(|e| LabError::Unavailable(format!("cannot find this program to run candidates: {e}")))?;
    // The cache: candidates earlier searches of this GPU model stored. A search killed and
    // started again with the same arguments takes up its seed, so it retraces its picks from the
    // cache and goes on.
    let stored = store::runs_of_model(&req.results_dir, &gpu.info)?;
    let cache = if req.fresh { &[][..] } else { &stored[..] };
    let resumed = if req.fresh { None } else { tune_cache::unfinished(&stored, &req.command) };
    if let Some(r) = resumed {
        note(Note::Resumed(&r.path));
    }
    let search = tune::Search {
        exe: &exe,
        gpu: req.gpu,
        device: &gpu.info,
        budget_s: req.time_budget / (sel.variants.len() * sel.shapes.len()) as f64,
        top: req.top,
        seed: req.seed.or(resumed.and_then(|r| r.header.run.seed)).unwrap_or_else(inputs::clock_seed),
        git_commit: store::PROGRAM_COMMIT,
        only: &sel.only,
        strategy: sel.strategy,
        cache,
    };
    note(Note::Started {
        gpu: &gpu.info.name,
        arch: gpu.info.arch_name(),
        budget_s: search.budget_s,
        strategy: sel.strategy.name(),
        seed: search.seed,
    });
    let mut recorder = Recorder::new(&req.results_dir, store::new_header(RunKind::Tune, &gpu.info, Some(search.seed), None, None));
    // The stored best of each variant and shape is tried right after the manifest's
    // configuration, so a search with a smaller budget cannot replace it with a worse pick.
    let earlier = store::views(&stored, store::Group::Model).pop().map(|v| v.tuning).unwrap_or_default();
    for v in &sel.variants {
        for shape in &sel.shapes {
            let label = sel.family.info().shapes.label(shape);
            let previous = earlier.iter().find(|t| t.variant == v.name && t.dims == shape.0).and_then(|t| t.best.as_ref());
            let rec = match resumed.and_then(|r| tune_cache::finished(r, &v.name, &label)) {
                Some(rec) => rec,
                None => search.run(v, shape, &label, previous, &mut |c| {
                    let candidate = Box::new(c.clone());
                    recorder.append(Record::Candidate {
                        family: v.family.clone(),
                        variant: v.name.clone(),
                        shape: label.clone(),
                        candidate,
                    })
                })?,
            };
            recorder.append(Record::Tuning(Box::new(rec.clone())))?;
            each(v, &rec);
        }
    }
    recorder.finish(Vec::new())
}
