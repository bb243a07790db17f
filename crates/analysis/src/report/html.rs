//! The report as one self-contained HTML page (inline SVG, no network), in the order it is read:
//! the contents; per family a one-sentence verdict per device and its ladder plots, then (folded)
//! its entries side by side; per device its roofline and ceilings; the summary tables, folded; and
//! where every figure came from. Nothing long comes before the plots.

use super::{across, cell, curves, plots, price_for, sections, Prices, View};
use crate::roofline;
use crate::facts::family::{plays, Role};
use crate::schema::entry::Entry;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Ladders per family and device: its default shapes first, then the most measured.
const LADDERS: usize = 3;

/// A table in a box that scrolls sideways on its own, so a narrow screen never scrolls the page.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let head: String = header.iter().map(|h| format!("<th>{}</th>", esc(h))).collect();
    let body: String =
        rows.iter().map(|r| format!("<tr>{}</tr>\n", r.iter().map(|c| format!("<td>{}</td>", esc(c))).collect::<String>())).collect();
    format!("<div class=\"wide\"><table>\n<tr>{head}</tr>\n{body}</table></div>\n")
}

fn summary(files: &[(String, View)], labels: &[String]) -> String {
    let mut out = table(&across::SUMMARY_HEADER.map(String::from), &across::summary_rows(files, labels));
    if let Some((h, r)) = across::bound_rows(files) {
        out += &format!(
            "<details><summary>the sheet's GPUs with no results: the same work's attainable bound, not a measurement</summary>\n{}</details>\n",
            table(&h, &r)
        );
    }
    if let Some((h, r)) = across::tuned_rows(files, labels) {
        out += &format!(
            "<details><summary>tuned constants per GPU ({} variant and shape pairs)</summary>\n{}</details>\n",
            r.len(),
            table(&h, &r)
        );
    }
    out
}

/// One sentence per device on a family: its fastest variant at the plotted shape, against the
/// vendor baseline (paired, with its interval) or the sheet, in which regime.
fn verdict(f: &View, fam: &str, label: &str) -> Option<String> {
    let (e, _) = across::best(f, fam)?;
    let against = match (&e.paired, e.vs_baseline, e.vs_peak) {
        (Some(p), _, _) => format!("{:.3}x the vendor baseline [{:.3}, {:.3}]", p.ratio.value, p.ratio.low, p.ratio.high),
        (None, Some(r), _) => format!("{r:.3}x the vendor baseline"),
        (None, None, Some(r)) => format!("{:.0}% of the spec sheet's rate", 100.0 * r),
        _ => return None,
    };
    let best = e.paired_best.as_ref().map(|p| format!(", {:.3}x cuBLASLt's best", p.ratio.value)).unwrap_or_default();
    let regime = e.timing.map(|t| format!(", timed {}", t.regime.label())).unwrap_or_default();
    Some(format!(
        "On {label}, the fastest at {} is {}: {} {}, {against}{best}{regime}.",
        e.shape,
        e.label(),
        e.rate.map(super::rate_text).unwrap_or_default(),
        e.unit.label()
    ))
}

/// Per family: a ladder per device, then the family's rows side by side, folded.
fn family_sections(files: &[(String, View)], labels: &[String], keys: &[(String, String, String)], fams: &[String]) -> String {
    let mut header = vec!["shape".to_string(), "variant".to_string()];
    header.extend(labels.iter().cloned());
    let ceilings: Vec<_> = files.iter().map(|(_, f)| roofline::ceilings(f)).collect();
    let mut out = String::new();
    for fam in fams {
        out.push_str(&format!("<section id=\"family-{0}\" class=\"family\">\n<h3>{0}</h3>\n", esc(fam)));
        for ((_, f), label) in files.iter().zip(labels) {
            if let Some(v) = verdict(f, fam, label) {
                out.push_str(&format!("<p class=\"verdict\">{}</p>\n", esc(&v)));
            }
        }
        for ((_, f), label) in files.iter().zip(labels) {
            let mine: Vec<&Entry> = f.entries.iter().filter(|e| &e.family == fam).collect();
            for at in plots::ladder_shapes(&mine, LADDERS) {
                let (svg, bars) = plots::ladder_svg(&format!("{fam} at {} on {label}", at.shape), &mine, at);
                out.push_str(&format!("<figure class=\"ladder\" data-bars=\"{bars}\">\n{svg}</figure>\n"));
            }
            let reported = f.device.l2_bytes as f64 / (1u64 << 20) as f64;
            let extra =
                if plays(fam, Role::L2Ceiling) { curves::l2_sweep(&mine, reported, label) } else { curves::alignment(fam, &mine, label) };
            if let Some(c) = extra {
                out.push_str(&format!("<figure class=\"curves\">\n{}</figure>\n", curves::svg(&c)));
            }
        }
        let rows: Vec<Vec<String>> = keys
            .iter()
            .filter(|k| &k.0 == fam)
            .map(|k| {
                let mut row = vec![k.1.clone(), k.2.clone()];
                row.extend(files.iter().zip(&ceilings).map(|((_, f), c)| cell(f, c, k)));
                row
            })
            .collect();
        out.push_str(&format!(
            "<details><summary>every {} entry ({})</summary>\n{}</details>\n</section>\n",
            esc(fam),
            rows.len(),
            table(&header, &rows)
        ));
    }
    out
}

