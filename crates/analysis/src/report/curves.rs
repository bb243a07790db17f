//! The report's curves: a rate against a size, one line per series, with marked sizes. The L2
//! sweep (GB/s against working set, the inferred knee and the reported L2), the alignment study
//! (TFLOP/s against M = N = K, the lab's best against cuBLAS), host transfers (pinned against
//! pageable) and, with several GPUs, peer copies and NCCL's bus bandwidth against size.

use crate::facts::family::{plays, Role};
use plotters::prelude::*;

use crate::store::View;
use crate::svg;
use crate::measure::families::{self, l2::knee};
use crate::schema::entry::{Entry, Kind, Status};
use crate::schema::transfers::{Direction, HostMemory};

/// One plot's data: lines of (x, y) and vertical marks (label, x).
pub struct Curves {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub log_x: bool,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    pub marks: Vec<(String, f64)>,
}

const MIB: f64 = (1u64 << 20) as f64;
const SIZE: (u32, u32) = (900, 420);

/// The l2 family's sweep: each variant's rate against its working set, MiB.
pub fn l2_sweep(entries: &[&Entry], reported_mib: f64, label: &str) -> Option<Curves> {
    let mut variants: Vec<&str> = Vec::new();
    for e in entries.iter().filter(|e| plays(&e.family, Role::L2Ceiling) && e.kind == Kind::Variant) {
        if !variants.contains(&e.variant.as_str()) {
            variants.push(&e.variant);
        }
    }
    let mut marks = vec![(format!("the device reports {reported_mib:.0} MiB"), reported_mib)];
    let series: Vec<(String, Vec<(f64, f64)>)> = variants
        .into_iter()
        .map(|v| {
            let mut pts: Vec<(f64, f64)> = entries
                .iter()
                .filter(|e| e.variant == v && e.kind == Kind::Variant && e.status == Status::Ok)
                .filter_map(|e| Some((e.dims[0] as f64, e.rate?)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if let Some(k) = knee(&pts) {
                marks.push((format!("{v}: knee {:.1} MiB", k / MIB), k / MIB));
            }
            (v.to_string(), pts.into_iter().map(|(b, r)| (b / MIB, r)).collect())
        })
        .filter(|(_, p): &(String, Vec<_>)| p.len() >= 2)
        .collect();
    (!series.is_empty()).then(|| Curves {
        title: format!("L2 sweep on {label}"),
        x_desc: "working set, MiB".into(),
        y_desc: "GB/s".into(),
        log_x: true,
        series,
        marks,
    })
}

/// A GEMM family's alignment study: at each M = N = K of the family's `align` suite, the
/// baseline's rate and the best variant's.
pub fn alignment(family: &str, entries: &[&Entry], label: &str) -> Option<Curves> {
    let suite = families::get(family)?.suites().into_iter().find(|s| s.name == "align")?;
    let at = |pick: &dyn Fn(&Entry) -> bool| -> Vec<(f64, f64)> {
        suite
            .shapes
            .iter()
            .filter_map(|s| {
                let best = entries
                    .iter()
                    .filter(|e| e.dims == s.0 && e.status == Status::Ok && pick(e))
                    .filter_map(|e| e.rate)
                    .fold(f64::NAN, f64::max);
                (!best.is_nan()).then_some((s.0[0] as f64, best))
            })
            .collect()
    };
    let base = at(&|e| e.kind == Kind::Baseline);
    let best = at(&|e| matches!(e.kind, Kind::Variant | Kind::Tuned));
    (base.len() >= 2 && best.len() >= 2).then(|| Curves {
        title: format!("{family}: M = N = K around 4096 on {label}"),
        x_desc: "M = N = K".into(),
        y_desc: "TFLOP/s".into(),
        log_x: false,
        series: vec![("the vendor baseline".into(), base), ("the lab's best variant".into(), best)],
        marks: Vec::new(),
    })
}

/// Host transfers: GB/s against size for each direction and kind of host memory.
pub fn transfers(f: &View, label: &str) -> Option<Curves> {
    let t = f.transfers.as_ref()?;
    let mut series = Vec::new();
    for d in [Direction::H2D, Direction::D2H] {
        for h in [HostMemory::Pinned, HostMemory::Pageable] {
            let pts: Vec<(f64, f64)> =
                t.transfers.iter().filter(|x| x.direction == d && x.host == h).map(|x| (x.bytes as f64 / MIB, x.gbs)).collect();
            if !pts.is_empty() {
                series.push((format!("{d:?} {h:?}").to_lowercase(), pts));
            }
        }
    }
    (!series.is_empty()).then(|| Curves {
        title: format!("host transfers on {label}"),
        x_desc: "MiB".into(),
        y_desc: "GB/s".into(),
        log_x: true,
        series,
        marks: Vec::new(),
    })
}

/// Several GPUs: NCCL's bus bandwidth per collective and type, and peer copies, against size.
pub fn multi(f: &View, label: &str) -> Option<Curves> {
    let m = f.multi.as_ref()?;
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for c in &m.collectives {
        let name = format!("{:?} {} busbw", c.collective, c.dtype).to_lowercase();
        match series.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1.push((c.bytes as f64 / MIB, c.busbw_gbs)),
            None => series.push((name, vec![(c.bytes as f64 / MIB, c.busbw_gbs)])),
        }
    }
    for both in [false, true] {
        let pts: Vec<(f64, f64)> = m.copies.iter().filter(|c| c.bidirectional == both).map(|c| (c.bytes as f64 / MIB, c.gbs)).collect();
        if !pts.is_empty() {
            series.push((if both { "peer copy, both ways" } else { "peer copy, one way" }.into(), pts));
        }
    }
    for s in &mut series {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    (!series.is_empty()).then(|| Curves {
        title: format!("{} GPUs of {label}: NCCL and peer copies", m.gpus.len()),
        x_desc: "MiB".into(),
        y_desc: "GB/s".into(),
        log_x: true,
        series,
        marks: Vec::new(),
    })
}

/// The curves as an SVG that scales to its container's width.
pub fn svg(c: &Curves) -> String {
    let mut out = String::new();
    let _ = draw(&mut out, c);
    svg::fluid(out, SIZE)
}

fn draw(out: &mut String, c: &Curves) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(out, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let xs = c.series.iter().flat_map(|s| s.1.iter().map(|p| p.0)).chain(c.marks.iter().map(|m| m.1));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let top = c.series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).fold(0.0, f64::max) * 1.1;
    let palette = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK, RGBColor(255, 140, 0), RGBColor(128, 0, 128)];
    let mut builder = ChartBuilder::on(&root);
    let chart = builder.caption(&c.title, ("sans-serif", 18)).margin(10).x_label_area_size(40).y_label_area_size(60);
    macro_rules! plot {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart.configure_mesh().x_desc(c.x_desc.as_str()).y_desc(c.y_desc.as_str()).draw()?;
            for (i, (name, pts)) in c.series.iter().enumerate() {
                let color = palette[i % palette.len()];
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
                chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            }
            for (i, (name, x)) in c.marks.iter().enumerate() {
                let color = if i == 0 { BLACK.mix(1.0) } else { palette[(i - 1) % palette.len()].mix(0.6) };
                chart
                    .draw_series(LineSeries::new(vec![(*x, 0.0), (*x, top)], color.stroke_width(1)))?
                    .label(name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
            }
            svg::legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }};
    }
    if c.log_x {
        plot!(chart.build_cartesian_2d((x0.max(1e-6)..x1 * 1.1).log_scale(), 0.0..top)?);
    } else {
        let pad = ((x1 - x0) * 0.05).max(1.0);
        plot!(chart.build_cartesian_2d(x0 - pad..x1 + pad, 0.0..top)?);
    }
    root.present()?;
    Ok(())
}
