//! `throughput.png`: each flow's throughput over time as a coloured line (flows in scenario order take
//! plotters' `Palette99` colours 0, 1, 2, ...). No text is drawn: the bitmap backend without a font crate keeps
//! the build small; grey grid lines mark every 4 Gbit/s, and the x axis spans the run.

use std::path::Path;

use plotters::prelude::*;

use super::RunResult;
use crate::scenario::Scenario;

/// Draws the plot of `r` into `path`.
pub(super) fn throughput_png(path: &Path, r: &RunResult, sc: &Scenario) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let root = BitMapBackend::new(path, (960, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let t_max = sc.duration_us.max(1) as f64;
    let peak = r
        .samples
        .iter()
        .flat_map(|(_, g)| g.iter().copied())
        .fold(0.0f64, f64::max);
    let y_max = ((peak / 4.0).ceil() * 4.0).max(4.0);
    let area = root.margin(16, 16, 16, 16);
    let mut chart = ChartBuilder::on(&area)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)
        .map_err(|e| err(&e))?;
    let grey = RGBColor(210, 210, 210);
    let mut y = 0.0;
    while y <= y_max {
        chart
            .draw_series(LineSeries::new([(0.0, y), (t_max, y)], &grey))
            .map_err(|e| err(&e))?;
        y += 4.0;
    }
    chart
        .draw_series(LineSeries::new([(0.0, 0.0), (0.0, y_max)], &BLACK))
        .map_err(|e| err(&e))?;
    for i in 0..sc.flows.len() {
        let pts = r.samples.iter().map(|(t, g)| (*t as f64, g[i]));
        chart
            .draw_series(LineSeries::new(pts, Palette99::pick(i).stroke_width(2)))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}
