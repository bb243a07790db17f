//! Stored results as people read them: the bench and verify tables (`run`), and views of
//! several devices side by side as a terminal table, Markdown, CSV, JSON (`data`) or an HTML page
//! (`html`), with the sections that follow the main table (`sections`: roofline, transfers,
//! several GPUs, the spec sheet).

pub mod across;
pub mod curves;
pub mod data;
pub mod html;
pub mod plots;
pub mod run;
pub mod sections;

use comfy_table::{presets, Table};

use super::store::View;
use crate::schema::entry::{Entry, Status};

/// How a command writes its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Boxed text tables for a terminal.
    Table,
    /// GitHub-flavoured Markdown tables.
    Markdown,
    /// Comma-separated values, a header line and one row per record.
    Csv,
    /// One JSON document.
    Json,
    /// One self-contained HTML page.
    Html,
}

impl Format {
    pub fn markdown(self) -> bool {
        self == Format::Markdown
    }

    /// For a script: the data alone on stdout, what a person reads beside it on stderr.
    pub fn data(self) -> bool {
        matches!(self, Format::Csv | Format::Json)
    }
}

/// Prices per sheet GPU name, US dollars, given by the user; the sheet's launch price otherwise.
pub type Prices = [(String, f64)];

pub fn price_for(f: &View, prices: &Prices) -> Option<f64> {
    let row = crate::facts::sheet::for_device(&f.device.name, f.device.sms)?;
    prices.iter().find(|(n, _)| n.eq_ignore_ascii_case(row.name)).map(|p| p.1).or(row.price_usd.map(f64::from))
}

pub fn rate_text(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

pub fn ms_text(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

pub fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".to_string())
}

pub fn ratio_text(v: f64) -> String {
    format!("{v:.2}x")
}

pub fn pct_text(v: f64) -> String {
    format!("{:.0}%", 100.0 * v)
}

/// The rate per watt of board power while it was timed (TFLOP/s per W is TFLOP per joule).
pub fn per_watt(e: &Entry) -> Option<f64> {
    Some(e.rate? / e.telemetry.as_ref().map(|t| t.power_w).filter(|&w| w > 0.0)?)
}

/// What the status column says, and where the kernel was compiled if not by the build.
pub fn note(e: &Entry) -> String {
    let status = match e.status {
        Status::Ok => match e.telemetry.as_ref().filter(|t| t.throttled()) {
            Some(t) => format!("ok, throttled ({}){}", t.throttle.join(", "), if e.remeasured { " twice" } else { "" }),
            None if e.remeasured => "ok (re-timed: the first timing throttled)".to_string(),
            None => "ok".to_string(),
        },
        Status::Failed => format!("FAILED: {}", e.reason.as_deref().unwrap_or("")),
        Status::Skipped => format!("skipped: {}", e.reason.as_deref().unwrap_or("")),
    };
    match &e.compiled_here {
        Some(how) => format!("{status}; compiled by {how}"),
        None => status,
    }
}

/// A table in the lab's terminal style, or as Markdown.
pub fn new_table(header: Vec<String>, markdown: bool) -> Table {
    let mut t = Table::new();
    t.load_style(if markdown { presets::ASCII_MARKDOWN } else { presets::UTF8_FULL_CONDENSED });
    t.set_header(header);
    t
}

/// Families in first-seen order.
pub fn families_of<'a>(entries: impl Iterator<Item = &'a Entry>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in entries {
        if !out.contains(&e.family) {
            out.push(e.family.clone());
        }
    }
    out
}

/// Column labels, one per file: "NVIDIA H200 sm_90", with the file name where two would clash.
pub fn labels(files: &[(String, View)]) -> Vec<String> {
    let base: Vec<String> = files.iter().map(|(_, f)| f.label.clone()).collect();
    base.iter()
        .zip(files)
        .map(|(b, (_, v))| if base.iter().filter(|x| *x == b).count() > 1 { format!("{b} ({})", v.source.display()) } else { b.clone() })
        .collect()
}

