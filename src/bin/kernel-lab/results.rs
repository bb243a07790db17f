//! Stored results: `report` renders them side by side, `compare` judges two of them entry by
//! entry, `history` follows one variant across runs, `prune` keeps a folder lean, `carry` moves
//! tunings across an edit that left their machine code alone.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use kernel_lab::analysis::baselines;
use kernel_lab::analysis::compare::{self, Basis, Row, Verdict};
use kernel_lab::analysis::report::{self, data};
use kernel_lab::analysis::store::{self, Group};
use kernel_lab::error::exit;
use kernel_lab::facts::sheet;
use kernel_lab::measure::families::shapes;
use kernel_lab::schema::entry::Entry;
use kernel_lab::schema::stats::Interval;
use kernel_lab::LabError;

use crate::args::{cells_csv, formats, say, table, Format};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// A column per GPU model and architecture (every card of it together, newest first).
    Model,
    /// A column per card (its UUID, else its host and index).
    Card,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    /// A results folder (or one run file); repeat it for several, each making its own columns.
    #[arg(long = "results-dir", value_name = "DIR", default_value = "results")]
    paths: Vec<PathBuf>,
    /// How to write it: a terminal table, Markdown, an HTML page, or tidy data (csv, json: one
    /// row per measurement, the columns docs/results-format.md lists).
    #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json", "html"]))]
    format: Format,
    /// A price for performance per dollar, "GPU=USD" with a GPU of the sheet (repeatable);
    /// without one the sheet's launch price is used where it has one.
    #[arg(long = "price")]
    prices: Vec<String>,
    /// One column per GPU model, or one per card.
    #[arg(long, value_enum, default_value = "model")]
    by: By,
    /// With `--format markdown`: write the plots (each family's ladder and curves, each device's
    /// transfers and several-GPU curves) as SVGs into this folder and show them in the report.
    #[arg(long)]
    plots: Option<PathBuf>,
}

impl By {
    pub fn group(self) -> Group {
        match self {
            By::Model => Group::Model,
            By::Card => Group::Card,
        }
    }
}

/// "GPU=USD": a GPU of the sheet and a positive price.
fn parse_price(text: &str) -> Result<(String, f64)> {
    let bad = |m: String| anyhow::anyhow!(LabError::Usage(m));
    let (name, usd) = text.split_once('=').ok_or_else(|| bad(format!("--price '{text}': expected GPU=USD, e.g. \"RTX 4090=1599\"")))?;
    let gpu = sheet::find(name.trim()).map_err(|e| bad(format!("--price: {e}")))?;
    match usd.trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p > 0.0 => Ok((gpu.name.to_string(), p)),
        _ => Err(bad(format!("--price '{text}': '{}' is not a positive number of dollars", usd.trim()))),
    }
}

pub fn report(args: &ReportArgs) -> Result<u8> {
    let prices = args.prices.iter().map(|p| parse_price(p)).collect::<Result<Vec<_>>>()?;
    let paths = args.paths.clone();
    let by = args.by.group();
    let mut columns = Vec::new();
    for p in &paths {
        if !p.exists() {
            bail!(LabError::Results { path: p.display().to_string(), msg: "cannot read: no such file or folder".into() });
        }
        let runs = store::read(std::slice::from_ref(p))?;
        columns.extend(store::views(&runs, by).into_iter().map(|v| (p.display().to_string(), v)));
    }
    if columns.is_empty() {
        bail!(LabError::Results { path: paths[0].display().to_string(), msg: "holds no runs".into() });
    }
    let format = args.format;
    if args.plots.is_some() && format != Format::Markdown {
        bail!(LabError::Usage("--plots goes with --format markdown (the HTML page has its plots inline)".into()));
    }
    // The plots are written first: a folder that cannot take them is an error before any output.
    let mut links = String::new();
    if let Some(dir) = &args.plots {
        std::fs::create_dir_all(dir).map_err(|e| LabError::Results { path: dir.display().to_string(), msg: e.to_string() })?;
        for (name, caption, svg) in report::plots::plot_files(&columns, &report::labels(&columns)) {
            let path = dir.join(&name);
            std::fs::write(&path, svg).map_err(|e| LabError::Results { path: path.display().to_string(), msg: e.to_string() })?;
            links.push_str(&format!("![{caption}]({})\n\n", path.display()));
        }
    }
    out!("{}", report::side_by_side(&columns, format, &prices));
    if !links.is_empty() {
        out!("\nPlots:\n\n{links}");
    }
    Ok(exit::OK)
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// The earlier results: a run file, or a results or model folder (for each entry of the new
    /// side, its newest entry of the same key timed the same way).
    #[arg(long, value_name = "PATH", required_unless_present = "baseline", conflicts_with = "baseline")]
    base: Option<PathBuf>,
    /// The earlier results as a named baseline (`bench --save-baseline NAME`), found under
    /// --results-dir.
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// The later results: a run file or folder (default with --baseline: the newest entry of each
    /// key of the baseline's GPU model under --results-dir).
    #[arg(long, value_name = "PATH", required_unless_present = "baseline")]
    new: Option<PathBuf>,
    /// Where named baselines and the newest results are.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// A change this large (percent) with intervals apart is FASTER or SLOWER; any SLOWER exits 1.
    #[arg(long, value_name = "PERCENT", default_value_t = 2.0)]
    threshold: f64,
    /// How to print the rows (the summary line goes to stderr with csv and json).
    #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json"]))]
    format: Format,
}

