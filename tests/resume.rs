//! Resumable work on the CPU: which subjects a resumed bench still runs given what its run file
//! holds, which run files it may resume, appending to one a kill left torn; and the tuner's
//! cache: a killed search started again measures only what its run file does not hold, and picks
//! as the uninterrupted search would have.

mod common;

use std::cell::RefCell;
use std::path::Path;

use kernel_lab::analysis::store;
use kernel_lab::facts::manifest::Config;
use kernel_lab::gpu::registry;
use kernel_lab::measure::families::{self, Shape};
use kernel_lab::measure::plan::{self, Job, Options, Subject};
use kernel_lab::measure::resume::Appender;
use kernel_lab::measure::runner::blank_entry;
use kernel_lab::measure::strategy::Strategy;
use kernel_lab::measure::{tune, tune_cache};
use kernel_lab::schema::device::DeviceInfo;
use kernel_lab::schema::entry::{Entry, Status};
use kernel_lab::schema::run::{Policy, Record, Run, RunKind};
use kernel_lab::schema::tuning::{Candidate, CandidateStatus, TuneRecord};

fn h200() -> DeviceInfo {
    serde_json::from_str(
        r#"{"ordinal":0,"name":"NVIDIA H200","cc_major":9,"cc_minor":0,"sms":132,"l2_bytes":62914560,
        "smem_per_block_optin":232448,"smem_per_sm":233472,"total_mem_bytes":150109880320,"sm_clock_khz":1980000,
        "mem_clock_khz":3201000,"bus_width_bits":6016,"driver":"13.0","uuid":null,"host":null}"#,
    )
    .unwrap()
}

fn run_of(kind: RunKind, seed: Option<u64>, policy: Option<Policy>, records: Vec<Record>, complete: bool) -> Run {
    let header = store::new_header(kind, &h200(), seed, policy, None);
    Run { path: "results/nvidia-h200-sm_90/run.jsonl".into(), header, records, complete }
}

// ---- bench --resume -------------------------------------------------------------------------

fn bench_options() -> Options {
    Options { filter: Some("sgemm".into()), sizes: vec!["256".into(), "512".into(), "768".into()], time: true, ..Options::default() }
}

fn bench_jobs(seed: u64) -> Vec<Job> {
    let opts = bench_options();
    plan::jobs(&plan::plan(&opts, seed).unwrap(), &opts, seed)
}

/// The entry a bench records for `subject` of `step`: what a killed run's file holds.
fn measured(job: &Job, step: usize, subject: &Subject) -> Entry {
    let s = &job.steps[step];
    let fam = families::get(&job.family).unwrap();
    let mut e = blank_entry(fam, subject, &Shape(s.dims.clone()), s.seed, &h200()).unwrap();
    e.status = Status::Ok;
    e
}

#[test]
fn a_resumed_bench_skips_what_its_run_file_holds_and_measures_the_baseline_again_where_a_shape_is_partly_done() {
    let jobs = bench_jobs(42);
    assert_eq!(jobs.len(), 1, "sgemm alone");
    let job = &jobs[0];
    assert_eq!(job.steps.len(), 3);
    let subjects = &job.steps[1].subjects;
    assert_eq!(subjects[0], Subject::Baseline);
    assert!(subjects.len() > 5, "{subjects:?}");
    // Killed during the second shape's fifth subject: the first shape and four subjects are held.
    let mut held: Vec<Entry> = job.steps[0].subjects.iter().map(|s| measured(job, 0, s)).collect();
    held.extend(subjects[..4].iter().map(|s| measured(job, 1, s)));
    let left = plan::resume(jobs.clone(), &held);
    assert_eq!(left.len(), 1);
    let steps = &left[0].steps;
    assert_eq!(steps.len(), 2, "the finished shape is not run again");
    assert_eq!(steps[0].dims, job.steps[1].dims);
    // The baseline and cuBLASLt's best again (the rest pair with them), then what was not held.
    let refs = subjects.iter().take_while(|s| matches!(s, Subject::Baseline | Subject::VendorBest)).count();
    let mut expect: Vec<Subject> = subjects[..refs].to_vec();
    expect.extend(subjects[4..].iter().cloned());
    assert_eq!(steps[0].subjects, expect);
    assert_eq!(steps[0].seed, job.steps[1].seed, "the same inputs");
    assert_eq!(steps[1].subjects, job.steps[2].subjects, "the untouched shape whole");

    assert_eq!(plan::resume(jobs.clone(), &[]).len(), 1);
    assert_eq!(plan::resume(jobs.clone(), &[])[0].steps.len(), 3, "nothing held: all of it");
    let all: Vec<Entry> = job.steps.iter().enumerate().flat_map(|(i, s)| s.subjects.iter().map(move |x| measured(job, i, x))).collect();
    assert!(plan::resume(jobs.clone(), &all).is_empty(), "all held: nothing");
}

