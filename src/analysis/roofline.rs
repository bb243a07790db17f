//! The roofline of a results file: its measured ceilings (each precision's peak from the peak
//! family, DRAM bandwidth from the best streaming kernel or cudaMemcpy, L2 bandwidth from the l2
//! sweep's plateau) and every entry that counts FLOPs placed by its arithmetic intensity. Also
//! the attainable bound of the same work on each GPU of the spec sheet: min(peak, intensity x
//! bandwidth), always labelled as a bound.

use plotters::prelude::*;

use super::store::View;
use crate::facts::sheet::{self, Precision};
use crate::measure::families;
use crate::schema::entry::{Entry, Kind, Status, Unit};

/// What a results file measured as its ceilings.
#[derive(Debug, Clone, Default)]
pub struct Ceilings {
    /// The best peak-family rate per precision, TFLOP/s (TOPS for int8).
    pub compute: Vec<(Precision, f64)>,
    /// The best streaming rate (bytes read plus written), GB/s.
    pub dram_gbs: Option<f64>,
    /// The l2 sweep's best rate (bytes read), GB/s.
    pub l2_gbs: Option<f64>,
}

impl Ceilings {
    pub fn of(&self, p: Precision) -> Option<f64> {
        self.compute.iter().find(|c| c.0 == p).map(|c| c.1)
    }

    /// min(compute ceiling, intensity x DRAM bandwidth), TFLOP/s.
    pub fn attainable(&self, p: Precision, intensity: f64) -> Option<f64> {
        Some(self.of(p)?.min(intensity * self.dram_gbs? / 1e3))
    }
}

/// One entry that does arithmetic, on the roofline.
#[derive(Debug, Clone)]
pub struct Point {
    pub family: String,
    pub variant: String,
    pub shape: String,
    /// The vendor's: its default call or cuBLASLt's best.
    pub baseline: bool,
    pub precision: Precision,
    /// FLOPs per byte moved, from the declared work.
    pub intensity: f64,
    pub tflops: f64,
    /// Board power while it was timed, W.
    pub power_w: Option<f64>,
}

/// The precision a peak-family entry measured: its configuration's PREC (a lab.h code).
fn peak_precision(e: &Entry) -> Option<Precision> {
    families::peak::precision_of(u32::try_from(e.define("PREC")?).ok()?)
}

/// The arithmetic a family's FLOPs are done in (fp32 for a family this build does not have).
pub fn arithmetic(family: &str) -> Precision {
    families::get(family).map_or(Precision::Fp32, |f| f.info().arithmetic)
}

fn ok(e: &Entry) -> bool {
    e.status == Status::Ok && e.rate.is_some()
}

pub fn ceilings(file: &View) -> Ceilings {
    let mut c = Ceilings::default();
    for e in file.entries.iter().filter(|e| ok(e) && e.family == "peak") {
        let (Some(p), Some(r)) = (peak_precision(e), e.rate) else { continue };
        match c.compute.iter_mut().find(|x| x.0 == p) {
            Some(x) => x.1 = x.1.max(r),
            None => c.compute.push((p, r)),
        }
    }
    let best = |fam: &str, baseline: bool| {
        file.entries.iter().filter(|e| ok(e) && e.family == fam && (baseline || !e.is_baseline())).filter_map(|e| e.rate).reduce(f64::max)
    };
    c.dram_gbs = best("memory", true);
    c.l2_gbs = best("l2", false);
    c
}

/// An entry's rate as a fraction of the ceiling this file measured for it: the peak family's
/// rate for its arithmetic, or the best memory (L2, for the l2 family) bandwidth for a GB/s rate.
pub fn of_measured(c: &Ceilings, e: &Entry) -> Option<f64> {
    let ceiling = match e.unit {
        Unit::Gbs if e.family == "l2" => c.l2_gbs,
        Unit::Gbs => c.dram_gbs,
        Unit::Tflops if e.family == "peak" => None,
        Unit::Tflops => c.of(arithmetic(&e.family)),
    }?;
    Some(e.rate? / ceiling)
}

/// Entries that count FLOPs and move bytes (not the peak loops, which are the ceilings).
pub fn points(file: &View) -> Vec<Point> {
    file.entries
        .iter()
        .filter(|e| ok(e) && e.family != "peak" && e.work.flops > 0.0)
        .filter_map(|e| {
            let bytes = e.work.bytes_read + e.work.bytes_written;
            let ms = e.time?.median_ms;
            (bytes > 0.0 && ms > 0.0).then(|| Point {
                family: e.family.clone(),
                variant: e.label(),
                shape: e.shape.clone(),
                baseline: e.is_baseline() || e.kind == Kind::VendorBest,
                precision: arithmetic(&e.family),
                intensity: e.work.flops / bytes,
                tflops: e.work.flops / (ms / 1e3) / 1e12,
                power_w: e.telemetry.as_ref().map(|t| t.power_w),
            })
        })
        .collect()
}

/// Per family and shape, the baseline and the fastest variant: what tables show.
pub fn headline(pts: &[Point]) -> Vec<Point> {
    let mut out: Vec<Point> = Vec::new();
    for p in pts {
        let rival = out.iter_mut().find(|q| q.family == p.family && q.shape == p.shape && q.baseline == p.baseline);
        match rival {
            Some(q) if q.tflops < p.tflops => *q = p.clone(),
            Some(_) => {}
            None => out.push(p.clone()),
        }
    }
    out
}

/// The roofline as an SVG: one horizontal ceiling per measured precision, the DRAM and L2
/// diagonals, and the points, one colour per family, the fastest variant of each named.
pub fn svg(title: &str, c: &Ceilings, pts: &[Point]) -> String {
    let mut out = String::new();
    let _ = draw(&mut out, title, c, pts);
    out
}

