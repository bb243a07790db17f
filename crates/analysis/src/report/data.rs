//! Results as tidy data: one row per measurement (an entry of a run), one column per variable,
//! the same columns in CSV and JSON, so one call loads them (`pandas.read_csv` or
//! `pandas.read_json`; docs/results-format.md shows it). A view's rows are its newest entry of
//! each key, each with the run and card that measured it; the side-by-side table's grouping by
//! device is left to the reader (a pivot on `gpu` or `card`).

use serde::Serialize;

use super::find;
use crate::store::View;
use crate::schema::device::DeviceInfo;
use crate::schema::entry::Entry;
use crate::schema::run::RunInfo;

/// One measurement. Empty (CSV) or null (JSON) where the entry has no such figure: a skipped or
/// failed variant has no rate, a baseline no ratio, a run without telemetry no clock or power.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    /// The results folder or file it was read from, as given.
    pub results: String,
    /// The run that measured it: its id, date and commit.
    pub run: String,
    pub date: String,
    pub commit: String,
    /// The GPU model and architecture, and the card (host, index, UUID's first digits).
    pub gpu: String,
    pub arch: String,
    pub card: String,
    pub family: String,
    /// The variant as tables show it (`name@tuned` for a tuned configuration).
    pub variant: String,
    /// baseline, variant, tuned or vendor_best.
    pub kind: String,
    pub shape: String,
    /// The constants it ran with, or the vendor library's algorithm.
    pub config: String,
    /// ok, failed or skipped; and why, where it did not pass.
    pub status: String,
    pub reason: Option<String>,
    pub rate: Option<f64>,
    /// TFLOP/s or GB/s.
    pub unit: String,
    /// Its speed over the vendor baseline's (above 1 is faster), with the 95% interval of the
    /// paired ratio where the run timed pairs; a point estimate otherwise.
    pub ratio: Option<f64>,
    pub ratio_low: Option<f64>,
    pub ratio_high: Option<f64>,
    /// The share of the spec sheet's peak.
    pub vs_peak: Option<f64>,
    /// The median time of a launch, ms.
    pub median_ms: Option<f64>,
    /// sustained, burst or hot; and the L2 flush before each sample (memset, loads, none).
    pub regime: Option<String>,
    pub flush: Option<String>,
    /// The median SM clock and mean board power while it was timed.
    pub sm_mhz: Option<u32>,
    pub power_w: Option<f64>,
    /// The error norm against the f64 reference, in the precision's own measure.
    pub error: Option<f64>,
    /// Elements of the output compared with the reference, and how many of them were beyond the
    /// element bound.
    pub compared: Option<usize>,
    pub beyond: Option<usize>,
    /// The worst element's deviation in units of the reference's RMS (the bound is 4 times the
    /// tolerance).
    pub worst: Option<f64>,
}

/// A serde enum's name as the results files write it ("vendor_best", "sustained").
fn name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// The row of entry `e`, measured in `run` on `card` of `device`, read from `results`.
pub fn row(results: &str, run: Option<&RunInfo>, device: &DeviceInfo, card: &str, e: &Entry) -> Row {
    let (ratio, low, high) = match (&e.paired, e.vs_baseline) {
        (Some(p), _) => (Some(p.ratio.value), Some(p.ratio.low), Some(p.ratio.high)),
        (None, r) => (r, None, None),
    };
    Row {
        results: results.to_string(),
        run: run.map(|r| r.id.clone()).unwrap_or_default(),
        date: run.map(|r| r.date.clone()).unwrap_or_default(),
        commit: run.map(|r| r.git_commit.clone()).unwrap_or_default(),
        gpu: device.name.clone(),
        arch: device.arch_name(),
        card: card.to_string(),
        family: e.family.clone(),
        variant: e.label(),
        kind: name(&e.kind),
        shape: e.shape.clone(),
        config: e.config_label(),
        status: name(&e.status),
        reason: e.reason.clone(),
        rate: e.rate,
        unit: e.unit.label().to_string(),
        ratio,
        ratio_low: low,
        ratio_high: high,
        vs_peak: e.vs_peak,
        median_ms: e.time.map(|t| t.median_ms),
        regime: e.timing.map(|t| name(&t.regime)),
        flush: e.timing.and_then(|t| t.flush).map(|f| name(&f)),
        sm_mhz: e.telemetry.as_ref().map(|t| t.sm_mhz_median),
        power_w: e.telemetry.as_ref().map(|t| t.power_w),
        error: e.verify.as_ref().map(|c| c.error),
        compared: e.verify.as_ref().map(|c| c.compared),
        beyond: e.verify.as_ref().map(|c| c.beyond),
        worst: e.verify.as_ref().map(|c| c.worst).filter(|w| w.is_finite()),
    }
}

