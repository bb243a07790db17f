//! The roofline of a results file: its measured ceilings (each precision's peak from the peak
//! family, DRAM bandwidth from the best streaming kernel or cudaMemcpy, L2 bandwidth from the l2
//! sweep's plateau) and every entry that counts FLOPs placed by its arithmetic intensity. Also
//! the attainable bound of the same work on each GPU of the spec sheet: min(peak, intensity x
//! bandwidth), always labelled as a bound.

use crate::facts::family::{plays, Role};
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
    for e in file.entries.iter().filter(|e| ok(e) && plays(&e.family, Role::ComputePeak)) {
        let (Some(p), Some(r)) = (peak_precision(e), e.rate) else { continue };
        match c.compute.iter_mut().find(|x| x.0 == p) {
            Some(x) => x.1 = x.1.max(r),
            None => c.compute.push((p, r)),
        }
    }
    let best = |role: Role, baseline: bool| {
        file.entries
            .iter()
            .filter(|e| ok(e) && plays(&e.family, role) && (baseline || !e.is_baseline()))
            .filter_map(|e| e.rate)
            .reduce(f64::max)
    };
    c.dram_gbs = best(Role::DramCeiling, true);
    c.l2_gbs = best(Role::L2Ceiling, false);
    c
}

/// An entry's rate as a fraction of the ceiling this file measured for it: the peak family's
/// rate for its arithmetic, or the best memory (L2, for the l2 family) bandwidth for a GB/s rate.
pub fn of_measured(c: &Ceilings, e: &Entry) -> Option<f64> {
    let ceiling = match e.unit {
        Unit::Gbs if plays(&e.family, Role::L2Ceiling) => c.l2_gbs,
        Unit::Gbs => c.dram_gbs,
        Unit::Tflops if plays(&e.family, Role::ComputePeak) => None,
        Unit::Tflops => c.of(arithmetic(&e.family)),
    }?;
    Some(e.rate? / ceiling)
}

/// Entries that count FLOPs and move bytes (not the peak loops, which are the ceilings).
pub fn points(file: &View) -> Vec<Point> {
    file.entries
        .iter()
        .filter(|e| ok(e) && !plays(&e.family, Role::ComputePeak) && e.work.flops > 0.0)
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

/// The roofline as an SVG: one horizontal ceiling per measured precision and the DRAM and L2
/// diagonals, each named in a column beside the plot, spaced so no two names collide; the points,
/// one colour per family (the vendor's hollow); and, in a panel of its own so it covers no point,
/// the legend: each family's colour with its fastest variant.
pub fn svg(title: &str, c: &Ceilings, pts: &[Point]) -> String {
    let mut out = String::new();
    let _ = draw(&mut out, title, c, pts);
    super::svg::fluid(out, SIZE)
}

const SIZE: (u32, u32) = (1060, 600);
/// Where the plot ends and the column of ceiling names begins; the legend's panel after it.
const PLOT_W: u32 = 720;
const LEGEND_X: i32 = 830;
const FONT: u32 = 13;

/// A family's colour: by its place in the registry, so a family keeps its colour in every plot
/// and no two families share one. Past the palette, hues a golden angle apart at the palette's
/// middle lightness, so a new family needs no colour written for it.
pub fn family_color(family: &str) -> RGBColor {
    const PALETTE: [RGBColor; 19] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
        RGBColor(0, 70, 140),
        RGBColor(150, 0, 90),
        RGBColor(0, 110, 70),
        RGBColor(120, 70, 0),
        RGBColor(174, 199, 232),
        RGBColor(255, 187, 120),
        RGBColor(152, 223, 138),
        RGBColor(255, 152, 150),
        RGBColor(197, 176, 213),
    ];
    let names: Vec<&str> = families::all().iter().map(|f| f.info().name()).collect();
    let i = names.iter().position(|n| *n == family).unwrap_or_else(|| names.len() + family.len());
    PALETTE.get(i).copied().unwrap_or_else(|| hue((i - PALETTE.len()) as f64 * 137.508 + 15.0))
}

