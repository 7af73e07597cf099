//! The soak's pictures, read at a glance: memory over time with the fitted trend and the warm-up
//! shaded, latency percentiles over time; intervals with failures as red lines on both. Drawn with
//! plotters into a pixel buffer (its text with a font compiled in, DejaVu Sans cut to the characters
//! used: no system font library), written as PNG by the image crate.

use std::path::Path;
use std::sync::Once;

use plotters::coord::ranged1d::AsRangedCoord;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::csv_log::Sample;
use super::trend::Trend;

/// DejaVu Sans (its licence: `DejaVuSans-LICENSE.txt` beside it), cut to ASCII and a few symbols.
const FONT: &[u8] = include_bytes!("DejaVuSans-subset.ttf");
const SIZE: (u32, u32) = (960, 480);

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            let _ = plotters::style::register_font("sans-serif", style, FONT);
        }
    });
}

/// Seconds, minutes or hours: whichever shows the run's length best.
fn time_unit(end_s: f64) -> (f64, &'static str) {
    if end_s > 3.0 * 3600.0 {
        (3600.0, "hours")
    } else if end_s > 180.0 {
        (60.0, "minutes")
    } else {
        (1.0, "seconds")
    }
}

type DrawResult<T = ()> = Result<T, Box<dyn std::error::Error>>;
/// One figure of a sample, when it was measured.
type Figure = fn(&Sample) -> Option<f64>;

type Area<'b> = DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>;
/// A chart of the soak: time across (`f64`), `Y` up.
type Chart<'a, 'b, Y> = ChartContext<'a, BitMapBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>;

/// Draws into a fresh white RGB buffer with `draw`, then writes it to `path` as PNG.
fn png(path: &Path, draw: impl FnOnce(&Area<'_>) -> DrawResult) -> Result<(), String> {
    register_font();
    let mut buf = vec![255u8; (SIZE.0 * SIZE.1 * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, SIZE).into_drawing_area();
        let drawn = || -> DrawResult {
            root.fill(&WHITE)?;
            draw(&root)?;
            Ok(root.present()?)
        };
        drawn().map_err(|e| format!("cannot draw {}: {e}", path.display()))?;
    }
    let img = image::RgbImage::from_raw(SIZE.0, SIZE.1, buf).ok_or("plot buffer of the wrong size")?;
    img.save(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

/// Red vertical lines at the intervals that had failures, labelled once.
fn failure_lines<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, impl Ranged<ValueType = f64>>>,
    samples: &[Sample],
    unit: f64,
    (y0, y1): (f64, f64),
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let lines: Vec<_> = samples
        .iter()
        .filter(|s| s.failures > 0)
        .map(|s| PathElement::new(vec![(s.elapsed_s / unit, y0), (s.elapsed_s / unit, y1)], RED))
        .collect();
    if !lines.is_empty() {
        chart.draw_series(lines)?.label("interval with failures").legend(|(x, y)| PathElement::new(vec![(x, y - 6), (x, y + 6)], RED));
    }
    Ok(())
}

/// A chart on `root` as every soak picture has it: the caption, margins and label areas, time from 0
/// to `x_end` (in the picture's unit) across, `y` up.
fn chart<'a, 'b, Y: AsRangedCoord<Value = f64>>(
    root: &'a Area<'b>,
    title: &str,
    x_end: f64,
    y: Y,
) -> DrawResult<Chart<'a, 'b, Y::CoordDescType>> {
    let chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..x_end, y)?;
    Ok(chart)
}

/// The failure lines over everything drawn, then the legend at `position`.
fn finish<'a, 'b: 'a, Y: Ranged<ValueType = f64>>(
    chart: &mut Chart<'a, 'b, Y>,
    samples: &[Sample],
    unit: f64,
    y_range: (f64, f64),
    position: SeriesLabelPosition,
) -> DrawResult {
    failure_lines(chart, samples, unit, y_range)?;
    chart.configure_series_labels().position(position).background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
    Ok(())
}

fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// Resident, private (at each interval's end and its lowest in the interval) and GPU memory over
/// time, the trend fitted to the lowest private memory after the warm-up (drawn at each sample's
/// calls), the warm-up shaded.
pub fn memory(path: &Path, samples: &[Sample], warmup_s: f64, trend: Option<&Trend>, title: &str) -> Result<(), String> {
    let end = samples.last().map_or(1.0, |s| s.elapsed_s).max(1.0);
    let (unit, unit_name) = time_unit(end);
    let series: [(&str, RGBColor, Figure); 4] = [
        ("resident", BLUE, |s| s.process.resident_mib),
        ("private", RGBColor(120, 200, 120), |s| s.process.private_mib),
        ("private, lowest in the interval (fitted)", RGBColor(0, 110, 0), |s| s.private_low_mib),
        ("GPU in use (device)", RGBColor(150, 0, 150), |s| s.gpu_used_mib),
    ];
    let (lo, hi) = bounds(samples.iter().flat_map(|s| series.iter().filter_map(move |(_, _, f)| f(s)))).unwrap_or((0.0, 1.0));
    let pad = ((hi - lo) * 0.1).max(1.0);
    let (y0, y1) = ((lo - pad).max(0.0), hi + pad);
    png(path, |root| {
        let mut chart = chart(root, title, end / unit, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc(unit_name)
            .y_desc("MiB")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        if warmup_s > 0.0 {
            chart
                .draw_series([Rectangle::new([(0.0, y0), (warmup_s / unit, y1)], RGBColor(225, 225, 225).filled())])?
                .label("warm-up (not fitted)")
                .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], RGBColor(225, 225, 225).filled()));
        }
        for (name, colour, value) in &series {
            let pts: Vec<(f64, f64)> = samples.iter().filter_map(|s| value(s).map(|v| (s.elapsed_s / unit, v))).collect();
            if !pts.is_empty() {
                let c = *colour;
                chart
                    .draw_series(LineSeries::new(pts, c.stroke_width(2)))?
                    .label(*name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
            }
        }
        if let Some(t) = trend {
            let pts: Vec<(f64, f64)> = samples
                .iter()
                .filter(|s| s.elapsed_s >= warmup_s)
                .map(|s| (s.elapsed_s / unit, t.intercept + t.slope * s.calls_total as f64 / 1000.0))
                .collect();
            chart
                .draw_series(DashedLineSeries::new(pts, 8, 5, BLACK.stroke_width(2)))?
                .label(format!("trend of the lowest private: {:+.3} MiB per 1000 calls", t.slope))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK.stroke_width(2)));
        }
        finish(&mut chart, samples, unit, (y0, y1), SeriesLabelPosition::LowerRight)
    })
}

/// Latency percentiles of all calls per interval (p50, p95, p99, max), on a log scale.
pub fn latency(path: &Path, samples: &[Sample], title: &str) -> Result<(), String> {
    let end = samples.last().map_or(1.0, |s| s.elapsed_s).max(1.0);
    let (unit, unit_name) = time_unit(end);
    let names = [("p50", BLUE), ("p95", RGBColor(0, 140, 0)), ("p99", RGBColor(230, 120, 0)), ("max", RGBColor(120, 120, 120))];
    let (lo, hi) = bounds(samples.iter().flat_map(|s| s.latency_ms.iter().flatten().copied())).unwrap_or((1.0, 10.0));
    let (y0, y1) = ((lo * 0.8).max(0.001), (hi * 1.25).max(lo * 2.0));
    png(path, |root| {
        let mut chart = chart(root, title, end / unit, (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .x_desc(unit_name)
            .y_desc("ms per call (log scale)")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_labels(8)
            .y_label_formatter(&|y| if *y >= 1.0 { format!("{y:.0}") } else { format!("{y:.2}") })
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (k, (name, colour)) in names.iter().enumerate() {
            let pts: Vec<(f64, f64)> = samples.iter().filter_map(|s| s.latency_ms[k].map(|v| (s.elapsed_s / unit, v))).collect();
            let c = *colour;
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))?
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
        }
        finish(&mut chart, samples, unit, (y0, y1), SeriesLabelPosition::UpperRight)
    })
}
