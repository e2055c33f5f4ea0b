//! SVG figures drawn with plotters' SVG backend (no system fonts needed): normalised bars,
//! CDFs, tail-percentile lines and parameter sweeps.

use plotters::prelude::*;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// Colour of the i-th series.
fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const SIZE: (u32, u32) = (860, 440);

/// Grouped bars: `values[group][series]`; `paper[group][series]` drawn as black diamonds;
/// a dashed line at `baseline` when given.
pub struct Bars<'a> {
    /// Title.
    pub title: &'a str,
    /// Y-axis label (with unit).
    pub y_label: &'a str,
    /// Group labels (x axis).
    pub groups: &'a [String],
    /// Series names (legend).
    pub series: &'a [String],
    /// Values.
    pub values: &'a [Vec<Option<f64>>],
    /// Paper values.
    pub paper: &'a [Vec<Option<f64>>],
    /// Reference line (1.0 for normalised figures).
    pub baseline: Option<f64>,
}

fn max_of<'a>(it: impl Iterator<Item = &'a Option<f64>>) -> f64 {
    it.filter_map(|v| *v)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Renders grouped bars to an SVG string.
pub fn bars(b: &Bars) -> String {
    let mut svg = String::new();
    if let Err(e) = draw_bars(&mut svg, b) {
        return error_svg(&e.to_string());
    }
    svg
}

fn draw_bars(svg: &mut String, b: &Bars) -> DrawResult {
    // Wide enough for every bar: about 14 px per bar plus margins.
    let bars = (b.groups.len() * (b.series.len() + 1)) as u32;
    let size = (SIZE.0.max(160 + 14 * bars), SIZE.1);
    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let top = max_of(b.values.iter().flatten())
        .max(max_of(b.paper.iter().flatten()))
        .max(b.baseline.unwrap_or(0.0));
    let n = b.groups.len().max(1);
    let mut chart = ChartBuilder::on(&root)
        .caption(b.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..n as f64, 0.0..if top > 0.0 { top * 1.45 } else { 1.0 })?;
    let groups = b.groups.to_vec();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 0.01 {
                groups.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc(b.y_label)
        .draw()?;
    let k = b.series.len().max(1) as f64;
    let width = 0.8 / k;
    for (s, name) in b.series.iter().enumerate() {
        let c = color(s);
        let rects = b.values.iter().enumerate().filter_map(|(g, row)| {
            let v = row.get(s).copied().flatten()?;
            let x0 = g as f64 + 0.1 + s as f64 * width;
            Some(Rectangle::new(
                [(x0, 0.0), (x0 + width * 0.92, v)],
                c.filled(),
            ))
        });
        chart
            .draw_series(rects)?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
    }
    let marks: Vec<(f64, f64)> = b
        .paper
        .iter()
        .enumerate()
        .flat_map(|(g, row)| {
            row.iter().enumerate().filter_map(move |(s, v)| {
                v.map(|v| (g as f64 + 0.1 + (s as f64 + 0.46) * width, v))
            })
        })
        .collect();
    if !marks.is_empty() {
        chart
            .draw_series(
                marks
                    .into_iter()
                    .map(|p| TriangleMarker::new(p, 6, BLACK.filled())),
            )?
            .label("paper")
            .legend(|(x, y)| TriangleMarker::new((x + 6, y), 5, BLACK.filled()));
    }
    if let Some(y) = b.baseline {
        chart.draw_series(DashedLineSeries::new(
            vec![(0.0, y), (n as f64, y)],
            6,
            4,
            BLACK.stroke_width(1),
        ))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Lines over a categorical or numeric x axis.
pub struct Lines<'a> {
    /// Title.
    pub title: &'a str,
    /// X-axis label.
    pub x_label: &'a str,
    /// Y-axis label.
    pub y_label: &'a str,
    /// Tick labels for categorical x (positions 0, 1, …); empty for numeric x.
    pub categories: &'a [String],
    /// `(name, points)` per series.
    pub series: &'a [(String, Vec<(f64, f64)>)],
    /// Logarithmic x axis (numeric x only); used for CDFs, so the y axis spans 0 … 1.
    pub log_x: bool,
    /// Reference line.
    pub baseline: Option<f64>,
}

/// Renders lines to an SVG string.
pub fn lines(l: &Lines) -> String {
    if l.series
        .iter()
        .all(|(_, p)| p.iter().all(|(x, y)| !x.is_finite() || !y.is_finite()))
    {
        return error_svg("no data: the points of this figure have no results yet");
    }
    let mut svg = String::new();
    if let Err(e) = draw_lines(&mut svg, l) {
        return error_svg(&e.to_string());
    }
    svg
}

fn draw_lines(svg: &mut String, l: &Lines) -> DrawResult {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let pts = || {
        l.series
            .iter()
            .flat_map(|(_, p)| p.iter())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    };
    let (mut x0, mut x1) = pts().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let y1 = pts().fold(l.baseline.unwrap_or(0.0), |a, p| a.max(p.1));
    if !l.categories.is_empty() {
        (x0, x1) = (-0.5, l.categories.len() as f64 - 0.5);
    }
    if x0 >= x1 {
        (x0, x1) = (x0.min(0.0), x0.max(0.0) + 1.0);
    }
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(l.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70);
    let y_range = if l.log_x {
        0.0..1.02
    } else {
        0.0..if y1 > 0.0 { y1 * 1.2 } else { 1.0 }
    };
    if l.log_x {
        let mut chart = builder.build_cartesian_2d((x0.max(1e-3)..x1).log_scale(), y_range)?;
        chart
            .configure_mesh()
            .x_desc(l.x_label)
            .y_desc(l.y_label)
            .draw()?;
        draw_line_series(&mut chart, l)?;
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()?;
    } else {
        let mut chart = builder.build_cartesian_2d(x0..x1, y_range)?;
        let cats = l.categories.to_vec();
        let label = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 0.01 && i >= 0.0 {
                cats.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(l.x_label).y_desc(l.y_label);
        if !cats.is_empty() {
            mesh.x_labels(cats.len() * 4).x_label_formatter(&label);
        }
        mesh.draw()?;
        draw_line_series(&mut chart, l)?;
        if let Some(y) = l.baseline {
            chart.draw_series(DashedLineSeries::new(
                vec![(x0, y), (x1, y)],
                6,
                4,
                BLACK.stroke_width(1),
            ))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

fn draw_line_series<'a, X, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    l: &Lines,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (i, (name, points)) in l.series.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)).point_size(3))?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
    }
    Ok(())
}

fn error_svg(msg: &str) -> String {
    let msg: String = msg
        .chars()
        .filter(|c| !matches!(c, '<' | '>' | '&'))
        .collect();
    format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\"><text x=\"8\" y=\"24\">figure failed: {msg}</text></svg>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_figures_render_without_hanging() {
        let none: Vec<(String, Vec<(f64, f64)>)> = vec![("A".into(), vec![])];
        let svg = lines(&Lines {
            title: "t",
            x_label: "x",
            y_label: "y",
            categories: &[],
            series: &none,
            log_x: true,
            baseline: None,
        });
        assert!(svg.contains("no data"));
        let g = vec!["w".to_string()];
        let svg = bars(&Bars {
            title: "t",
            y_label: "y",
            groups: &g,
            series: &g,
            values: &[vec![None]],
            paper: &[vec![None]],
            baseline: Some(1.0),
        });
        assert!(svg.starts_with("<svg"));
    }

    #[test]
    fn bars_and_lines_render_self_contained_svg() {
        let groups = vec!["hm_0".to_string(), "fin1".to_string()];
        let series = vec!["FIFO".to_string(), "RPS".to_string()];
        let values = vec![vec![Some(1.0), Some(0.6)], vec![Some(1.0), None]];
        let paper = vec![vec![None, Some(0.55)], vec![None, None]];
        let svg = bars(&Bars {
            title: "t",
            y_label: "norm",
            groups: &groups,
            series: &series,
            values: &values,
            paper: &paper,
            baseline: Some(1.0),
        });
        assert!(
            svg.starts_with("<svg")
                && svg.contains("hm_0")
                && svg.contains("RPS")
                && svg.contains("paper"),
            "{svg}"
        );
        assert!(!svg.contains("href"));
        let s = vec![(
            "FIFO".to_string(),
            vec![(10.0, 0.1), (100.0, 0.9), (1000.0, 1.0)],
        )];
        let svg = lines(&Lines {
            title: "cdf",
            x_label: "us",
            y_label: "F",
            categories: &[],
            series: &s,
            log_x: true,
            baseline: None,
        });
        assert!(
            svg.contains("FIFO") && svg.contains("<polyline") || svg.contains("<path"),
            "{svg}"
        );
    }
}
