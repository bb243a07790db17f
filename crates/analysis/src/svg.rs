//! What every plot of the lab shares: the legend box, and an SVG that scales to its container.

use plotters::coord::CoordTranslate;
use plotters::prelude::*;

/// The series' legend in a white box with a black border at `pos`.
pub fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    pos: SeriesLabelPosition,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).position(pos).draw()?;
    Ok(())
}

/// plotters writes a fixed size beside its viewBox; without the size a page scales the plot.
pub fn fluid(svg: String, (w, h): (u32, u32)) -> String {
    svg.replacen(&format!("<svg width=\"{w}\" height=\"{h}\""), "<svg style=\"width:100%;height:auto\"", 1)
}
