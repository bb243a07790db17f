//! What `bench` and `verify` print as they finish: one table per family, every check with its
//! seed, and a tuning record as a heat map.

use super::{families_of, ms_text, new_table, note, opt, pct_text, per_watt, rate_text, ratio_text};
use crate::schema::entry::Entry;
use crate::schema::tuning::{CandidateStatus, TuneRecord};

/// The bench output: one table per family, in run order (baseline first at every shape).
pub fn bench_tables(entries: &[Entry], markdown: bool) -> String {
    let mut out = String::new();
    for fam in families_of(entries.iter()) {
        let rows: Vec<&Entry> = entries.iter().filter(|e| e.family == fam).collect();
        let unit = rows[0].unit.label();
        let mut t = new_table(
            ["variant", "config", "shape", "median ms", "± 95%", unit, "vs baseline", "% peak", "W", "per W", "MHz", "error", "status"]
                .map(String::from)
                .to_vec(),
            markdown,
        );
        for e in &rows {
            t.add_row(vec![
                e.label(),
                e.config_label(),
                e.shape.clone(),
                opt(e.time, |s| ms_text(s.median_ms)),
                opt(e.timing, |t| format!("{:.1}%", 100.0 * t.median.half_width())),
                opt(e.rate, rate_text),
                match &e.paired {
                    Some(p) => format!("{} ±{:.1}% ({} pairs)", ratio_text(p.ratio.value), 100.0 * p.ratio.half_width(), p.pairs),
                    None => opt(e.vs_baseline, ratio_text),
                },
                opt(e.vs_peak, pct_text),
                opt(e.telemetry.as_ref(), |t| format!("{:.0}", t.power_w)),
                opt(per_watt(e), |r| format!("{r:.3}")),
                opt(e.telemetry.as_ref(), |t| t.sm_mhz_median.to_string()),
                opt(e.verify.as_ref(), |c| format!("{:.1e}", c.error)),
                note(e),
            ]);
        }
        let timed: Vec<_> = rows.iter().filter_map(|e| e.timing).collect();
        let dropped: usize = timed.iter().map(|t| t.dropped).sum();
        let how = match (timed.first(), rows.iter().any(|e| e.paired.is_some())) {
            (None, _) => String::new(),
            (Some(t), paired) => format!(
                " ({} regime{}; {dropped} samples dropped)",
                t.regime.label(),
                if paired { "; ratios from pairs timed in alternation with the baseline" } else { "" }
            ),
        };
        out.push_str(&format!("{fam}{how}\n{t}\n"));
    }
    out
}

/// The verify output: every check with its seed.
pub fn verify_table(entries: &[Entry]) -> String {
    let headers = ["family", "variant", "shape", "seed", "error", "tolerance", "compared", "beyond", "status"];
    let mut t = new_table(headers.map(String::from).to_vec(), false);
    for e in entries {
        t.add_row(vec![
            e.family.clone(),
            e.label(),
            e.shape.clone(),
            format!("{:#x}", e.seed),
            opt(e.verify.as_ref(), |c| format!("{:.2e}", c.error)),
            opt(e.verify.as_ref(), |c| format!("{:.0e}", c.tolerance)),
            opt(e.verify.as_ref(), |c| c.compared.to_string()),
            opt(e.verify.as_ref(), |c| c.beyond.to_string()),
            note(e),
        ]);
    }
    t.to_string()
}

/// The constants a record's candidates vary, each with its values in ascending order.
fn axes(rec: &TuneRecord) -> Vec<(String, Vec<i64>)> {
    let Some(first) = rec.candidates.first() else { return Vec::new() };
    let names = ["BLOCK_X", "BLOCK_Y", "BLOCK_Z"].into_iter().map(String::from).chain(first.config.defines.iter().map(|(k, _)| k.clone()));
    names
        .filter_map(|name| {
            let mut values: Vec<i64> = rec.candidates.iter().filter_map(|c| c.config.value(&name)).collect();
            values.sort_unstable();
            values.dedup();
            (values.len() > 1).then_some((name, values))
        })
        .collect()
}

/// A tuning record as a heat map when its candidates vary exactly two constants: rows are the
/// first constant's values, columns the second's, cells the rate ("x" where the configuration was
/// rejected, blank where it was not tried: pruned by a constraint or past the budget, "*" on the
/// best). From the record alone: no build or GPU is needed to draw it.
pub fn heatmap(rec: &TuneRecord, markdown: bool) -> Option<String> {
    let [(row, rows), (col, cols)] = axes(rec).try_into().ok()?;
    let unit = crate::measure::families::get(&rec.family)?.info().unit.label();
    let mut header = vec![format!("{row} \\ {col} ({unit})")];
    header.extend(cols.iter().map(|c| c.to_string()));
    let mut t = new_table(header, markdown);
    for r in &rows {
        let mut line = vec![r.to_string()];
        for c in &cols {
            let found = rec.candidates.iter().find(|k| k.config.value(&row) == Some(*r) && k.config.value(&col) == Some(*c));
            let best = rec.best.as_ref().is_some_and(|b| b.value(&row) == Some(*r) && b.value(&col) == Some(*c));
            line.push(match found {
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