fn draw(out: &mut String, title: &str, c: &Ceilings, pts: &[Point]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, (900, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let top = c.compute.iter().map(|x| x.1).chain(pts.iter().map(|p| p.tflops)).fold(1.0, f64::max) * 2.0;
    let (x0, x1) = (0.01, 10_000.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((x0..x1).log_scale(), (0.01..top).log_scale())?;
    chart.configure_mesh().x_desc("arithmetic intensity, FLOP per byte of DRAM traffic").y_desc("TFLOP/s").draw()?;
    let palette = [RED, BLUE, GREEN, MAGENTA, CYAN, BLACK];
    for (i, &(p, peak)) in c.compute.iter().enumerate() {
        let color = palette[i % palette.len()];
        let line: Vec<(f64, f64)> = match c.dram_gbs {
            Some(bw) => vec![(x0, x0 * bw / 1e3), (peak * 1e3 / bw, peak), (x1, peak)],
            None => vec![(x0, peak), (x1, peak)],
        };
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))?
            .label(format!("{} {peak:.1}", p.label()))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        // The ceiling's name on its line too, at the right, where the points do not reach.
        chart.draw_series(std::iter::once(Text::new(
            format!("{} {peak:.0}", p.label()),
            (x1 / 40.0, peak * 1.08),
            ("sans-serif", 11).into_font().color(&color),
        )))?;
    }
    if let Some(bw) = c.dram_gbs {
        chart
            .draw_series(LineSeries::new(vec![(x0, x0 * bw / 1e3), (x1, x1 * bw / 1e3)], BLACK.mix(0.7)))?
            .label(format!("DRAM {bw:.0} GB/s"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.7)));
    }
    if let Some(l2) = c.l2_gbs {
        chart
            .draw_series(LineSeries::new(vec![(x0, x0 * l2 / 1e3), (x1, x1 * l2 / 1e3)], BLACK.mix(0.4)))?
            .label(format!("L2 {l2:.0} GB/s"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.mix(0.4)));
    }
    // One colour per family, in the legend; the fastest non-baseline point of each family named.
    let dots = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
    ];
    let mut families: Vec<&str> = Vec::new();
    for p in pts {
        if !families.contains(&p.family.as_str()) {
            families.push(&p.family);
        }
    }
    for (i, fam) in families.iter().enumerate() {
        let color = dots[i % dots.len()];
        let mine: Vec<&Point> = pts.iter().filter(|p| p.family == *fam).collect();
        chart
            .draw_series(mine.iter().map(|p| Circle::new((p.intensity, p.tflops), 3, color.filled())))?
            .label(*fam)
            .legend(move |(x, y)| Circle::new((x + 10, y), 3, color.filled()));
        if let Some(best) = mine.iter().filter(|p| !p.baseline).max_by(|a, b| a.tflops.total_cmp(&b.tflops)) {
            let name = format!("{} {}", best.variant, best.shape);
            chart.draw_series(std::iter::once(Text::new(
                name,
                (best.intensity * 1.15, best.tflops),
                ("sans-serif", 11).into_font().color(&color),
            )))?;
        }
    }
    super::svg::legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    root.present()?;
    Ok(())
}

/// Rows of the roofline table: variant, shape, intensity, TFLOP/s, attainable here, % of it,
/// TFLOP/s per W, and TFLOP/s per $1000 where a price is known.
pub fn table_rows(c: &Ceilings, pts: &[Point], price_usd: Option<f64>) -> Vec<Vec<String>> {
    pts.iter()
        .map(|p| {
            let att = c.attainable(p.precision, p.intensity);
            vec![
                format!("{}/{}", p.family, p.variant),
                p.shape.clone(),
                format!("{:.2}", p.intensity),
                format!("{:.2}", p.tflops),
                att.map(|a| format!("{a:.2}")).unwrap_or_else(|| "-".into()),
                att.map(|a| format!("{:.0}%", 100.0 * p.tflops / a)).unwrap_or_else(|| "-".into()),
                p.power_w.filter(|&w| w > 0.0).map(|w| format!("{:.3}", p.tflops / w)).unwrap_or_else(|| "-".into()),
                price_usd.map(|d| format!("{:.3}", p.tflops / d * 1e3)).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect()
}

pub const TABLE_HEADER: [&str; 8] =
    ["variant", "shape", "FLOP/byte", "TFLOP/s", "attainable (measured roofs)", "% of attainable", "TFLOP/s per W", "TFLOP/s per $1k"];

/// The same work's attainable bound on every sheet GPU: rows of family, shape, then one bound
/// per GPU (TFLOP/s), once per family and shape (every variant declares the same work).
/// Bounds, not measurements.
pub fn bounds_rows(pts: &[Point]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec!["family".to_string(), "shape".to_string(), "FLOP/byte".to_string()];
    header.extend(sheet::GPUS.iter().map(|g| format!("{} bound", g.name)));
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let rows = pts
        .iter()
        .filter(|p| {
            let key = (p.family.as_str(), p.shape.as_str());
            let new = !seen.contains(&key);
            seen.push(key);
            new
        })
        .map(|p| {
            let mut row = vec![p.family.clone(), p.shape.clone(), format!("{:.2}", p.intensity)];
            row.extend(
                sheet::GPUS.iter().map(|g| g.bound(p.precision, p.intensity).map(|b| format!("{b:.1}")).unwrap_or_else(|| "-".into())),
            );
            row
        })
        .collect();
    (header, rows)
}