#[test]
fn an_entry_counts_as_held_only_for_the_same_inputs_and_configuration() {
    let jobs = bench_jobs(42);
    let job = &jobs[0];
    let step = &job.steps[0];
    let variant = step.subjects.iter().find(|s| matches!(s, Subject::Variant { .. })).unwrap().clone();
    let e = measured(job, 0, &variant);
    assert!(plan::holds(&e, "sgemm", step, &variant));
    // Another seed draws other inputs: the subject is run again.
    let other = &bench_jobs(43)[0].steps[0];
    assert!(!plan::holds(&e, "sgemm", other, &variant));
    assert!(!plan::holds(&e, "sgemm", &job.steps[1], &variant), "another shape");
    // A tuned subject is held only in the configuration it was measured in.
    let Subject::Variant { name } = &variant else { unreachable!() };
    let spec = registry::by_name(name).unwrap();
    let tuned = |c: Config| Subject::Tuned {
        name: name.clone(),
        config: c,
        tuned_at: "tuned at 256".into(),
        date: String::new(),
        hash: "ab".into(),
    };
    let t = measured(job, 0, &tuned(spec.config()));
    assert!(plan::holds(&t, "sgemm", step, &tuned(spec.config())));
    assert!(!plan::holds(&t, "sgemm", step, &tuned(spec.config().with("BLOCK_X", 512))));
    assert!(!plan::holds(&t, "sgemm", step, &variant), "the variant as built is another subject");
}

#[test]
fn a_tuning_that_picked_the_manifests_configuration_adds_no_tuned_subject() {
    let record = |best: Config| TuneRecord {
        best: Some(best),
        best_hash: Some("ab".into()),
        ..common::tune_record("sgemm", "sgemm_08_double_buffered", &[512; 3])
    };
    let manifest = registry::by_name("sgemm_08_double_buffered").unwrap().config();
    let tuned_subjects = |best: Config| {
        let opts = Options { filter: Some("sgemm_08_double_buffered".into()), sizes: vec!["512".into()], tuned: vec![record(best)], ..Options::default() };
        let jobs = plan::jobs(&plan::plan(&opts, 1).unwrap(), &opts, 1);
        jobs[0].steps[0].subjects.iter().filter(|s| matches!(s, Subject::Tuned { .. })).count()
    };
    assert_eq!(tuned_subjects(manifest.with("BLOCK_X", 256)), 1, "another configuration is timed as @tuned");
    assert_eq!(tuned_subjects(manifest), 0, "the manifest's own configuration is not timed twice");
}

#[test]
fn only_a_cut_short_bench_of_this_gpu_model_with_its_seed_and_policy_resumes() {
    let policy = bench_options().policy();
    let ok = run_of(RunKind::Bench, Some(42), Some(policy), Vec::new(), false);
    assert_eq!(plan::resumable(&ok, &h200(), None, &policy).unwrap(), 42);
    assert_eq!(plan::resumable(&ok, &h200(), Some(42), &policy).unwrap(), 42);
    let refused = |run: &Run, dev: &DeviceInfo, seed: Option<u64>, policy: &Policy, says: &str| {
        let e = plan::resumable(run, dev, seed, policy).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        let text = e.to_string();
        assert!(text.contains(says) && text.contains("--resume") && !text.contains('\n'), "{text}");
    };
    refused(&ok, &h200(), Some(7), &policy, "seed is 42");
    refused(&run_of(RunKind::Bench, Some(42), Some(policy), Vec::new(), true), &h200(), None, &policy, "finished");
    refused(&run_of(RunKind::Tune, Some(42), None, Vec::new(), false), &h200(), None, &policy, "a tune run");
    refused(&run_of(RunKind::Bench, None, Some(policy), Vec::new(), false), &h200(), None, &policy, "no seed");
    refused(&ok, &h200(), None, &Policy::quick(), "timed another way");
    let mut h100 = h200();
    h100.name = "NVIDIA H100 80GB HBM3".into();
    refused(&ok, &h100, None, &policy, "this GPU is NVIDIA H100");
}

