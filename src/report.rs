//! Tables of results: the bench table per family, the verify table, and stored results side
//! by side, one column per device, as a terminal table, Markdown, CSV, JSON or an HTML page with
//! each device's roofline.

use comfy_table::{presets, Table};
use serde_json::json;

use crate::store::{CandidateStatus, Entry, ResultsFile, Status, TuneRecord};

/// How `report` writes its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
    Html,
}

/// Prices per sheet GPU name, US dollars, given by the user; the sheet's launch price otherwise.
pub type Prices = [(String, f64)];

fn price_for(f: &ResultsFile, prices: &Prices) -> Option<f64> {
    let row = crate::sheet::for_device(&f.device.name, f.device.sms)?;
    prices.iter().find(|(n, _)| n.eq_ignore_ascii_case(row.name)).map(|p| p.1).or(row.price_usd.map(f64::from))
}

fn rate_text(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn ms_text(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".to_string())
}

fn ratio_text(v: f64) -> String {
    format!("{v:.2}x")
}

fn pct_text(v: f64) -> String {
    format!("{:.0}%", 100.0 * v)
}

/// The rate per watt of board power while it was timed (TFLOP/s per W is TFLOP per joule).
pub fn per_watt(e: &Entry) -> Option<f64> {
    Some(e.rate? / e.telemetry.as_ref().map(|t| t.power_w).filter(|&w| w > 0.0)?)
}

/// What the status column says, and where the kernel was compiled if not by the build.
fn note(e: &Entry) -> String {
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
fn families_of<'a>(entries: impl Iterator<Item = &'a Entry>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in entries {
        if !out.contains(&e.family) {
            out.push(e.family.clone());
        }
    }
    out
}

/// The bench output: one table per family, in run order (baseline first at every shape).
pub fn bench_tables(entries: &[Entry], markdown: bool) -> String {
    let mut out = String::new();
    for fam in families_of(entries.iter()) {
        let rows: Vec<&Entry> = entries.iter().filter(|e| e.family == fam).collect();
        let unit = rows[0].unit.label();
        let mut t = new_table(
            ["variant", "config", "shape", "median ms", "spread", unit, "vs baseline", "% peak", "W", "per W", "MHz", "error", "status"]
                .map(String::from)
                .to_vec(),
            markdown,
        );
        for e in rows {
            t.add_row(vec![
                e.variant.clone(),
                e.config.clone(),
                e.shape.clone(),
                opt(e.time, |s| ms_text(s.median_ms)),
                opt(e.time, |s| format!("{:.1}%", s.spread_pct())),
                opt(e.rate, rate_text),
                opt(e.vs_baseline, ratio_text),
                opt(e.vs_peak, pct_text),
                opt(e.telemetry.as_ref(), |t| format!("{:.0}", t.power_w)),
                opt(per_watt(e), |r| format!("{r:.3}")),
                opt(e.telemetry.as_ref(), |t| t.sm_mhz_median.to_string()),
                opt(e.verify.as_ref(), |c| format!("{:.1e}", c.error)),
                note(e),
            ]);
        }
        out.push_str(&format!("{fam}\n{t}\n"));
    }
    out
}

/// The verify output: every check with its seed.
pub fn verify_table(entries: &[Entry]) -> String {
    let mut t = new_table(["family", "variant", "shape", "seed", "error", "tolerance", "status"].map(String::from).to_vec(), false);
    for e in entries {
        t.add_row(vec![
            e.family.clone(),
            e.variant.clone(),
            e.shape.clone(),
            format!("{:#x}", e.seed),
            opt(e.verify.as_ref(), |c| format!("{:.2e}", c.error)),
            opt(e.verify.as_ref(), |c| format!("{:.0e}", c.tolerance)),
            note(e),
        ]);
    }
    t.to_string()
}

/// Column labels, one per file: "NVIDIA H200 sm_90", with the file name where two would clash.
fn labels(files: &[(String, ResultsFile)]) -> Vec<String> {
    let base: Vec<String> = files.iter().map(|(_, f)| format!("{} {}", f.device.name, f.device.arch_name())).collect();
    base.iter()
        .zip(files)
        .map(|(b, (path, _))| if base.iter().filter(|x| *x == b).count() > 1 { format!("{b} ({path})") } else { b.clone() })
        .collect()
}

/// Row keys (family, shape, variant): families and shapes in first-seen order across the
/// files, then the baseline, then the rungs in order.
fn row_keys(files: &[(String, ResultsFile)]) -> Vec<(String, String, String)> {
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
        if !rows.iter().any(|r| r.family == e.family && r.shape == e.shape && r.variant == e.variant) {
            rows.push(e);
        }
    }
    rows.sort_by_key(|e| {
        let fam = fams.iter().position(|f| *f == e.family);
        let shape = shapes.iter().position(|s| *s == e.shape);
        (fam, shape, !e.baseline, e.rung)
    });
    rows.into_iter().map(|e| (e.family.clone(), e.shape.clone(), e.variant.clone())).collect()
}

