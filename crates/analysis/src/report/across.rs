//! The report across GPUs and architectures, which the HTML page and the text formats share: per
//! family the best variant on each GPU (its ratio to that GPU's vendor baseline and to that GPU's
//! measured peak), the sheet's GPUs with no results as attainable bounds, labelled so, and the
//! tuned constants per GPU side by side.

use super::{new_table, opt, pct_text, plots, rate_text, View};
use crate::roofline;
use crate::facts::family::{plays, Role};
use crate::facts::sheet::{self, Gpu};
use crate::schema::entry::{Entry, Kind, Status, Unit};

/// The families of all views, in order of first appearance.
pub fn families(files: &[(String, View)]) -> Vec<String> {
    super::families_of(files.iter().flat_map(|(_, f)| &f.entries))
}

/// The best variant of `family` in `f` at its ladder shape, and the run that measured it.
pub fn best<'a>(f: &'a View, family: &str) -> Option<(&'a Entry, Option<usize>)> {
    let mine: Vec<&Entry> = f.entries.iter().filter(|e| e.family == family).collect();
    let at = plots::ladder_shape(&mine)?;
    let (i, e) = f
        .entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.family == family && e.dims == at.dims && e.status == Status::Ok)
        .filter(|(_, e)| matches!(e.kind, Kind::Variant | Kind::Tuned))
        // An @tuned entry in the manifest's own configuration is the variant timed again: where
        // the two differ by noise alone, the plain entry stands for it.
        .filter(|(_, e)| {
            e.kind != Kind::Tuned
                || !f.entries.iter().any(|p| p.kind == Kind::Variant && p.variant == e.variant && p.dims == e.dims && p.config == e.config)
        })
        .max_by(|a, b| {
            a.1.vs_baseline.or(a.1.vs_peak).partial_cmp(&b.1.vs_baseline.or(b.1.vs_peak)).unwrap_or(std::cmp::Ordering::Equal)
        })?;
    Some((e, f.entry_runs.get(i).copied()))
}

/// The sheet's attainable bound for `e`'s work on `g`: a FLOP rate at its intensity, or the
/// sheet's DRAM bandwidth for a memory-bound family (none for the L2 family: no sheet figure).
fn bound(g: &Gpu, e: &Entry) -> Option<f64> {
    match e.unit {
        Unit::Tflops => {
            let bytes = e.work.bytes_read + e.work.bytes_written;
            g.bound(roofline::arithmetic(&e.family), e.work.flops / bytes)
        }
        Unit::Gbs => (!plays(&e.family, Role::L2Ceiling)).then_some(g.bandwidth_gbs),
    }
}

pub const SUMMARY_HEADER: [&str; 12] = [
    "family",
    "GPU",
    "best variant",
    "shape",
    "rate",
    "vs baseline (95%)",
    "% of measured peak",
    "% of sheet",
    "MHz",
    "regime",
    "measured",
    "commit",
];

/// Per family, each GPU's best variant.
pub fn summary_rows(files: &[(String, View)], labels: &[String]) -> Vec<Vec<String>> {
    // Each device's ceilings once, not once per family.
    let ceilings: Vec<_> = files.iter().map(|(_, f)| roofline::ceilings(f)).collect();
    let mut rows = Vec::new();
    for fam in families(files) {
        for (((_, f), label), ceilings) in files.iter().zip(labels).zip(&ceilings) {
            let Some((e, run)) = best(f, &fam) else { continue };
            let run = run.and_then(|i| f.runs.get(i));
            rows.push(vec![
                fam.clone(),
                label.clone(),
                e.label(),
                e.shape.clone(),
                opt(e.rate, |r| format!("{} {}", rate_text(r), e.unit.label())),
                match &e.paired {
                    Some(p) => format!("{:.3}x [{:.3}, {:.3}]", p.ratio.value, p.ratio.low, p.ratio.high),
                    None => opt(e.vs_baseline, |r| format!("{r:.3}x")),
                },
                opt(roofline::of_measured(ceilings, e), pct_text),
                opt(e.vs_peak, pct_text),
                opt(e.telemetry.as_ref(), |t| t.sm_mhz_median.to_string()),
                opt(e.timing, |t| t.regime.label().to_string()),
                opt(run, |r| r.date.clone()),
                opt(run, |r| r.git_commit.clone()),
            ]);
        }
    }
    rows
}