#[test]
fn appending_to_a_killed_run_cuts_its_torn_last_line_and_ends_it() {
    let dir = tempfile::tempdir().unwrap();
    let header = store::new_header(RunKind::Bench, &h200(), Some(42), Some(Policy::full()), None);
    let mut w = store::Writer::create(dir.path(), &header).unwrap();
    let job = &bench_jobs(42)[0];
    let first = measured(job, 0, &job.steps[0].subjects[0]);
    w.append(&Record::Entry(Box::new(first.clone()))).unwrap();
    let path = w.path.clone();
    drop(w);
    // The kill: half a record, no newline.
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"record":"entry","family":"sgem"#);
    std::fs::write(&path, &text).unwrap();
    let before = store::read_run(&path).unwrap();
    assert!(!before.complete);
    let mut a = Appender::open(&path).unwrap();
    let second = measured(job, 0, &job.steps[0].subjects[1]);
    a.append(&Record::Entry(Box::new(second.clone()))).unwrap();
    assert_eq!(a.finish(vec![("timing".into(), 1.0)]).unwrap(), path);
    let after = store::read_run(Path::new(&path)).unwrap();
    assert!(after.complete, "it ends with its end record");
    assert_eq!(after.header, before.header, "the same run");
    assert_eq!(after.entries().cloned().collect::<Vec<_>>(), vec![first, second]);
    assert!(!std::fs::read_to_string(&path).unwrap().contains("sgem\""), "the torn line is gone");
}

// ---- the tuner's cache ----------------------------------------------------------------------

fn candidate(config: &Config, rate: f64, hash: &str) -> Candidate {
    Candidate {
        config: config.clone(),
        status: CandidateStatus::Ok,
        reason: None,
        median_ms: Some(10.0 / rate),
        rate: Some(rate),
        error: Some(1e-6),
        registers: Some(128),
        smem_bytes: Some(16384),
        local_bytes: Some(0),
        blocks_per_sm: Some(2),
        hash: Some(hash.into()),
    }
}

fn candidate_record(variant: &str, shape: &str, c: Candidate) -> Record {
    Record::Candidate { family: "sgemm".into(), variant: variant.into(), shape: shape.into(), candidate: Box::new(c) }
}

#[test]
fn the_cache_holds_a_candidate_for_its_variant_shape_and_current_hash_only() {
    let spec = registry::by_name("sgemm_08_double_buffered").unwrap();
    let (a, b) = (spec.config(), spec.config().with("BK", 16));
    let mut old =
        run_of(RunKind::Tune, Some(1), None, vec![candidate_record(&spec.name, "4096x4096x4096", candidate(&a, 10.0, "h1"))], true);
    old.header.run.date = "2026-01-01T00:00:00Z".into();
    let new = run_of(
        RunKind::Tune,
        Some(2),
        None,
        vec![
            candidate_record(&spec.name, "4096x4096x4096", candidate(&a, 12.0, "h1")),
            candidate_record(&spec.name, "1024x1024x1024", candidate(&b, 30.0, "h2")),
            candidate_record("sgemm_09_l2_swizzle", "4096x4096x4096", candidate(&b, 40.0, "h2")),
        ],
        false,
    );
    let bench =
        run_of(RunKind::Bench, Some(3), None, vec![candidate_record(&spec.name, "4096x4096x4096", candidate(&b, 50.0, "h2"))], true);
    let runs = vec![new, old, bench];
    let cache = tune_cache::Cache::new(&runs, &spec.name, "4096x4096x4096");
    assert_eq!(cache.len(), 2, "this variant at this shape, from tune runs");
    assert_eq!(cache.get(&a, "h1").and_then(|c| c.rate), Some(12.0), "the newest");
    assert!(cache.get(&a, "h0").is_none(), "another hash: the code changed since");
    assert!(cache.get(&b, "h2").is_none(), "another shape or variant");
}

