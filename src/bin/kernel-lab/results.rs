//! Stored results: `report` renders them side by side; `migrate` rewrites schema-1 files.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use kernel_lab::analysis::report::{self, Format};
use kernel_lab::analysis::store::{self, Group};
use kernel_lab::error::exit;
use kernel_lab::facts::sheet;
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
enum By {
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
    let by = match args.by {
        By::Model => Group::Model,
        By::Card => Group::Card,
    };
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
    print!("{}", report::side_by_side(&columns, format, &prices));
    Ok(exit::OK)
}

pub fn migrate(files: &[PathBuf], dir: &Path) -> Result<u8> {
    for f in files {
        let runs = kernel_lab::analysis::migrate::read_v1(f)?;
        for run in &runs {
            let path = store::write_run(dir, run).with_context(|| format!("migrating {}", f.display()))?;
            println!("{} -> {}", f.display(), path.display());
        }
    }
    Ok(exit::OK)
}