/// Per device: its ceilings, roofline plot and tables, its notes.
fn devices(files: &[(String, View)], labels: &[String], prices: &Prices) -> String {
    let mut out = String::new();
    for ((path, f), label) in files.iter().zip(labels) {
        let c = roofline::ceilings(f);
        let all = roofline::points(f);
        let pts = roofline::headline(&all);
        out.push_str(&format!("<h3 id=\"device-{0}\">{1}</h3>\n<p>{2}</p>\n", esc(&label.replace(' ', "-")), esc(label), esc(path)));
        out.push_str(&format!(
            "<figure class=\"roofline\">\n{}</figure>\n",
            roofline::svg(&format!("{label}: measured roofline"), &c, &all)
        ));
        for extra in [curves::transfers(f, label), curves::multi(f, label)].into_iter().flatten() {
            out.push_str(&format!("<figure class=\"curves\">\n{}</figure>\n", curves::svg(&extra)));
        }
        out.push_str(&format!(
            "<details><summary>each family's fastest kernel and baseline per shape against the measured roofs</summary>\n{}</details>\n",
            table(&roofline::TABLE_HEADER.map(String::from), &roofline::table_rows(&c, &pts, price_for(f, prices)))
        ));
        let (h, r) = roofline::bounds_rows(&pts);
        out.push_str(&format!(
            "<details><summary>the same work on the spec sheet's GPUs: attainable bounds, not measurements</summary>\n{}</details>\n",
            table(&h, &r)
        ));
        let text = sections::free_text(f, label);
        if !text.is_empty() {
            out.push_str(&format!("<details><summary>notes, transfers, several GPUs</summary><pre>{}</pre></details>\n", esc(&text)));
        }
    }
    out
}

/// Every run behind the page.
fn provenance(files: &[(String, View)], labels: &[String]) -> String {
    let header = ["GPU", "run", "kind", "date", "commit", "nvcc", "driver", "command"];
    let rows: Vec<Vec<String>> = files
        .iter()
        .zip(labels)
        .flat_map(|((_, f), l)| {
            f.runs.iter().map(move |r| {
                vec![
                    l.clone(),
                    r.id.clone(),
                    format!("{:?}", r.kind).to_lowercase(),
                    r.date.clone(),
                    r.git_commit.clone(),
                    r.nvcc.clone(),
                    r.driver.clone(),
                    r.command.clone(),
                ]
            })
        })
        .collect();
    format!("<details><summary>{} runs</summary>\n{}</details>\n", rows.len(), table(&header.map(String::from), &rows))
}

/// The whole page.
pub fn page(files: &[(String, View)], labels: &[String], keys: &[(String, String, String)], prices: &Prices) -> String {
    let fams = across::families(files);
    let contents: String = fams.iter().map(|f| format!("<li><a href=\"#family-{0}\">{0}</a></li>", esc(f))).collect();
    let body = format!(
        "<h1>kernel-lab report</h1>\n<nav id=\"contents\"><h2>Contents</h2>\n<ol>\
         <li><a href=\"#families\">Families</a><ol>{contents}</ol></li>\
         <li><a href=\"#devices\">Devices: rooflines and ceilings</a></li>\
         <li><a href=\"#summary\">Summary tables</a></li>\
         <li><a href=\"#provenance\">Provenance</a></li></ol></nav>\n\
         <h2 id=\"families\">Families</h2>\n<p>Per family, its fastest variant on each GPU, then a bar per variant at its \
         default shapes (then the most measured): the ratio to the vendor baseline timed in pairs with it, the whisker its 95% \
         interval.</p>\n{}<h2 id=\"devices\">Devices: rooflines and ceilings</h2>\n{}\
         <h2 id=\"summary\">Summary tables</h2>\n<p>Per family and GPU, the best variant at the family's \
         ladder shape: its ratio to the vendor baseline timed in pairs with it, with the ratio's 95% interval.</p>\n{}\
         <h2 id=\"provenance\">Provenance</h2>\n{}",
        family_sections(files, labels, keys, &fams),
        devices(files, labels, prices),
        summary(files, labels),
        provenance(files, labels)
    );
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>kernel-lab report</title><style>\
         body{{font-family:sans-serif;margin:1em auto;max-width:1200px;padding:0 1em}}\
         .wide{{overflow-x:auto;max-width:100%}}table{{border-collapse:collapse;font-size:12px;margin:1em 0}}\
         td,th{{border:1px solid #ccc;padding:2px 6px;text-align:right}}svg{{max-width:100%;height:auto}}\
         figure{{margin:1em 0;overflow-x:auto;max-width:100%}}\
         @media (max-width:700px){{figure svg{{min-width:640px;max-width:none}}}}\
         pre{{white-space:pre-wrap;font-size:11px}}details{{margin:0.5em 0}}.verdict{{margin:0.3em 0}}\
         @media print{{details{{display:block}}}}</style></head><body>\n{body}</body></html>\n"
    )
}
