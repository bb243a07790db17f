//! The report's pictures of one family at one shape: each variant's ratio to the vendor baseline
//! as a bar, in rung order, a tuned configuration beside its manifest one, the paired interval
//! as a whisker, and the baseline (1.0) and the vendor's best as lines. A family without a
//! baseline (the peak loops) shows each variant's share of the spec sheet's rate instead.

use crate::facts::family::{plays, Role};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::curves;
use crate::store::View;
use crate::svg;
use crate::schema::entry::{Entry, Kind, Status};

const SIZE: (u32, u32) = (900, 460);

/// The family's shape to draw first: of its default shapes, the one with the most measured
/// ratios, the largest work among those (the shape a ladder is read at).
pub fn ladder_shape<'a>(entries: &[&'a Entry]) -> Option<&'a Entry> {
    ladder_shapes(entries, 1).into_iter().next()
}

/// What a bar shows: the ratio to the baseline, else the share of the sheet's rate.
fn value(e: &Entry) -> Option<f64> {
    e.vs_baseline.or(e.vs_peak)
}

/// Whether `e`'s shape is one its family benches by default (not a suite's or a study's), the
/// shapes a family's ladder is read at.
fn default_shape(e: &Entry) -> bool {
    crate::measure::families::get(&e.family).is_some_and(|f| f.default_sizes(false).iter().any(|s| s.0 == e.dims))
}

/// Up to `n` shapes to draw: the family's default shapes first, then the most measured (of equal
/// counts, the most work, then the largest); after the first, only shapes with two bars or more.
/// A shape's count is of the variants measured as built: a `@tuned` row comes and goes with the
/// tunings (timed only where the pick is not the manifest's, skipped once its code changes), so
/// it would move a family's headline shape.
pub fn ladder_shapes<'a>(entries: &[&'a Entry], n: usize) -> Vec<&'a Entry> {
    let mut shapes: Vec<(&'a Entry, usize)> = Vec::new();
    for e in entries.iter().copied().filter(|e| is_bar(e) && e.kind == Kind::Variant) {
        match shapes.iter_mut().find(|s| s.0.dims == e.dims) {
            Some(s) => s.1 += 1,
            None => shapes.push((e, 1)),
        }
    }
    let size = |e: &Entry| e.work.flops + e.work.bytes_read + e.work.bytes_written;
    let dims = |e: &Entry| e.dims.iter().product::<u64>();
    shapes.sort_by(|a, b| {
        default_shape(b.0)
            .cmp(&default_shape(a.0))
            .then(b.1.cmp(&a.1))
            .then(size(b.0).total_cmp(&size(a.0)))
            .then(dims(b.0).cmp(&dims(a.0)))
    });
    shapes.into_iter().enumerate().filter(|(i, s)| *i == 0 || s.1 >= 2).take(n).map(|(_, s)| s.0).collect()
}

/// A measured variant (as built or tuned) with a value to draw.
fn is_bar(e: &Entry) -> bool {
    e.status == Status::Ok && value(e).is_some() && matches!(e.kind, Kind::Variant | Kind::Tuned)
}

/// Every plot of each view, as files to write beside a Markdown report: (file name, caption,
/// SVG). Per family its ladder (`sgemm.svg`) and its curves where it has some (`l2-sweep.svg`,
/// `fp16-align.svg`); per device its transfers and several-GPU curves. Files of the second view
/// on get its number (`sgemm-2.svg`).
pub fn plot_files(files: &[(String, View)], labels: &[String]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (n, ((_, f), label)) in files.iter().zip(labels).enumerate() {
        let mut fams: Vec<&str> = Vec::new();
        for e in &f.entries {
            if !fams.contains(&e.family.as_str()) {
                fams.push(&e.family);
            }
        }
        let name = |stem: &str| if n == 0 { format!("{stem}.svg") } else { format!("{stem}-{}.svg", n + 1) };
        for fam in fams {
            let mine: Vec<&Entry> = f.entries.iter().filter(|e| e.family == fam).collect();
            if let Some(at) = ladder_shape(&mine) {
                let caption = format!("{fam} at {} on {label}", at.shape);
                out.push((name(fam), caption.clone(), ladder_svg(&caption, &mine, at).0));
            }
            let reported = f.device.l2_bytes as f64 / (1u64 << 20) as f64;
            let (extra, stem) = if plays(fam, Role::L2Ceiling) {
                (curves::l2_sweep(&mine, reported, label), format!("{fam}-sweep"))
            } else {
                (curves::alignment(fam, &mine, label), format!("{fam}-align"))
            };
            if let Some(c) = extra {
                out.push((name(&stem), c.title.clone(), curves::svg(&c)));
            }
        }
        let points = crate::roofline::points(f);
        if !points.is_empty() {
            let title = format!("{label}: measured roofline");
            out.push((
                name("roofline"),
                title.clone(),
                crate::roofline::svg(&title, &crate::roofline::ceilings(f), &points),
            ));
        }
        for (stem, c) in [("transfers", curves::transfers(f, label)), ("multi", curves::multi(f, label))] {
            if let Some(c) = c {
                out.push((name(stem), c.title.clone(), curves::svg(&c)));
            }
        }
    }
    out
}