/// The entries under `path` (one GPU model's): with `all`, every run's, oldest run first (the
/// base side, where compare takes the newest entry measured the same way as the new one); else
/// the newest of each key.
fn entries_of(path: &Path, all: bool) -> Result<Vec<Entry>> {
    if !path.exists() {
        bail!(LabError::Results { path: path.display().to_string(), msg: "cannot read: no such file or folder".into() });
    }
    let mut runs = store::read(&[path.to_path_buf()])?;
    let views = store::views(&runs, Group::Model);
    match views.as_slice() {
        [] => bail!(LabError::Results { path: path.display().to_string(), msg: "holds no runs".into() }),
        [_] if all => {
            runs.sort_by(|a, b| a.header.run.date.cmp(&b.header.run.date));
            Ok(runs.iter().flat_map(|r| r.entries().cloned()).collect())
        }
        [v] => Ok(v.entries.clone()),
        _ => bail!(LabError::Usage(format!(
            "{} holds runs of several GPU models (or results folders): give one model's folder",
            path.display()
        ))),
    }
}

/// The comparison as a terminal table or Markdown.
pub fn compare_table(rows: &[Row], markdown: bool) -> String {
    comparison(rows, if markdown { Format::Markdown } else { Format::Table }).to_string()
}

fn comparison(rows: &[Row], format: Format) -> comfy_table::Table {
    let mut t = table(&["family", "variant", "shape", "basis", "before", "after", "change", "verdict"], format);
    let show = |i: &Interval, basis: Basis| match basis {
        Basis::Point => format!("{:.4}", i.value),
        _ => format!("{:.4} [{:.4}, {:.4}]", i.value, i.low, i.high),
    };
    for r in rows {
        t.add_row(vec![
            r.family.clone(),
            r.variant.clone(),
            r.shape.clone(),
            r.basis.label().to_string(),
            show(&r.old, r.basis),
            show(&r.new, r.basis),
            format!("{:+.1}%", 100.0 * r.change),
            r.verdict.label().to_string(),
        ]);
    }
    t
}