/// Row keys (family, shape, variant): families and shapes in first-seen order across the
/// files, then the baseline, then the rungs in order.
pub fn row_keys(files: &[(String, View)]) -> Vec<(String, String, String)> {
    let all: Vec<&Entry> = files.iter().flat_map(|(_, f)| f.entries.iter()).collect();
    let fams = families_of(all.iter().copied());
    let mut shapes: Vec<&str> = Vec::new();
    for e in &all {
        if !shapes.contains(&e.shape.as_str()) {
            shapes.push(&e.shape);
        }
    }
    let mut rows: Vec<&Entry> = Vec::new();
    for e in all {
        if !rows.iter().any(|r| r.family == e.family && r.shape == e.shape && r.label() == e.label()) {
            rows.push(e);
        }
    }
    rows.sort_by_key(|e| {
        let fam = fams.iter().position(|f| *f == e.family);
        let shape = shapes.iter().position(|s| *s == e.shape);
        (fam, shape, !e.is_baseline(), e.rung)
    });
    rows.into_iter().map(|e| (e.family.clone(), e.shape.clone(), e.label())).collect()
}

pub fn find<'a>(f: &'a View, k: &(String, String, String)) -> Option<&'a Entry> {
    f.entries.iter().find(|e| e.family == k.0 && e.shape == k.1 && e.label() == k.2)
}

/// Rate, ratio to the baseline, % of the ceiling its file measured (`c`), % of the sheet.
pub fn cell(f: &View, c: &crate::roofline::Ceilings, k: &(String, String, String)) -> String {
    match find(f, k) {
        None => "-".to_string(),
        Some(e) if e.status != Status::Ok => note(e),
        Some(e) => format!(
            "{} {} ({} base, {} of measured, {} of sheet){}",
            opt(e.rate, rate_text),
            e.unit.label(),
            opt(e.vs_baseline, ratio_text),
            opt(crate::roofline::of_measured(c, e), pct_text),
            opt(e.vs_peak, pct_text),
            e.compiled_here.as_ref().map(|how| format!(", compiled by {how}")).unwrap_or_default()
        ),
    }
}

/// Stored results side by side, one column per device.
pub fn side_by_side(files: &[(String, View)], format: Format, prices: &Prices) -> String {
    let labels = labels(files);
    let keys = row_keys(files);
    match format {
        Format::Html => html::page(files, &labels, &keys, prices),
        Format::Table | Format::Markdown => {
            let mut header = vec!["family".to_string(), "shape".to_string(), "variant".to_string()];
            header.extend(labels.iter().cloned());
            let mut t = new_table(header, format == Format::Markdown);
            let ceilings: Vec<_> = files.iter().map(|(_, f)| crate::roofline::ceilings(f)).collect();
            for k in &keys {
                let mut row = vec![k.0.clone(), k.1.clone(), k.2.clone()];
                row.extend(files.iter().zip(&ceilings).map(|((_, f), c)| cell(f, c, k)));
                t.add_row(row);
            }
            let runs: Vec<String> = files
                .iter()
                .zip(&labels)
                .map(|((path, f), l)| {
                    let r = f.runs.last();
                    format!(
                        "{l}: {path}, driver {}, {} runs, last {} (commit {})",
                        f.device.driver,
                        f.runs.len(),
                        opt(r, |r| r.date.clone()),
                        opt(r, |r| r.git_commit.clone())
                    )
                })
                .collect();
            let maps: Vec<String> =
                files.iter().flat_map(|(_, f)| f.tuning.iter().filter_map(|r| run::heatmap(r, format == Format::Markdown))).collect();
            let notes: Vec<String> =
                files.iter().zip(&labels).flat_map(|((_, f), l)| f.notes.iter().map(move |n| format!("{l}: {n}"))).collect();
            let transfers: String = files
                .iter()
                .zip(&labels)
                .filter_map(|((_, f), l)| {
                    f.transfers
                        .as_ref()
                        .map(|t| format!("{l}: host transfers\n{}", sections::transfers_table(t, format == Format::Markdown)))
                })
                .chain(files.iter().zip(&labels).filter_map(|((_, f), l)| {
                    f.multi.as_ref().map(|m| format!("{l}: several GPUs\n{}", sections::multi_tables(m, format == Format::Markdown)))
                }))
                .collect();
            format!(
                "{}{t}\n{}\n{}{}{transfers}{}",
                across::section(files, &labels, format == Format::Markdown),
                runs.join("\n"),
                notes.iter().map(|n| format!("{n}\n")).collect::<String>(),
                maps.join("\n"),
                sections::roofline_sections(files, &labels, format == Format::Markdown, prices)
            )
        }
        Format::Csv => data::csv(files, &labels, &keys),
        Format::Json => data::json(files, &labels, &keys),
    }
}
