//! Stored results: `report` renders them side by side, `compare` judges two of them entry by
//! entry, `history` follows one variant across runs.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use kernel_lab::analysis::compare::{self, Basis, Row, Verdict};
use kernel_lab::analysis::report::{self, new_table, Format};
use kernel_lab::analysis::store::{self, Group};
use kernel_lab::error::exit;
use kernel_lab::facts::sheet;
use kernel_lab::schema::entry::Entry;
use kernel_lab::schema::stats::Interval;
use kernel_lab::LabError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    Table,
    Markdown,
    Csv,
    Json,
    Html,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// A column per GPU model and architecture (every card of it together, newest first).
    Model,
    /// A column per card (its UUID, else its host and index).
    Card,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    /// Results folders or run files (default: results); each makes its own columns.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    format: FormatArg,
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
    let paths = if args.paths.is_empty() { vec![PathBuf::from("results")] } else { args.paths.clone() };
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
    let format = match args.format {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Csv => Format::Csv,
        FormatArg::Json => Format::Json,
        FormatArg::Html => Format::Html,
    };
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
    print!("{}", report::side_by_side(&columns, format, &prices));
    if !links.is_empty() {
        print!("\nPlots:\n\n{links}");
    }
    Ok(exit::OK)
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// The earlier results: a run file, or a folder (for each entry of NEW, its newest entry of
    /// the same key timed the same way).
    base: PathBuf,
    /// The later results, likewise.
    new: PathBuf,
    /// A change this large (percent) with intervals apart is FASTER or SLOWER; any SLOWER exits 1.
    #[arg(long, default_value_t = 2.0)]
    threshold: f64,
    #[arg(long, value_enum, default_value = "table")]
    format: CompareFormat,
}

/// What a comparison is written as (rows of intervals: no CSV or HTML view of them yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CompareFormat {
    Table,
    Markdown,
    Json,
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
    let mut t =
        new_table(["family", "variant", "shape", "basis", "before", "after", "change", "verdict"].map(String::from).to_vec(), markdown);
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
    t.to_string()
}

pub fn compare(args: &CompareArgs) -> Result<u8> {
    if !(args.threshold.is_finite() && args.threshold >= 0.0) {
        bail!(LabError::Usage(format!("--threshold must be a percentage of 0 or more, not {}", args.threshold)));
    }
    let (old, new) = (entries_of(&args.base, true)?, entries_of(&args.new, false)?);
    let rows = compare::compare(&old, &new, args.threshold / 100.0);
    if rows.is_empty() {
        bail!(LabError::Usage(format!("{} and {} have no entry in common", args.base.display(), args.new.display())));
    }
    match args.format {
        CompareFormat::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        f => println!("{}", compare_table(&rows, f == CompareFormat::Markdown)),
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
    // JSON on stdout stays one document; the summary goes beside it.
    match args.format {
        CompareFormat::Json => eprintln!("{summary}"),
        _ => println!("{summary}"),
    }
    Ok(if count(Verdict::Slower) > 0 { exit::FAILED } else { exit::OK })
}

#[derive(clap::Args)]
pub struct HistoryArgs {
    /// A variant (or a baseline's name, e.g. "cuBLAS SGEMM").
    variant: String,
    /// Only this shape, as tables show it (e.g. 4096x4096x4096).
    #[arg(long)]
    shape: Option<String>,
    #[arg(long, default_value = "results")]
    results_dir: PathBuf,
    #[arg(long)]
    markdown: bool,
}

pub fn history(args: &HistoryArgs) -> Result<u8> {
    let runs = store::read(std::slice::from_ref(&args.results_dir))?;
    let mut t = new_table(
        ["date", "commit", "card", "shape", "kind", "rate", "vs baseline", "regime", "MHz", "status"].map(String::from).to_vec(),
        args.markdown,
    );
    let mut rows: Vec<(&str, &str, String, &Entry)> = runs
        .iter()
        .flat_map(|r| r.entries().map(move |e| (r.header.run.date.as_str(), r.header.run.git_commit.as_str(), r.header.device.card(), e)))
        .filter(|(_, _, _, e)| e.variant == args.variant && args.shape.as_ref().is_none_or(|s| *s == e.shape))
        .collect();
    if rows.is_empty() {
        bail!(LabError::Usage(format!("no run under {} measured '{}'", args.results_dir.display(), args.variant)));
    }
    rows.sort_by(|a, b| (a.3.shape.as_str(), a.0).cmp(&(b.3.shape.as_str(), b.0)));
    for (date, commit, card, e) in rows {
        let ratio = match (&e.paired, e.vs_baseline) {
            (Some(p), _) => format!("{:.3}x [{:.3}, {:.3}]", p.ratio.value, p.ratio.low, p.ratio.high),
            (None, Some(r)) => format!("{r:.3}x"),
            _ => "-".into(),
        };
        t.add_row(vec![
            date.to_string(),
            commit.to_string(),
            card,
            e.shape.clone(),
            format!("{:?}", e.kind).to_lowercase(),
            e.rate.map(|r| format!("{r:.4} {}", e.unit.label())).unwrap_or_else(|| "-".into()),
            ratio,
            e.timing.map(|t| t.regime.label().to_string()).unwrap_or_else(|| "-".into()),
            e.telemetry.as_ref().map(|t| t.sm_mhz_median.to_string()).unwrap_or_else(|| "-".into()),
            format!("{:?}", e.status).to_lowercase(),
        ]);
    }
    println!("{t}");
    Ok(exit::OK)
}