pub fn compare(args: &CompareArgs) -> Result<u8> {
    if !(args.threshold.is_finite() && args.threshold >= 0.0) {
        bail!(LabError::Usage(format!("--threshold must be a percentage of 0 or more, not {}", args.threshold)));
    }
    let (base, new) = match (&args.baseline, &args.base, &args.new) {
        (Some(name), _, new) => {
            let base = baselines::find(&args.results_dir, name)?;
            let new = match new {
                Some(p) => p.clone(),
                None => {
                    // The baseline's own model folder: <dir>/<model>-<arch>/baselines/NAME.jsonl.
                    let model = base.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
                    eprintln!("comparing baseline '{name}' ({}) with the newest results in {}", base.display(), model.display());
                    model
                }
            };
            (base, new)
        }
        (None, Some(b), Some(n)) => (b.clone(), n.clone()),
        _ => bail!(LabError::Usage("compare: give --base PATH and --new PATH, or --baseline NAME".into())),
    };
    let (old, newer) = (entries_of(&base, true)?, entries_of(&new, false)?);
    let rows = compare::compare(&old, &newer, args.threshold / 100.0);
    if rows.is_empty() {
        bail!(LabError::Usage(format!("{} and {} have no entry in common", base.display(), new.display())));
    }
    match args.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Csv => out!("{}", cells_csv(&comparison(&rows, Format::Csv))),
        f => outln!("{}", comparison(&rows, f)),
    }
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let summary = format!(
        "{} entries: {} faster, {} slower, {} the same, {} unjudged (sustained rates without a pair, launches under 50 µs)",
        rows.len(),
        count(Verdict::Faster),
        count(Verdict::Slower),
        count(Verdict::Same),
        count(Verdict::Unjudged)
    );
    // JSON or CSV on stdout stays one document; the summary goes beside it.
    say(args.format, &summary)?;
    Ok(if count(Verdict::Slower) > 0 { exit::FAILED } else { exit::OK })
}

#[derive(clap::Args)]
pub struct HistoryArgs {
    /// A variant (or a baseline's name, e.g. "cuBLAS SGEMM").
    variant: String,
    /// Only these shapes, in any spelling --size takes (4096 is 4096x4096x4096 for a GEMM, 1G is
    /// 1024 MiB), a list, or START:END:STEP ranges; or as tables show them.
    #[arg(long = "shape", value_delimiter = ',')]
    shapes: Vec<String>,
    /// Where the runs are.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// How to print it (csv and json: one row per measurement, as `report` writes them).
    #[arg(long, default_value = "table", value_parser = formats(&["table", "markdown", "csv", "json"]))]
    format: Format,
}

pub fn history(args: &HistoryArgs) -> Result<u8> {
    let wanted = crate::args::sizes(&args.shapes)?;
    let runs = store::read(std::slice::from_ref(&args.results_dir))?;
    // Results read under the current names (csrc/renames.toml), so a retired name asks for its
    // successor; "@tuned" stays on.
    let (name, tuned) = args.variant.split_once('@').map_or((args.variant.as_str(), None), |(n, t)| (n, Some(t)));
    let wanted_name = match tuned {
        Some(t) => format!("{}@{t}", kernel_lab::facts::renames::variant(name)),
        None => kernel_lab::facts::renames::variant(name).to_string(),
    };
    let mut rows: Vec<(&kernel_lab::schema::run::Run, &Entry)> = runs
        .iter()
        .flat_map(|r| r.entries().map(move |e| (r, e)))
        .filter(|(_, e)| e.variant == wanted_name || e.label() == wanted_name)
        .collect();
    if rows.is_empty() {
        bail!(LabError::Usage(format!("no run under {} measured '{}'", args.results_dir.display(), args.variant)));
    }
    if !wanted.is_empty() {
        let mut shown: Vec<String> = rows.iter().map(|(_, e)| e.shape.clone()).collect();
        shown.sort();
        shown.dedup();
        rows.retain(|(_, e)| wanted.iter().any(|w| shapes::matches(w, &e.dims, &e.shape)));
        if rows.is_empty() {
            bail!(LabError::Usage(format!(
                "'{}' was measured under {}, but not at {} (its shapes: {})",
                args.variant,
                args.results_dir.display(),
                args.shapes.join(", "),
                shown.join(", ")
            )));
        }
    }
    rows.sort_by(|a, b| (a.1.shape.as_str(), a.0.header.run.date.as_str()).cmp(&(b.1.shape.as_str(), b.0.header.run.date.as_str())));
    if args.format.data() {
        let dir = args.results_dir.display().to_string();
        let data: Vec<data::Row> =
            rows.iter().map(|(r, e)| data::row(&dir, Some(&r.header.run), &r.header.device, &r.header.device.card(), e)).collect();
        match args.format {
            Format::Csv => out!("{}", data::to_csv(&data::COLUMNS, &data)),
            _ => out!("{}", data::to_json(&data)),
        }
        return Ok(exit::OK);
    }
    let mut t = table(&["date", "commit", "card", "shape", "kind", "rate", "vs baseline", "regime", "MHz", "status"], args.format);
    for (run, e) in rows {
        let ratio = match (&e.paired, e.vs_baseline) {
            (Some(p), _) => format!("{:.3}x [{:.3}, {:.3}]", p.ratio.value, p.ratio.low, p.ratio.high),
            (None, Some(r)) => format!("{r:.3}x"),
            _ => "-".into(),
        };
        t.add_row(vec![
            run.header.run.date.clone(),
            run.header.run.git_commit.clone(),
            run.header.device.card(),
            e.shape.clone(),
            format!("{:?}", e.kind).to_lowercase(),
            e.rate.map(|r| format!("{r:.4} {}", e.unit.label())).unwrap_or_else(|| "-".into()),
            ratio,
            e.timing.map(|t| t.regime.label().to_string()).unwrap_or_else(|| "-".into()),
            e.telemetry.as_ref().map(|t| t.sm_mhz_median.to_string()).unwrap_or_else(|| "-".into()),
            format!("{:?}", e.status).to_lowercase(),
        ]);
    }
    outln!("{t}");
    Ok(exit::OK)
}

