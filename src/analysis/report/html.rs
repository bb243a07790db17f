//! The report as one self-contained HTML page: the side-by-side table, then per device its
//! ceilings, roofline plot and tables.

use super::{cell, price_for, sections, Prices, View};
use crate::analysis::roofline;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let head: String = header.iter().map(|h| format!("<th>{}</th>", esc(h))).collect();
    let body: String =
        rows.iter().map(|r| format!("<tr>{}</tr>\n", r.iter().map(|c| format!("<td>{}</td>", esc(c))).collect::<String>())).collect();
    format!("<table>\n<tr>{head}</tr>\n{body}</table>\n")
}

/// One page: the side-by-side table, then per device its ceilings, roofline plot and tables.
pub fn page(files: &[(String, View)], labels: &[String], keys: &[(String, String, String)], prices: &Prices) -> String {
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
    let mut body = format!("<h1>kernel-lab report</h1>\n<h2>Side by side</h2>\n{}", table(&header, &rows));
    for (((path, f), label), c) in files.iter().zip(labels).zip(&ceilings) {
        let all = roofline::points(f);
        let pts = roofline::headline(&all);
        body.push_str(&format!("<h2>{}</h2>\n<p>{}</p>\n", esc(label), esc(path)));
        body.push_str(&roofline::svg(&format!("{label}: measured roofline"), c, &all));
        body.push_str(&table(&roofline::TABLE_HEADER.map(String::from), &roofline::table_rows(c, &pts, price_for(f, prices))));
        let (h, r) = roofline::bounds_rows(&pts);
        body.push_str("<p>The same work on the spec sheet's GPUs: attainable bounds, not measurements.</p>\n");
        body.push_str(&table(&h, &r));
        let text = sections::free_text(f, label);
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
