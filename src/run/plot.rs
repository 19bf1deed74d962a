//! `throughput.png`: each flow's throughput over time as a coloured line (flows in scenario order take
//! plotters' `Palette99` colours 0, 1, 2, ...), with axes, labels and a legend when a font can be loaded.
//!
//! Text needs a TrueType font; rather than ship one, the plot loads DejaVu Sans (Debian's `fonts-dejavu-core`,
//! present on most systems) or Liberation Sans from the usual paths. Without either, the plot is drawn
//! without text: grey grid lines every 4 Gbit/s and the x axis spanning the run.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use super::RunResult;
use crate::scenario::Scenario;

/// Fonts tried in order for the plot's text.
const FONT_PATHS: [&str; 3] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
];

/// Registers the first readable font as "sans-serif" once per process; false when none could be loaded.
fn font_available() -> bool {
    static LOADED: OnceLock<bool> = OnceLock::new();
    *LOADED.get_or_init(|| {
        FONT_PATHS.iter().any(|p| {
            std::fs::read(p).is_ok_and(|bytes| {
                // plotters keeps the font for the process's lifetime: leak one copy.
                register_font(
                    "sans-serif",
                    FontStyle::Normal,
                    Box::leak(bytes.into_boxed_slice()),
                )
                .is_ok()
            })
        })
    })
}

/// Most characters of the scenario name in the plot's title (text layout costs time per character, and a
/// longer title does not fit the image anyway).
const TITLE_NAME_CHARS: usize = 80;

/// `name` as the title shows it: control characters left out, cut at [`TITLE_NAME_CHARS`] with an ellipsis.
fn shown_name(name: &str) -> String {
    let mut chars = name.chars().filter(|c| !c.is_control());
    let mut s: String = chars.by_ref().take(TITLE_NAME_CHARS).collect();
    if chars.next().is_some() {
        s.push('…');
    }
    s
}

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
    let text = font_available();
    let area = root.margin(16, 16, 16, 16);
    let mut builder = ChartBuilder::on(&area);
    if text {
        builder
            .caption(
                format!("{}: throughput per flow", shown_name(&sc.name)),
                ("sans-serif", 20),
            )
            .x_label_area_size(40)
            .y_label_area_size(50);
    }
    let mut chart = builder
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)
        .map_err(|e| err(&e))?;
    if text {
        chart
            .configure_mesh()
            .x_desc("time (us)")
            .y_desc("Gbit/s")
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| err(&e))?;
    } else {
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
    }
    for (i, flow) in sc.flows.iter().enumerate() {
        let pts = r.samples.iter().map(|(t, g)| (*t as f64, g[i]));
        let color = Palette99::pick(i);
        let series = chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| err(&e))?;
        if text {
            series.label(flow.id.clone()).legend(move |(x, y)| {
                PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_names_are_cut_for_the_title() {
        assert_eq!(super::shown_name("gran-s1"), "gran-s1");
        let long = "x".repeat(50 << 20);
        let shown = super::shown_name(&long);
        assert_eq!(shown.chars().count(), super::TITLE_NAME_CHARS + 1);
        assert!(shown.ends_with('…'));
        assert_eq!(super::shown_name("a\nb"), "ab");
    }
}