#[derive(clap::Args)]
pub struct PruneArgs {
    /// A results folder: each folder of run files under it is pruned on its own.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// Say what would go, and change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `prune`: finished tune runs folded into their folder's tunings file, and the runs a newer run
/// of their folder supersedes record by record removed; what `report` reads stays as it was.
pub fn prune(args: &PruneArgs) -> Result<u8> {
    use kernel_lab::analysis::prune;
    let plan = prune::plan(&args.results_dir)?;
    if !args.dry_run {
        prune::apply(&plan)?;
    }
    let name = |p: &Path| p.strip_prefix(&args.results_dir).unwrap_or(p).display().to_string();
    for p in &plan.folded {
        outln!("folded into {}: {}", prune::TUNINGS, name(p));
    }
    for p in &plan.superseded {
        outln!("superseded: {}", name(p));
    }
    let verb = if args.dry_run { "would leave" } else { "left" };
    outln!("{} folded, {} superseded; {verb} {} run files", plan.folded.len(), plan.superseded.len(), plan.kept);
    Ok(exit::OK)
}

#[derive(clap::Args)]
pub struct CarryArgs {
    /// A checkout of the repository as it was when the tunings were made (e.g. `git worktree add
    /// /tmp/old COMMIT`): its csrc/ is compared with the kernels this program was built with.
    #[arg(long, value_name = "OLD_TREE")]
    from: PathBuf,
    /// A results folder: every tunings.jsonl under it is carried.
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    /// Say what would be carried, and change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `carry`: stale tunings moved to the current hash where OLD_TREE is the code they were tuned on
/// and nvcc makes the same cubin of it and of the current code; the rest left as they were.
pub fn carry(args: &CarryArgs) -> Result<u8> {
    use kernel_lab::analysis::carry::{self, Outcome};
    let plan = carry::plan(&args.results_dir, &args.from)?;
    if !args.dry_run {
        carry::apply(&plan)?;
    }
    let name = |p: &Path| p.parent().map(|d| d.strip_prefix(&args.results_dir).unwrap_or(d).display().to_string()).unwrap_or_default();
    let (mut current, mut carried, mut stale) = (0, 0, 0);
    for c in &plan.considered {
        let subject = format!("{} {} {}", name(&c.file), c.variant, c.shape);
        match &c.outcome {
            Outcome::Current => {
                current += 1;
                outln!("current: {subject}");
            }
            Outcome::Carried { from, to } => {
                carried += 1;
                outln!("carried: {subject} ({from} -> {to}, the same cubin)");
            }
            Outcome::Stale(why) => {
                stale += 1;
                outln!("stale: {subject} ({why})");
            }
        }
    }
    let verb = if args.dry_run { "would carry" } else { "carried" };
    outln!("{} tunings: {current} current, {verb} {carried}, {stale} left stale", plan.considered.len());
    Ok(exit::OK)
}