/// The rows of the views, in the side-by-side table's order: by key (`keys`), then by view.
pub fn rows(files: &[(String, View)], keys: &[(String, String, String)]) -> Vec<Row> {
    let mut out = Vec::new();
    for k in keys {
        for (results, v) in files {
            let Some(e) = find(v, k) else { continue };
            let i = v.entries.iter().position(|x| std::ptr::eq(x, e)).and_then(|i| v.entry_runs.get(i).copied());
            let run = i.and_then(|i| v.runs.get(i));
            let card = i.and_then(|i| v.cards.get(i)).cloned().unwrap_or_else(|| v.device.card());
            out.push(row(results, run, &v.device, &card, e));
        }
    }
    out
}

/// The columns of `Row`, in its order (a JSON object's keys come back sorted, so CSV takes its
/// order from here; a test holds the two equal).
pub const COLUMNS: [&str; 29] = [
    "results",
    "run",
    "date",
    "commit",
    "gpu",
    "arch",
    "card",
    "family",
    "variant",
    "kind",
    "shape",
    "config",
    "status",
    "reason",
    "rate",
    "unit",
    "ratio",
    "ratio_low",
    "ratio_high",
    "vs_peak",
    "median_ms",
    "regime",
    "flush",
    "sm_mhz",
    "power_w",
    "error",
    "compared",
    "beyond",
    "worst",
];

/// CSV: a header of the columns, then one line per row.
pub fn csv(files: &[(String, View)], _labels: &[String], keys: &[(String, String, String)]) -> String {
    to_csv(&COLUMNS, &rows(files, keys))
}

/// JSON: an array of the rows, one object each.
pub fn json(files: &[(String, View)], _labels: &[String], keys: &[(String, String, String)]) -> String {
    to_json(&rows(files, keys))
}

/// Rows as CSV: `columns` (fields of `T`) in that order.
pub fn to_csv<T: Serialize>(columns: &[&str], rows: &[T]) -> String {
    let mut out = columns.join(",") + "\n";
    for r in rows {
        let v = serde_json::to_value(r).unwrap_or_default();
        let cells: Vec<String> = columns
            .iter()
            .map(|c| match v.get(c) {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(serde_json::Value::String(s)) => csv_field(s),
                Some(v) => csv_field(&v.to_string()),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// A table's cells as CSV: its header line, then its rows.
pub fn cells_csv(header: &[String], rows: &[Vec<String>]) -> String {
    let line = |cells: &[String]| cells.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(",") + "\n";
    std::iter::once(line(header)).chain(rows.iter().map(|r| line(r))).collect()
}

/// Rows as a JSON array of objects.
pub fn to_json<T: Serialize>(rows: &[T]) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_default() + "\n"
}

pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_csv_columns_are_the_rows_fields() {
        let e: crate::schema::entry::Entry = serde_json::from_value(serde_json::json!({
            "family": "sgemm", "variant": "v", "kind": "variant", "rung": 1, "config": null, "shape": "8x8x8",
            "dims": [8, 8, 8], "status": "ok", "reason": null, "seed": 1, "verify": null, "verify_after": null,
            "time": null, "work": {"flops": 1.0, "bytes_read": 0.0, "bytes_written": 0.0}, "unit": "Tflops",
            "rate": null, "vs_baseline": null, "peak": null, "vs_peak": null, "source_hash": null
        }))
        .unwrap();
        let dev: crate::schema::device::DeviceInfo = serde_json::from_value(serde_json::json!({
            "ordinal": 0, "name": "G", "cc_major": 9, "cc_minor": 0, "sms": 1, "l2_bytes": 1, "smem_per_block_optin": 1,
            "smem_per_sm": 1, "total_mem_bytes": 1, "sm_clock_khz": 1, "mem_clock_khz": 1, "bus_width_bits": 1,
            "driver": "d", "uuid": null, "host": null
        }))
        .unwrap();
        let v = serde_json::to_value(super::row("r", None, &dev, "c", &e)).unwrap();
        let mut fields: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut columns = super::COLUMNS.to_vec();
        fields.sort();
        columns.sort();
        assert_eq!(fields, columns);
    }
}
