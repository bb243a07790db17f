//! Schema 1, read and converted: one JSON file per device whose reruns replaced entries, with
//! names standing in for types (`@tuned` on a variant, the configuration as a label). Each of its
//! runs becomes a run of schema 2; its tuning records, transfers and multi-GPU results become runs
//! of their own, dated as they were measured. `kernel-lab migrate` writes them out.

use std::path::Path;

use serde::Deserialize;

use crate::error::{LabError, Result};
use crate::facts::manifest::Config;
use crate::schema::check::Check;
use crate::schema::device::DeviceInfo;
use crate::schema::entry::{Entry, Kind, Status, Unit, Work};
use crate::schema::multi::MultiResults;
use crate::schema::run::{Header, Policy, Record, Run, RunInfo, RunKind, SCHEMA};
use crate::schema::stats::Summary;
use crate::schema::telemetry::Telemetry;
use crate::schema::transfers::Transfers;
use crate::schema::tuning::TuneRecord;

#[derive(Deserialize)]
struct V1File {
    device: DeviceInfo,
    runs: Vec<V1Run>,
    entries: Vec<V1Entry>,
    #[serde(default)]
    tuning: Vec<TuneRecord>,
    #[serde(default)]
    transfers: Option<Transfers>,
    #[serde(default)]
    multi: Option<MultiResults>,
}

#[derive(Deserialize)]
struct V1Run {
    id: u32,
    date: String,
    git_commit: String,
    lab_version: String,
    nvcc: String,
    driver: String,
    command: String,
    seed: u64,
    policy: Policy,
    #[serde(default)]
    notes: Vec<String>,
}

#[derive(Deserialize)]
struct V1Entry {
    run: u32,
    family: String,
    variant: String,
    baseline: bool,
    rung: u32,
    config: String,
    shape: String,
    dims: Vec<u64>,
    status: Status,
    reason: Option<String>,
    seed: u64,
    verify: Option<Check>,
    verify_after: Option<Check>,
    time: Option<Summary>,
    work: Work,
    unit: Unit,
    rate: Option<f64>,
    vs_baseline: Option<f64>,
    peak: Option<f64>,
    vs_peak: Option<f64>,
    source_hash: Option<String>,
    #[serde(default)]
    telemetry: Option<Telemetry>,
    #[serde(default)]
    remeasured: bool,
    #[serde(default)]
    compiled_here: Option<String>,
}

/// A schema-1 configuration label, "block 128 BK=8 BM=128 (tuned at 4096x4096x4096)", as a
/// configuration and where it was tuned; None for "vendor library" or a label it cannot read.
pub fn parse_label(label: &str) -> (Option<Config>, Option<String>) {
    let (body, tuned_at) = match label.split_once(" (") {
        Some((b, rest)) => (b, Some(rest.trim_end_matches(')').to_string())),
        None => (label, None),
    };
    let mut words = body.split_whitespace();
    if words.next() != Some("block") {
        return (None, tuned_at);
    }
    let mut block = [1u32; 3];
    let Some(dims) = words.next() else { return (None, tuned_at) };
    for (slot, d) in block.iter_mut().zip(dims.split('x')) {
        match d.parse() {
            Ok(v) => *slot = v,
            Err(_) => return (None, tuned_at),
        }
    }
    let defines: Option<Vec<(String, i64)>> =
        words.map(|w| w.split_once('=').and_then(|(k, v)| Some((k.to_string(), v.parse().ok()?)))).collect();
    (defines.map(|defines| Config { block, defines }), tuned_at)
}

fn entry(e: V1Entry) -> Entry {
    let (kind, variant) = match (e.baseline, e.variant.strip_suffix("@tuned")) {
        (true, _) => (Kind::Baseline, e.variant.clone()),
        (false, Some(v)) => (Kind::Tuned, v.to_string()),
        (false, None) => (Kind::Variant, e.variant.clone()),
    };
    let (config, tuned_at) = if kind == Kind::Baseline { (None, None) } else { parse_label(&e.config) };
    Entry {
        family: e.family,
        variant,
        kind,
        rung: e.rung,
        config,
        tuned_at,
        shape: e.shape,
        dims: e.dims,
        status: e.status,
        reason: e.reason,
        seed: e.seed,
        verify: e.verify,
        verify_after: e.verify_after,
        time: e.time,
        work: e.work,
        unit: e.unit,
        rate: e.rate,
        vs_baseline: e.vs_baseline,
        peak: e.peak,
        vs_peak: e.vs_peak,
        source_hash: e.source_hash,
        telemetry: e.telemetry,
        remeasured: e.remeasured,
        compiled_here: e.compiled_here,
        timing: None,
        paired: None,
        paired_best: None,
        wall: None,
        vendor_algo: None,
    }
}