#[test]
fn the_newest_unfinished_tune_with_the_same_arguments_is_taken_up() {
    let args: Vec<String> = "/x/kernel-lab tune sgemm sgemm_08 --size 4096".split(' ').map(String::from).collect();
    let with = |command: &str, date: &str, complete: bool| {
        let mut r = run_of(RunKind::Tune, Some(date.len() as u64), None, Vec::new(), complete);
        r.header.run.command = command.into();
        r.header.run.date = date.into();
        r
    };
    let same = "target/release/kernel-lab tune sgemm sgemm_08 --size 4096";
    let killed = with(same, "2026-02-01T00:00:00Z", false);
    let other = with("kernel-lab tune sgemm sgemm_08 --size 1024", "2026-03-01T00:00:00Z", false);
    let runs = vec![killed.clone(), other];
    assert_eq!(tune_cache::unfinished(&runs, &args).map(|r| &r.header.run.date), Some(&killed.header.run.date));
    // A search with these arguments that finished later: a new search is on purpose, not a resume.
    let mut runs = runs;
    runs.push(with(same, "2026-02-02T00:00:00Z", true));
    assert!(tune_cache::unfinished(&runs, &args).is_none());
}

/// A search of sgemm_08 at 4096³ on the CPU: `measure` gives each candidate a rate from its
/// configuration, as if timed, and counts the candidates measured (not the head-to-head).
fn search(
    strategy: Strategy,
    cache: &[Run],
    kill_after: Option<usize>,
    measured: &RefCell<Vec<Config>>,
) -> (Result<TuneRecord, String>, Vec<Record>) {
    let spec = registry::by_name("sgemm_08_double_buffered").unwrap();
    let only = vec![("SPLIT_K".to_string(), vec![1]), ("PAD_ROWS".to_string(), vec![1])];
    let device = h200();
    let s = tune::Search {
        exe: Path::new("kernel-lab"),
        gpu: 0,
        device: &device,
        budget_s: 1e9,
        top: 2,
        seed: 5,
        git_commit: "test",
        only: &only,
        strategy,
        cache,
    };
    let hash = |c: &Config| Some(format!("{:x}", c.label().len() * 7919 + c.defines.iter().map(|d| d.1 as usize).sum::<usize>()));
    let rate = |c: &Config| 10.0 + (c.value("BM").unwrap() + c.value("BN").unwrap() + 7 * c.value("WNITER").unwrap()) as f64 / 10.0;
    let mut measure = |c: &Config, _seed: u64, full: bool| {
        if !full {
            measured.borrow_mut().push(c.clone());
        }
        candidate(c, rate(c), &hash(c).unwrap())
    };
    let mut records = Vec::new();
    let shape = Shape(vec![4096; 3]);
    let label = "4096x4096x4096";
    let rec = s.run_with(
        spec,
        &shape,
        label,
        None,
        &mut |c| {
            if kill_after.is_some_and(|k| records.len() >= k) {
                return Err(kernel_lab::LabError::Usage("killed".into()));
            }
            records.push(candidate_record(&spec.name, label, c.clone()));
            Ok(())
        },
        &mut measure,
        &hash,
    );
    (rec.map_err(|e| e.to_string()), records)
}

#[test]
fn a_killed_search_started_again_measures_only_what_its_run_file_lacks_and_ends_as_the_whole_search() {
    for strategy in Strategy::ALL {
        let whole_measured = RefCell::new(Vec::new());
        let (whole, _) = search(strategy, &[], None, &whole_measured);
        let whole = whole.unwrap();
        let n = whole_measured.borrow().len();
        assert!(n > 40, "{}: {n} candidates", strategy.name());

        let first_measured = RefCell::new(Vec::new());
        let (killed, held) = search(strategy, &[], Some(25), &first_measured);
        assert_eq!(killed.unwrap_err(), "killed");
        assert_eq!(held.len(), 25);
        let killed_run = run_of(RunKind::Tune, Some(5), None, held, false);

        let again_measured = RefCell::new(Vec::new());
        let (again, _) = search(strategy, &[killed_run], None, &again_measured);
        let again = again.unwrap();
        assert_eq!(again_measured.borrow().len(), n - 25, "{}: the 25 held are not measured again", strategy.name());
        assert_eq!(again.candidates, whole.candidates, "{}: the same picks in the same order", strategy.name());
        assert_eq!(again.best, whole.best);
        assert_eq!(again.tried, whole.tried);
    }
}

