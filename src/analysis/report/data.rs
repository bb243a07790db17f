//! The side-by-side view as data: CSV (one row per entry key, a group of columns per device) and
//! JSON (each key's entries, per device).

use serde_json::json;

use super::find;
use crate::analysis::store::View;

/// CSV: family, shape, variant, then status, median, rate, unit, ratios and error per device.
pub fn csv(files: &[(String, View)], labels: &[String], keys: &[(String, String, String)]) -> String {
    let mut out = String::from("family,shape,variant");
    for l in labels {
        for col in ["status", "median_ms", "rate", "unit", "vs_baseline", "vs_peak", "error"] {
            out.push_str(&format!(",{} {col}", csv_field(l)));
        }
    }
    out.push('\n');
    for k in keys {
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

/// JSON: per key, the entry of each device (null where it has none).
pub fn json(files: &[(String, View)], labels: &[String], keys: &[(String, String, String)]) -> String {
    let rows: Vec<serde_json::Value> = keys
        .iter()
        .map(|k| {
            let per: serde_json::Map<String, serde_json::Value> =
                labels.iter().zip(files).map(|(l, (_, f))| (l.clone(), serde_json::to_value(find(f, k)).unwrap_or_default())).collect();
            json!({ "family": k.0, "shape": k.1, "variant": k.2, "devices": per })
        })
        .collect();
    serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