/// The runs of a schema-1 file, oldest first.
pub fn read_v1(path: &Path) -> Result<Vec<Run>> {
    let e = |msg: String| LabError::Results { path: path.display().to_string(), msg };
    let text = std::fs::read_to_string(path).map_err(|x| e(format!("cannot read: {x}")))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|x| e(format!("not JSON: {x}")))?;
    match value.get("schema").and_then(|s| s.as_u64()) {
        None => return Err(e("not a kernel-lab results file (no schema number)".into())),
        Some(1) => {}
        Some(s) => return Err(e(format!("results schema {s}: this kernel-lab reads run files of schema {SCHEMA} and files of schema 1"))),
    }
    let file: V1File = serde_json::from_value(value).map_err(|x| e(format!("does not match results schema 1: {x}")))?;
    let device = file.device;
    let run_of = |id: String, kind: RunKind, date: &str, commit: &str, command: &str| RunInfo {
        id,
        kind,
        date: date.to_string(),
        git_commit: commit.to_string(),
        lab_version: String::new(),
        nvcc: String::new(),
        driver: device.driver.clone(),
        command: command.to_string(),
        seed: None,
        policy: None,
        hang_limit_s: None,
    };
    let header = |run: RunInfo| Header { schema: SCHEMA, run, device: device.clone() };
    let make = |run: RunInfo, records: Vec<Record>| Run { path: path.to_path_buf(), header: header(run), records, complete: true };
    let mut entries: Vec<Option<V1Entry>> = file.entries.into_iter().map(Some).collect();
    let mut runs = Vec::new();
    for r in file.runs {
        let mut records: Vec<Record> = entries
            .iter_mut()
            .filter(|x| x.as_ref().is_some_and(|x| x.run == r.id))
            .filter_map(|x| x.take())
            .map(|x| Record::Entry(Box::new(entry(x))))
            .collect();
        records.extend(r.notes.into_iter().map(|text| Record::Note { text }));
        let info = RunInfo {
            seed: Some(r.seed),
            policy: Some(r.policy),
            lab_version: r.lab_version,
            nvcc: r.nvcc,
            ..run_of(format!("v1-gpu{}-run{}", device.ordinal, r.id), RunKind::Bench, &r.date, &r.git_commit, &r.command)
        };
        runs.push(make(RunInfo { driver: r.driver, ..info }, records));
    }
    for t in file.tuning {
        let info = run_of(
            format!("v1-gpu{}-tune-{}-{}", device.ordinal, t.variant, t.shape),
            RunKind::Tune,
            &t.date,
            &t.git_commit,
            "kernel-lab tune",
        );
        runs.push(make(info, vec![Record::Tuning(Box::new(t))]));
    }
    if let Some(t) = file.transfers {
        let info =
            run_of(format!("v1-gpu{}-transfers", device.ordinal), RunKind::Transfers, &t.date, &t.git_commit, "kernel-lab transfers");
        runs.push(make(info, vec![Record::Transfers(Box::new(t))]));
    }
    if let Some(m) = file.multi {
        // Schema 1 kept no date for it: it sorts with the newest run of the file.
        let last = runs.iter().map(|r| r.header.run.date.clone()).max().unwrap_or_default();
        runs.push(make(
            run_of(format!("v1-gpu{}-multi", device.ordinal), RunKind::Multi, &last, "", "kernel-lab multi"),
            vec![Record::Multi(Box::new(m))],
        ));
    }
    runs.sort_by(|a, b| a.header.run.date.cmp(&b.header.run.date));
    Ok(runs)
}