/// The ladder at the shape of `at`, as an SVG that scales to its container's width, and the
/// number of bars in it.
pub fn ladder_svg(title: &str, entries: &[&Entry], at: &Entry) -> (String, usize) {
    let mut bars: Vec<&Entry> = entries.iter().copied().filter(|e| e.dims == at.dims && is_bar(e)).collect();
    bars.sort_by_key(|e| (e.rung, e.label()));
    let best = entries.iter().find(|e| e.dims == at.dims && e.kind == Kind::VendorBest).and_then(|e| e.vs_baseline);
    let axis = if bars.iter().any(|e| e.vs_baseline.is_some()) { "ratio to the vendor baseline" } else { "share of the spec sheet's rate" };
    let mut out = String::new();
    let _ = draw(&mut out, title, axis, &bars, best);
    (svg::fluid(out, SIZE), bars.len())
}

fn draw(out: &mut String, title: &str, axis: &str, bars: &[&Entry], best: Option<f64>) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let high = |e: &Entry| e.paired.map_or(value(e).unwrap_or(0.0), |p| p.ratio.high);
    let top = bars.iter().map(|e| high(e)).chain(best).fold(1.0, f64::max) * 1.1;
    let n = bars.len().max(1);
    // A segmented axis: each bar owns a segment, and its label sits under the segment's middle
    // (an integer range has both ends: n - 1 gives n segments; one bar gets a spare, as 0..0 has
    // no width).
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(150)
        .y_label_area_size(50)
        .build_cartesian_2d((0..(n - 1).max(1)).into_segmented(), 0.0..top)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        // The bars' names are drawn below: the mesh centres rotated labels on the axis, half of
        // each over the bars.
        .x_label_formatter(&|_| String::new())
        .y_desc(axis)
        .draw()?;
    // Each bar's name, rotated, hanging down from the axis under the bar's middle.
    let name_style =
        TextStyle::from(("sans-serif", 11).into_font().transform(FontTransform::Rotate90)).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, e) in bars.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(SegmentValue::CenterOf(i), 0.0));
        root.draw(&Text::new(e.label(), (x, y + 6), name_style.clone()))?;
    }
    chart.draw_series(bars.iter().enumerate().map(|(i, e)| {
        let color = if e.kind == Kind::Tuned { GREEN.mix(0.8) } else { BLUE.mix(0.7) };
        let mut bar =
            Rectangle::new([(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), value(e).unwrap_or(0.0))], color.filled());
        bar.set_margin(0, 0, 12, 12);
        bar
    }))?;
    chart.draw_series(bars.iter().enumerate().filter_map(|(i, e)| {
        let p = e.paired?;
        Some(PathElement::new(
            vec![(SegmentValue::CenterOf(i), p.ratio.low), (SegmentValue::CenterOf(i), p.ratio.high)],
            BLACK.stroke_width(2),
        ))
    }))?;
    chart
        .draw_series(LineSeries::new(vec![(SegmentValue::Exact(0), 1.0), (SegmentValue::Last, 1.0)], BLACK.stroke_width(1)))?
        .label(if axis.starts_with("ratio") { "the vendor's default call (1.0)" } else { "the sheet's rate (1.0)" })
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
    if let Some(b) = best {
        chart
            .draw_series(LineSeries::new(vec![(SegmentValue::Exact(0), b), (SegmentValue::Last, b)], RED.stroke_width(2)))?
            .label(format!("cuBLASLt's best {b:.3}"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    }
    svg::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present()?;
    Ok(())
}
