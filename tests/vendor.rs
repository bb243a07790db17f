//! The per-shape note on cuBLASLt's best: the best variant against the default call and against
//! the best, with the direct pairing where the variant was timed beside the best.

mod common;

use kernel_lab::measure::vendor::{notes, NAME};
use kernel_lab::schema::entry::{Entry, Kind, Paired};
use kernel_lab::schema::stats::Interval;

fn at(variant: &str, kind: Kind, vs_baseline: f64) -> Entry {
    let mut e = common::sgemm_entry(variant, 4096, 10.0);
    e.kind = kind;
    e.vs_baseline = Some(vs_baseline);
    e
}

#[test]
fn the_note_gives_the_direct_pairing_with_the_best_where_the_variant_has_one() {
    let mut best = at(NAME, Kind::VendorBest, 1.04);
    best.vendor_algo = Some("algo 66 (candidate 4 of 8)".into());
    let mut top = at("sgemm_08", Kind::Variant, 1.05);
    let slower = at("sgemm_07", Kind::Variant, 0.90);

    let line = notes(&[best.clone(), slower.clone(), top.clone()]).join("\n");
    assert!(
        line.contains("ran 1.040x the default call; the best variant, sgemm_08, 1.050x the default and 1.010x cuBLAS's best"),
        "{line}"
    );
    assert!(!line.contains("timed in pairs with it"), "no direct pairing without one: {line}");

    top.paired_best = Some(Paired { ratio: Interval { value: 1.002, low: 0.99, high: 1.01 }, pairs: 12, baseline_ms: 0.13 });
    let line = notes(&[best, slower, top]).join("\n");
    assert!(line.ends_with("1.010x cuBLAS's best (1.002x [0.990, 1.010] timed in pairs with it)"), "{line}");
}