/// The GPUs of the sheet that have no results: per family, the attainable bound of the work of
/// the first GPU's best variant (a bound from the sheet, never a measurement). None when every
/// GPU of the sheet has results.
pub fn bound_rows(files: &[(String, View)]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let measured: Vec<&Gpu> = files.iter().filter_map(|(_, f)| sheet::for_device(&f.device.name, f.device.sms)).collect();
    let unmeasured: Vec<&Gpu> = sheet::GPUS.iter().filter(|g| !measured.iter().any(|m| m.name == g.name)).collect();
    if unmeasured.is_empty() {
        return None;
    }
    let mut header = vec!["family".to_string(), "shape".to_string(), "unit".to_string()];
    header.extend(unmeasured.iter().map(|g| format!("{} bound", g.name)));
    let rows = families(files)
        .into_iter()
        // The peak family's bounds are the sheet's own rates (the sheet table).
        .filter(|fam| !plays(fam, Role::ComputePeak))
        .filter_map(|fam| {
            let e = files.iter().find_map(|(_, f)| best(f, &fam))?.0;
            let mut row = vec![fam, e.shape.clone(), e.unit.label().to_string()];
            row.extend(unmeasured.iter().map(|g| opt(bound(g, e), rate_text)));
            Some(row)
        })
        .collect();
    Some((header, rows))
}

/// The tuned constants per variant and shape, one column per GPU, and whether they differ: where
/// they differ is the finding. None when no GPU has a tuning record.
pub fn tuned_rows(files: &[(String, View)], labels: &[String]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in files.iter().flat_map(|(_, f)| &f.tuning) {
        let k = (r.variant.clone(), r.shape.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    if keys.is_empty() {
        return None;
    }
    let mut header = vec!["variant".to_string(), "shape".to_string()];
    header.extend(labels.iter().cloned());
    header.push("same on every GPU tuned".into());
    let rows = keys
        .iter()
        .map(|(variant, shape)| {
            let recs: Vec<_> = files.iter().map(|(_, f)| f.tuning.iter().find(|r| &r.variant == variant && &r.shape == shape)).collect();
            let found: Vec<_> = recs.iter().flatten().map(|r| &r.best).collect();
            let same = match found.len() {
                0 | 1 => "-".to_string(),
                _ if found.iter().all(|c| *c == found[0]) => "yes".into(),
                _ => "NO".into(),
            };
            let mut row = vec![variant.clone(), shape.clone()];
            row.extend(recs.iter().map(|r| match r {
                None => "not tuned".into(),
                Some(r) => match &r.best {
                    Some(c) => format!("{}{}", c.label(), opt(r.best_rate, |x| format!(" ({})", rate_text(x)))),
                    None => "no configuration verified".into(),
                },
            }));
            row.push(same);
            row
        })
        .collect();
    Some((header, rows))
}

/// The three tables as text (a terminal table or Markdown), for the report's text formats.
pub fn section(files: &[(String, View)], labels: &[String], markdown: bool) -> String {
    let text = |title: &str, header: Vec<String>, rows: Vec<Vec<String>>| {
        let mut t = new_table(header, markdown);
        t.add_rows(rows);
        format!("{title}\n{t}\n")
    };
    let mut out = text(
        "Across GPUs: per family the best variant on each GPU at the family's ladder shape (its default shape measured most)",
        SUMMARY_HEADER.map(String::from).to_vec(),
        summary_rows(files, labels),
    );
    if let Some((header, rows)) = bound_rows(files) {
        out += &text("The sheet's GPUs with no results: the same work's attainable bound, not a measurement", header, rows);
    }
    if let Some((header, rows)) = tuned_rows(files, labels) {
        out += &text("Tuned constants per GPU (rate at them in the family's unit)", header, rows);
    }
    out
}