fn find<'a>(f: &'a ResultsFile, k: &(String, String, String)) -> Option<&'a Entry> {
    f.entries.iter().find(|e| e.family == k.0 && e.shape == k.1 && e.variant == k.2)
}

/// Rate, ratio to the baseline, % of the ceiling its file measured (`c`), % of the sheet.
fn cell(f: &ResultsFile, c: &crate::roofline::Ceilings, k: &(String, String, String)) -> String {
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

/// Each device's measured ceilings, its roofline table (per family and shape, the baseline and
/// the fastest variant) and the same work's bounds on the sheet's GPUs.
fn roofline_sections(files: &[(String, ResultsFile)], labels: &[String], markdown: bool, prices: &Prices) -> String {
    use crate::roofline;
    let mut out = String::new();
    for ((_, f), label) in files.iter().zip(labels) {
        let c = roofline::ceilings(f);
        let pts = roofline::headline(&roofline::points(f));
        let roofs: Vec<String> = c
            .compute
            .iter()
            .map(|(p, r)| format!("{} {r:.1} TFLOP/s", p.label()))
            .chain(c.dram_gbs.map(|b| format!("DRAM {b:.0} GB/s")))
            .chain(c.l2_gbs.map(|b| format!("L2 {b:.0} GB/s")))
            .collect();
        out.push_str(&format!("{label}: measured ceilings: {}\n", if roofs.is_empty() { "none yet".into() } else { roofs.join(", ") }));
        if pts.is_empty() {
            continue;
        }
        let mut t = new_table(roofline::TABLE_HEADER.map(String::from).to_vec(), markdown);
        for row in roofline::table_rows(&c, &pts, price_for(f, prices)) {
            t.add_row(row);
        }
        out.push_str(&format!("{label}: roofline\n{t}\n"));
        let (header, rows) = roofline::bounds_rows(&pts);
        let mut b = new_table(header, markdown);
        for row in rows {
            b.add_row(row);
        }
        out.push_str(&format!("{label}: the same work on the sheet's GPUs: attainable bounds (TFLOP/s), not measurements\n{b}\n"));
    }
    out
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn html_table(header: &[String], rows: &[Vec<String>]) -> String {
    let head: String = header.iter().map(|h| format!("<th>{}</th>", esc(h))).collect();
    let body: String =
        rows.iter().map(|r| format!("<tr>{}</tr>\n", r.iter().map(|c| format!("<td>{}</td>", esc(c))).collect::<String>())).collect();
    format!("<table>\n<tr>{head}</tr>\n{body}</table>\n")
}

/// One page: the side-by-side table, then per device its ceilings, roofline plot and tables.
fn html_page(files: &[(String, ResultsFile)], labels: &[String], keys: &[(String, String, String)], prices: &Prices) -> String {
    use crate::roofline;
    let mut header = vec!["family".to_string(), "shape".to_string(), "variant".to_string()];
    header.extend(labels.iter().cloned());
    let ceilings: Vec<_> = files.iter().map(|(_, f)| roofline::ceilings(f)).collect();
    let rows: Vec<Vec<String>> = keys
        .iter()
        .map(|k| {
            let mut row = vec![k.0.clone(), k.1.clone(), k.2.clone()];
            row.extend(files.iter().zip(&ceilings).map(|((_, f), c)| cell(f, c, k)));
            row
        })
        .collect();
    let mut body = format!("<h1>kernel-lab report</h1>\n<h2>Side by side</h2>\n{}", html_table(&header, &rows));
    for (((path, f), label), c) in files.iter().zip(labels).zip(&ceilings) {
        let all = roofline::points(f);
        let pts = roofline::headline(&all);
        body.push_str(&format!("<h2>{}</h2>\n<p>{}</p>\n", esc(label), esc(path)));
        body.push_str(&roofline::svg(&format!("{label}: measured roofline"), c, &all));
        body.push_str(&html_table(&roofline::TABLE_HEADER.map(String::from), &roofline::table_rows(c, &pts, price_for(f, prices))));
        let (h, r) = roofline::bounds_rows(&pts);
        body.push_str("<p>The same work on the spec sheet's GPUs: attainable bounds, not measurements.</p>\n");
        body.push_str(&html_table(&h, &r));
        let text = roofline_free_text(f, label);
        if !text.is_empty() {
            body.push_str(&format!("<pre>{}</pre>\n", esc(&text)));
        }
    }
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kernel-lab report</title><style>\
         body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse;font-size:12px;margin:1em 0}}\
         td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}</style></head><body>\n{body}</body></html>\n"
    )
}

