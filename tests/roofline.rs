//! The roofline of H200 runs (tests/data): ceilings, intensities, bounds and the plot.

use kernel_lab::analysis::roofline::{self, Ceilings};
use kernel_lab::analysis::store::{self, Group, View};
use kernel_lab::facts::manifest::Config;
use kernel_lab::facts::sheet::Precision;

fn h200() -> View {
    let runs = store::read(&[std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nvidia-h200-sm_90")]).unwrap();
    store::views(&runs, Group::Model).remove(0)
}

#[test]
fn ceilings_points_and_bounds() {
    let mut f = h200();
    // A peak-family entry as the peak family stores one (its configuration names PREC), above
    // the file's own fp32 peak entries: the ceiling is the best of them.
    let mut peak = f.entries.iter().find(|e| e.family == "sgemm" && !e.is_baseline() && e.rate.is_some()).unwrap().clone();
    let config = Config { block: [256, 1, 1], defines: vec![("OPS".into(), 64), ("PREC".into(), 2)] };
    (peak.family, peak.variant, peak.config, peak.rate) = ("peak".into(), "peak_01_simt_fma_fp32".into(), Some(config), Some(600.0));
    f.entries.push(peak);
    let c = roofline::ceilings(&f);
    assert_eq!(c.of(Precision::Fp32), Some(600.0));
    assert!(c.dram_gbs.unwrap() > 3000.0 && c.l2_gbs.unwrap() > c.dram_gbs.unwrap(), "{c:?}");

    let pts = roofline::points(&f);
    let p = pts.iter().find(|p| p.baseline && p.shape == "4096x4096x4096").expect("cuBLAS at 4096");
    assert!((p.intensity - 2.0 * 4096.0 / 12.0).abs() < 0.01, "2mnk / 4(mk + kn + mn): {}", p.intensity);
    assert!(p.tflops > 10.0, "{}", p.tflops);
    assert!(!pts.iter().any(|p| p.family == "peak"), "the peak loops are ceilings, not points");

    // Bandwidth-bound at low intensity, compute-bound at high.
    let c = Ceilings { compute: vec![(Precision::Fp32, 60.0)], dram_gbs: Some(4000.0), l2_gbs: None };
    assert_eq!(c.attainable(Precision::Fp32, 1.0), Some(4.0));
    assert_eq!(c.attainable(Precision::Fp32, 1000.0), Some(60.0));
    assert_eq!(c.attainable(Precision::Int8, 1000.0), None);

    let head = roofline::headline(&pts);
    assert!(
        head.len() < pts.len() && head.iter().filter(|p| p.family == "sgemm" && p.shape == "4096x4096x4096").count() == 2,
        "baseline and best"
    );
    let (header, rows) = roofline::bounds_rows(&head);
    assert_eq!(header.len(), 3 + kernel_lab::facts::sheet::GPUS.len());
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let svg = roofline::svg("test", &roofline::ceilings(&f), &pts);
    assert!(svg.starts_with("<svg") && svg.contains("fp32") && svg.contains("DRAM"), "{}", &svg[..200.min(svg.len())]);
}

#[test]
fn every_family_has_a_colour_of_its_own() {
    let colours: Vec<_> = kernel_lab::measure::families::all().iter().map(|f| roofline::family_color(f.info().name())).collect();
    let mut distinct = colours.clone();
    distinct.sort_by_key(|c| (c.0, c.1, c.2));
    distinct.dedup();
    assert_eq!(distinct.len(), colours.len(), "the palette has a colour for each family in the registry");
    // A family the palette has no colour for gets one of its own, stable from plot to plot.
    let unknown = roofline::family_color("a_family_of_another_build");
    assert!(!colours.contains(&unknown), "{unknown:?}");
    assert_eq!(unknown, roofline::family_color("a_family_of_another_build"));
}