/// A colour of hue `degrees` at saturation 0.65 and lightness 0.45 (HSL): dark enough for its
/// label on the plot's white.
fn hue(degrees: f64) -> RGBColor {
    let (s, l) = (0.65, 0.45);
    let c = (1.0 - (2.0 * l - 1.0_f64).abs()) * s;
    let h = degrees.rem_euclid(360.0) / 60.0;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round() as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

/// Pixel rows for labels wanted at `want` (any order), at least `gap` apart, as near their wish
/// as that allows, inside [lo, hi].
fn spread(want: &[i32], gap: i32, lo: i32, hi: i32) -> Vec<i32> {
    let mut order: Vec<usize> = (0..want.len()).collect();
    order.sort_by_key(|&i| want[i]);
    let mut at: Vec<i32> = order.iter().map(|&i| want[i].clamp(lo, hi)).collect();
    for k in 1..at.len() {
        at[k] = at[k].max(at[k - 1] + gap);
    }
    // Pushed past the bottom: slide the run back up.
    if let Some(&last) = at.last() {
        let over = last - hi;
        if over > 0 {
            for a in at.iter_mut() {
                *a -= over;
            }
            for k in (0..at.len().saturating_sub(1)).rev() {
                at[k] = at[k].min(at[k + 1] - gap);
            }
        }
    }
    let mut out = vec![0; want.len()];
    for (k, &i) in order.iter().enumerate() {
        out[i] = at[k];
    }
    out
}

fn draw(out: &mut String, title: &str, c: &Ceilings, pts: &[Point]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let root = SVGBackend::with_string(out, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot, _) = root.split_horizontally(PLOT_W);
    let top = c.compute.iter().map(|x| x.1).chain(pts.iter().map(|p| p.tflops)).fold(1.0, f64::max) * 2.0;
    let bottom = pts.iter().map(|p| p.tflops).fold(top, f64::min).max(1e-4) / 2.0;
    let decade = |v: f64, up: bool| 10f64.powf(if up { v.log10().ceil() } else { v.log10().floor() });
    let (x0, x1) = (
        decade(pts.iter().map(|p| p.intensity).fold(1.0, f64::min).max(1e-3) / 2.0, false),
        decade(pts.iter().map(|p| p.intensity).fold(1.0, f64::max) * 2.0, true),
    );
    let mut chart = ChartBuilder::on(&plot)
        .caption(title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(65)
        .build_cartesian_2d((x0..x1).log_scale(), (decade(bottom, false)..top).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("arithmetic intensity, FLOP per byte of DRAM traffic")
        .y_desc("TFLOP/s")
        .label_style(("sans-serif", FONT))
        .axis_desc_style(("sans-serif", FONT + 1))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    // The ceilings: compute roofs bent down by the DRAM diagonal, then the bandwidths themselves.
    let mut names: Vec<(String, f64, RGBAColor)> = Vec::new();
    for &(p, peak) in &c.compute {
        let line: Vec<(f64, f64)> = match c.dram_gbs {
            Some(bw) if peak * 1e3 / bw > x0 => vec![(x0, x0 * bw / 1e3), (peak * 1e3 / bw, peak), (x1, peak)],
            _ => vec![(x0, peak), (x1, peak)],
        };
        let grey = BLACK.mix(0.45);
        chart.draw_series(LineSeries::new(line, grey.stroke_width(1)))?;
        names.push((format!("{} {peak:.0}", p.label()), peak, grey));
    }
    for (what, bw, shade) in [("DRAM", c.dram_gbs, 0.8), ("L2", c.l2_gbs, 0.35)] {
        let Some(bw) = bw else { continue };
        chart.draw_series(LineSeries::new(vec![(x0, x0 * bw / 1e3), (x1, x1 * bw / 1e3)], BLACK.mix(shade).stroke_width(2)))?;
        // Named where the diagonal leaves the plot: its right edge, or the top.
        names.push((format!("{what} {bw:.0} GB/s"), (x1 * bw / 1e3).min(top), BLACK.mix(shade)));
    }
    let right = chart.backend_coord(&(x1, top)).0 + 6;
    let (lo, hi) = (chart.backend_coord(&(x1, top)).1, chart.backend_coord(&(x1, decade(bottom, false))).1);
    let rows = spread(&names.iter().map(|n| chart.backend_coord(&(x1, n.1)).1).collect::<Vec<_>>(), FONT as i32 + 3, lo, hi);
    for ((text, _, color), y) in names.iter().zip(rows) {
        let style = ("sans-serif", FONT).into_font().color(color).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(text.clone(), (right, y), style))?;
    }
    // The points, family by family in registry order; the vendor's hollow.
    let mut fams: Vec<&str> = pts.iter().map(|p| p.family.as_str()).collect();
    fams.sort_by_key(|f| families::all().iter().position(|x| x.info().name() == *f).unwrap_or(usize::MAX));
    fams.dedup();
    let mut y = chart.backend_coord(&(x1, top)).1;
    let head = ("sans-serif", FONT + 1).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    root.draw(&Text::new("family: its fastest kernel", (LEGEND_X, y), head))?;
    for fam in fams {
        let color = family_color(fam);
        let mine: Vec<&Point> = pts.iter().filter(|p| p.family == fam).collect();
        chart.draw_series(mine.iter().map(|p| {
            let style = if p.baseline { color.stroke_width(1) } else { color.filled() };
            Circle::new((p.intensity, p.tflops), 3, style)
        }))?;
        y += 2 * FONT as i32 + 8;
        root.draw(&Circle::new((LEGEND_X + 5, y), 5, color.filled()))?;
        let name = ("sans-serif", FONT).into_font().color(&color).pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(fam.to_string(), (LEGEND_X + 16, y), name))?;
        if let Some(best) = mine.iter().filter(|p| !p.baseline).max_by(|a, b| a.tflops.total_cmp(&b.tflops)) {
            let small = ("sans-serif", FONT - 2).into_font().color(&BLACK.mix(0.75)).pos(Pos::new(HPos::Left, VPos::Center));
            root.draw(&Text::new(format!("{} {:.0}", best.variant, best.tflops), (LEGEND_X + 16, y + FONT as i32 + 1), small))?;
        }
    }
    y += 2 * FONT as i32 + 8;
    root.draw(&Circle::new((LEGEND_X + 5, y), 4, BLACK.stroke_width(1)))?;
    let note = ("sans-serif", FONT - 1).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
    root.draw(&Text::new("hollow: the vendor library", (LEGEND_X + 16, y), note))?;
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
