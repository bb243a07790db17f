//! What every command spells the same way: `--format`, `--gpus`, `--size` lists and ranges.
//!
//! Which GPUs is always `--gpus`, a list of indices as the driver numbers them (0,1), never a
//! count (a count is `--gpu-count`, as advise's data-parallel width): one flag to learn, whose
//! value means one thing. A command that drives one GPU (bench, verify, tune, transfers, profile)
//! takes a list of one, so running it on several later needs no new flag.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use kernel_lab::analysis::report;
use kernel_lab::measure::families::shapes;
use kernel_lab::LabError;

/// How a command writes its data: the report layer's one `Format`. Each command offers the ones
/// that make sense for it (a terminal table and Markdown for all, CSV and JSON where its data has
/// rows, HTML for `report`).
pub use report::Format;

/// The `--format` parser offering `allowed` (names of `Format`s).
pub fn formats(allowed: &'static [&'static str]) -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(allowed).map(|s: String| match s.as_str() {
        "markdown" => Format::Markdown,
        "csv" => Format::Csv,
        "json" => Format::Json,
        "html" => Format::Html,
        _ => Format::Table,
    })
}

/// One GPU index for a command that drives one GPU, given as `--gpus`: several are refused with
/// what to use instead.
pub fn one_gpu(text: &str) -> Result<usize, String> {
    if text.contains(',') {
        return Err(format!(
            "'{text}': this command runs on one GPU, give one index (several GPUs: `multi --gpus`, or a fleet task per GPU)"
        ));
    }
    text.trim().parse().map_err(|_| format!("'{text}' is not a GPU index (0, 1, ... as `kernel-lab devices` numbers them)"))
}

/// `--size` values with their START:END:STEP ranges expanded (`shapes::expand`).
pub fn sizes(texts: &[String]) -> anyhow::Result<Vec<String>> {
    shapes::expand(texts).map_err(|m| LabError::Usage(m).into())
}

/// A line a person reads beside the data: on stdout with a table, on stderr when stdout carries
/// CSV or JSON for a script, so that stays one document.
pub fn say(format: Format, text: &str) -> anyhow::Result<()> {
    if format.data() {
        eprintln!("{text}");
        Ok(())
    } else {
        crate::out::write(format_args!("{text}\n"))
    }
}

/// A table of the command's `format`: for a terminal, fitted to its width (long cells wrap
/// where stdout is a terminal; a pipe gets whole lines); Markdown otherwise. CSV is written from
/// the same cells (`cells_csv`).
pub fn table(header: &[&str], format: Format) -> comfy_table::Table {
    let mut t = report::new_table(header.iter().map(|h| h.to_string()).collect(), format.markdown());
    if format == Format::Table {
        t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    }
    t
}

/// A table's cells as CSV: its header, then a line per row.
pub fn cells_csv(t: &comfy_table::Table) -> String {
    let cells = |row: &comfy_table::Row| row.cell_iter().map(|c| c.content()).collect::<Vec<String>>();
    let header = t.header().map(cells).unwrap_or_default();
    let rows: Vec<Vec<String>> = t.row_iter().map(cells).collect();
    report::data::cells_csv(&header, &rows)
}