#[test]
fn fresh_measures_everything_again_and_a_cache_replays_a_search() {
    let whole_measured = RefCell::new(Vec::new());
    let (whole, held) = search(Strategy::Genetic, &[], None, &whole_measured);
    let whole = whole.unwrap();
    let done = run_of(RunKind::Tune, Some(5), None, held, true);
    // The cache as stored, the hashes as they were: nothing measured.
    let none = RefCell::new(Vec::new());
    search(Strategy::Genetic, std::slice::from_ref(&done), None, &none).0.unwrap();
    assert!(none.borrow().is_empty());
    // --fresh passes no runs: everything again.
    let all = RefCell::new(Vec::new());
    search(Strategy::Genetic, &[], None, &all).0.unwrap();
    assert_eq!(all.borrow().len(), whole_measured.borrow().len());
    // Simulation: the strategy on the stored rates, no GPU, picks as the search did.
    let cache = tune_cache::Cache::new(&[done], "sgemm_08_double_buffered", "4096x4096x4096");
    let spec = registry::by_name("sgemm_08_double_buffered").unwrap();
    let replay = tune_cache::simulate(Strategy::Random, &cache, &[spec.config()], 9, 30);
    assert_eq!(replay.len(), 30);
    assert_eq!(replay[0].0, spec.config(), "from the manifest's configuration, as a search starts");
    assert!(replay.iter().all(|(c, s)| *s == cache.score(c) && s.is_some()));
    assert_eq!(tune_cache::simulate(Strategy::Random, &cache, &[spec.config()], 9, 30), replay, "seeded");
    let everything = tune_cache::simulate(Strategy::Genetic, &cache, &[], 1, usize::MAX);
    assert_eq!(everything.len(), whole.candidates.len(), "a strategy replayed to the end covers the cache");
    // Judging a strategy: the evaluations to the best stored rate, per seed, counted from the
    // replay itself.
    let best = tune_cache::best(&cache).unwrap();
    assert_eq!(Some(best), everything.iter().filter_map(|(_, s)| *s).reduce(f64::max));
    for strategy in Strategy::ALL {
        let to = tune_cache::evaluations_to(strategy, &cache, &[spec.config()], 0..6, best);
        for (seed, n) in (0..6).zip(&to) {
            let replay = tune_cache::simulate(strategy, &cache, &[spec.config()], seed, usize::MAX);
            let want = replay.iter().position(|(_, s)| *s == Some(best)).map(|i| i + 1);
            assert_eq!(*n, want, "{} seed {seed}", strategy.name());
            assert!(n.is_some(), "a replay to the end reaches the best");
        }
        let never = tune_cache::evaluations_to(strategy, &cache, &[], 0..3, best * 2.0);
        assert_eq!(never, [None, None, None], "no stored rate is twice the best");
    }
}

#[test]
fn after_an_edit_a_search_first_measures_what_the_stale_searches_ranked_best() {
    // A whole search as stored, then its hashes made stale (the code changed since).
    let whole_measured = RefCell::new(Vec::new());
    let (whole, held) = search(Strategy::Random, &[], None, &whole_measured);
    let whole = whole.unwrap();
    let stale: Vec<Record> = held
        .into_iter()
        .map(|r| match r {
            Record::Candidate { family, variant, shape, mut candidate } => {
                candidate.hash = Some(format!("old-{}", candidate.hash.unwrap_or_default()));
                Record::Candidate { family, variant, shape, candidate }
            }
            other => other,
        })
        .collect();
    let mut ranked: Vec<&Candidate> = whole.candidates.iter().collect();
    ranked.sort_by(|a, b| b.rate.unwrap().total_cmp(&a.rate.unwrap()));
    let old = run_of(RunKind::Tune, Some(5), None, stale, true);
    let again = RefCell::new(Vec::new());
    search(Strategy::Random, &[old], None, &again).0.unwrap();
    let again = again.borrow();
    let spec = registry::by_name("sgemm_08_double_buffered").unwrap();
    assert_eq!(again[0], spec.config().with("SPLIT_K", 1).with("PAD_ROWS", 1), "the manifest's configuration first");
    let top: Vec<&Config> = ranked.iter().take(2).map(|c| &c.config).collect();
    assert_eq!(again[1..3].iter().collect::<Vec<_>>(), top, "then the stale searches' two best (top = 2), every one measured anew");
    assert_eq!(again.len(), whole_measured.borrow().len(), "nothing stale is taken from the cache");
}