/// A file's run notes, tuning heat maps and host transfers, as text.
fn roofline_free_text(f: &ResultsFile, label: &str) -> String {
    let mut out: String = f.runs.iter().flat_map(|r| r.notes.iter().map(move |n| format!("{label}: {n}\n"))).collect();
    for m in f.tuning.iter().filter_map(|r| heatmap(r, false)) {
        out.push_str(&m);
        out.push('\n');
    }
    if let Some(t) = &f.transfers {
        out.push_str(&transfers_table(t, false));
    }
    out
}

/// Stored results side by side, one column per device.
pub fn side_by_side(files: &[(String, ResultsFile)], format: Format, prices: &Prices) -> String {
    let labels = labels(files);
    let keys = row_keys(files);
    match format {
        Format::Html => html_page(files, &labels, &keys, prices),
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
                files.iter().flat_map(|(_, f)| f.tuning.iter().filter_map(|r| heatmap(r, format == Format::Markdown))).collect();
            let notes: Vec<String> = files
                .iter()
                .zip(&labels)
                .flat_map(|((_, f), l)| f.runs.iter().flat_map(move |r| r.notes.iter().map(move |n| format!("{l}: {n}"))))
                .collect();
            let transfers: String = files
                .iter()
                .zip(&labels)
                .filter_map(|((_, f), l)| {
                    f.transfers.as_ref().map(|t| format!("{l}: host transfers\n{}", transfers_table(t, format == Format::Markdown)))
                })
                .chain(files.iter().zip(&labels).filter_map(|((_, f), l)| {
                    f.multi.as_ref().map(|m| format!("{l}: several GPUs\n{}", multi_tables(m, format == Format::Markdown)))
                }))
                .collect();
            format!(
                "{t}\n{}\n{}{}{transfers}{}",
                runs.join("\n"),
                notes.iter().map(|n| format!("{n}\n")).collect::<String>(),
                maps.join("\n"),
                roofline_sections(files, &labels, format == Format::Markdown, prices)
            )
        }
        Format::Csv => {
            let mut out = String::from("family,shape,variant");
            for l in &labels {
                for col in ["status", "median_ms", "rate", "unit", "vs_baseline", "vs_peak", "error"] {
                    out.push_str(&format!(",{} {col}", csv_field(l)));
                }
            }
            out.push('\n');
            for k in &keys {
                out.push_str(&format!("{},{},{}", csv_field(&k.0), csv_field(&k.1), csv_field(&k.2)));
                for (_, f) in files {
                    let e = find(f, k);
                    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
                    out.push_str(&format!(
                        ",{},{},{},{},{},{},{}",
                        e.map(|e| format!("{:?}", e.status).to_lowercase()).unwrap_or_default(),
                        num(e.and_then(|e| e.time.map(|t| t.median_ms))),
                        num(e.and_then(|e| e.rate)),
                        e.map(|e| e.unit.label()).unwrap_or_default(),
                        num(e.and_then(|e| e.vs_baseline)),
                        num(e.and_then(|e| e.vs_peak)),
                        num(e.and_then(|e| e.verify.as_ref().map(|c| c.error))),
                    ));
                }
                out.push('\n');
            }
            out
        }
        Format::Json => {
            let rows: Vec<serde_json::Value> = keys
                .iter()
                .map(|k| {
                    let per: serde_json::Map<String, serde_json::Value> = labels
                        .iter()
                        .zip(files)
                        .map(|(l, (_, f))| (l.clone(), serde_json::to_value(find(f, k)).unwrap_or_default()))
                        .collect();
                    json!({ "family": k.0, "shape": k.1, "variant": k.2, "devices": per })
                })
                .collect();
            serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"
        }
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A tuning record as a heat map when its variant tunes exactly two constants: rows are the
/// first constant's values, columns the second's, cells the rate ("x" where the configuration was
/// rejected, blank where the budget ended first, "*" on the best).
pub fn heatmap(rec: &TuneRecord, markdown: bool) -> Option<String> {
    let spec = crate::registry::by_name(&rec.variant)?;
    let [(row, rows), (col, cols)] = spec.tune else { return None };
    let unit = crate::families::get(spec.family)?.unit().label();
    let mut header = vec![format!("{row} \\ {col} ({unit})")];
    header.extend(cols.iter().map(|c| c.to_string()));
    let mut t = new_table(header, markdown);
    for r in rows.iter() {
        let mut line = vec![r.to_string()];
        for c in cols.iter() {
            let found = rec.candidates.iter().find(|k| k.config.value(row) == Some(*r) && k.config.value(col) == Some(*c));
            let best = rec.best.as_ref().is_some_and(|b| b.value(row) == Some(*r) && b.value(col) == Some(*c));
            let pruned = || crate::tune::prefilter(spec, &spec.config().with(row, *r).with(col, *c), None).is_err();
            line.push(match found {
                None if pruned() => "x".to_string(),
                None => String::new(),
                Some(k) => match (k.status, k.rate) {
                    (CandidateStatus::Ok, Some(rate)) => format!("{}{}", rate_text(rate), if best { " *" } else { "" }),
                    (CandidateStatus::Rejected, _) => "x".to_string(),
                    (CandidateStatus::Crashed, _) => "crash".to_string(),
                    _ => "FAIL".to_string(),
                },
            });
        }
        t.add_row(line);
    }
    Some(format!("{} at {} (tuned {})\n{t}\n", rec.variant, rec.shape, rec.date))
}

/// Host transfers: GB/s per size, direction and host memory, pinned over pageable, the PCIe link
/// and the overlap of a transfer with a kernel.
pub fn transfers_table(t: &crate::transfers::Transfers, markdown: bool) -> String {
    let mut table = new_table(
        ["bytes", "H2D pageable", "H2D pinned", "pinned/pageable", "D2H pageable", "D2H pinned", "pinned/pageable"]
            .map(String::from)
            .to_vec(),
        markdown,
    );
    let mut sizes: Vec<u64> = t.transfers.iter().map(|x| x.bytes).collect();
    sizes.dedup();
    let gbs =
        |dir: &str, host: &str, b: u64| t.transfers.iter().find(|x| x.direction == dir && x.host == host && x.bytes == b).map(|x| x.gbs);
    for b in sizes {
        let mut row = vec![crate::families::memory::bytes_label(b)];
        for dir in ["H2D", "D2H"] {
            let (pg, pn) = (gbs(dir, "pageable", b), gbs(dir, "pinned", b));
            row.push(opt(pg, |v| format!("{v:.2} GB/s")));
            row.push(opt(pn, |v| format!("{v:.2} GB/s")));
            row.push(opt(pg.zip(pn), |(a, b)| format!("{:.1}x", b / a)));
        }
        table.add_row(row);
    }
    let link = match &t.pcie {
        Some(p) => format!(
            "PCIe gen {} x{} (max gen {} x{}), {} per direction",
            p.gen_current,
            p.width_current,
            p.gen_max,
            p.width_max,
            opt(p.theoretical_gbs(), |g| format!("{g:.1} GB/s"))
        ),
        None => "PCIe link: NVML not available".to_string(),
    };
    let overlap = t.overlap.as_ref().map_or(String::new(), |o| {
        format!(
            "\noverlap: a {} pinned H2D ({:.3} ms) and {} x {} ({:.3} ms) on two streams took {:.3} ms: {:.0}% of the shorter hidden",
            crate::families::memory::bytes_label(o.transfer_bytes),
            o.transfer_ms,
            o.kernel_launches,
            o.kernel,
            o.kernel_ms,
            o.both_ms,
            100.0 * o.hidden
        )
    });
    format!("{table}\n{link}{overlap}\n")
}

/// The spec sheet as one table: dense rates per precision (TFLOP/s, TOPS for int8; sparse figures
/// are not shown), memory, links and price. `-`: the GPU has no such path or no published figure.
pub fn sheet_table(gpus: &[&crate::sheet::Gpu], markdown: bool) -> String {
    use crate::sheet::Precision;
    let mut header: Vec<String> = vec!["GPU".into(), "arch".into(), "SMs".into(), "boost MHz".into()];
    header.extend(Precision::ALL.iter().map(|p| p.label().to_string()));
    header.extend(["memory", "GB/s", "L2 MB", "TDP W", "NVLink GB/s", "PCIe", "launch $"].map(String::from));
    let mut t = new_table(header, markdown);
    for g in gpus {
        let mut row = vec![g.name.to_string(), format!("sm_{}", g.sm), g.sms.to_string(), g.boost_mhz.to_string()];
        row.extend(Precision::ALL.iter().map(|&p| opt(g.rate(p), |r| format!("{r}"))));
        row.extend([
            format!("{} GB {}", g.memory_gb, g.memory),
            format!("{}", g.bandwidth_gbs),
            format!("{}", g.l2_mb),
            g.tdp_w.to_string(),
            g.nvlink_gbs.map(|n| n.to_string()).unwrap_or_else(|| "none".into()),
            format!("gen {}", g.pcie_gen),
            opt(g.price_usd, |p| p.to_string()),
        ]);
        t.add_row(row);
    }
    t.to_string()
}

/// The multi family: the link matrix, peer bandwidth and latency matrices (peer access off and
/// on), kernel reads of peer memory, NCCL collectives and data-parallel scaling.
pub fn multi_tables(m: &crate::multi::MultiResults, markdown: bool) -> String {
    use crate::multi::Collective;
    let n = m.gpus.len();
    let head = |first: &str| {
        let mut h = vec![first.to_string()];
        h.extend((0..n).map(|j| format!("GPU {j}")));
        h
    };
    let mut out = String::new();
    let mut links = new_table(head("link (peer access)"), markdown);
    for i in 0..n {
        let mut row = vec![format!("GPU {i}")];
        row.extend((0..n).map(|j| format!("{}{}", m.links[i][j].label(), if i != j && m.can_access_peer[i][j] { " (p2p)" } else { "" })));
        links.add_row(row);
    }
    out.push_str(&format!("{}\n{links}\n", m.gpus.join(", ")));
    for peer in [false, true] {
        for bidir in [false, true] {
            // Both-ways runs are stored once per pair, lower GPU first.
            let pick = |i: usize, j: usize| {
                let (a, b) = if bidir { (i.min(j), i.max(j)) } else { (i, j) };
                m.copies
                    .iter()
                    .filter(|c| c.peer_access == peer && c.bidirectional == bidir && c.src == a && c.dst == b)
                    .max_by_key(|c| c.bytes)
            };
            let any = m.copies.iter().any(|c| c.peer_access == peer && c.bidirectional == bidir);
            if !any {
                continue;
            }
            let what = format!(
                "GB/s, {}, peer access {}, largest size",
                if bidir { "both directions at once (row <-> column)" } else { "row -> column" },
                if peer { "on" } else { "off" }
            );
            let mut t = new_table(head(&what), markdown);
            for i in 0..n {
                let mut row = vec![format!("GPU {i}")];
                row.extend((0..n).map(|j| pick(i, j).map(|c| format!("{:.1}", c.gbs)).unwrap_or_else(|| "-".into())));
                t.add_row(row);
            }
            out.push_str(&format!("{t}\n"));
        }
        let mut t = new_table(head(&format!("latency us, 4 B, peer access {}", if peer { "on" } else { "off" })), markdown);
        let mut any = false;
        for i in 0..n {
            let mut row = vec![format!("GPU {i}")];
            row.extend((0..n).map(|j| {
                m.latency_us
                    .iter()
                    .find(|l| (l.0, l.1, l.2) == (i, j, peer))
                    .map(|l| {
                        any = true;
                        format!("{:.1}", l.3)
                    })
                    .unwrap_or_else(|| "-".into())
            }));
            t.add_row(row);
        }
        if any {
            out.push_str(&format!("{t}\n"));
        }
    }
    let mut sizes = new_table(
        ["bytes", "peer off, one way", "peer on, one way", "peer off, both ways", "peer on, both ways"].map(String::from).to_vec(),
        markdown,
    );
    let mut byte_list: Vec<u64> = m.copies.iter().filter(|c| !c.bidirectional).map(|c| c.bytes).collect();
    byte_list.sort_unstable();
    byte_list.dedup();
    for b in byte_list {
        let cell = |peer: bool, bidir: bool| {
            m.copies
                .iter()
                .find(|c| {
                    c.src == 0
                        && c.dst == 1
                        && c.peer_access == peer
                        && c.bidirectional == bidir
                        && c.bytes == if bidir { 2 * b } else { b }
                })
                .map(|c| format!("{:.1}", c.gbs))
                .unwrap_or_else(|| "-".into())
        };
        sizes.add_row(vec![bytes_text(b), cell(false, false), cell(true, false), cell(false, true), cell(true, true)]);
    }
    out.push_str(&format!("GPU 0 -> GPU 1 by size (GB/s; both-ways rows count both directions' bytes)\n{sizes}\n"));
    if let Some(nv) = m.nvlink_sheet_gbs {
        let best =
            |bidir: bool| m.copies.iter().filter(|c| c.peer_access && c.bidirectional == bidir).map(|c| c.gbs).fold(f64::NAN, f64::max);
        out.push_str(&format!(
            "against the sheet's NVLink ({nv} GB/s both directions, {} each way): one way {:.0}%, both ways {:.0}%\n",
            nv / 2,
            100.0 * best(false) / (nv as f64 / 2.0),
            100.0 * best(true) / nv as f64
        ));
    }
    if !m.kernel_reads.is_empty() {
        let mut t =
            new_table(["from", "to", "bytes", "kernel reads peer memory GB/s", "copy engine GB/s"].map(String::from).to_vec(), markdown);
        for k in &m.kernel_reads {
            t.add_row(vec![
                format!("GPU {}", k.src),
                format!("GPU {}", k.dst),
                bytes_text(k.bytes),
                format!("{:.1}", k.kernel_gbs),
                format!("{:.1}", k.copy_engine_gbs),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }
    if !m.collectives.is_empty() {
        let mut t =
            new_table(["collective", "type", "bytes", "median ms", "algbw GB/s", "busbw GB/s"].map(String::from).to_vec(), markdown);
        for c in Collective::ALL {
            for r in m.collectives.iter().filter(|r| r.collective == c) {
                t.add_row(vec![
                    c.label().to_string(),
                    r.dtype.clone(),
                    bytes_text(r.bytes),
                    ms_text(r.time.median_ms),
                    format!("{:.1}", r.algbw_gbs),
                    format!("{:.1}", r.busbw_gbs),
                ]);
            }
        }
        out.push_str(&format!("NCCL {} ({} ranks, one process)\n{t}\n", m.nccl_version, n));
    }
    if !m.scaling.is_empty() {
        let mut t =
            new_table(["GEMM", "GPUs", "global shape", "gradient", "step ms", "spread", "efficiency"].map(String::from).to_vec(), markdown);
        for s in &m.scaling {
            t.add_row(vec![
                s.gemm.clone(),
                s.gpus.to_string(),
                s.shape.clone(),
                bytes_text(s.gradient_bytes),
                ms_text(s.step.median_ms),
                format!("{:.1}%", s.step.spread_pct()),
                opt(s.efficiency, |e| format!("{:.0}%", 100.0 * e)),
            ]);
        }
        out.push_str(&format!("data-parallel step: the GEMM split along the batch, then an all-reduce of the gradient\n{t}\n"));
    }
    out
}

fn bytes_text(b: u64) -> String {
    match b {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}
