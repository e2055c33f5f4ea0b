//! Lines and points: CDFs (whole distribution beside a tail view), percentile curves, and
//! parameter sweeps (joined when the parameter is ordered, bare points when it is a category).

use super::{
    color, error_svg, head, tick, Area, DrawResult, Key, FONT, PANEL_HEIGHT, TITLE_HEIGHT, WIDTH,
    Y_AXIS,
};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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
    /// A CDF: y spans 0 … 1 over a logarithmic x axis, drawn whole and, beside it, its tail
    /// (0.9 … 1) where the curves of different schemes part.
    pub cdf: bool,
    /// Join the points with lines; `false` for categories with no order between them.
    pub join: bool,
    /// Reference line.
    pub baseline: Option<f64>,
}

/// Fraction where the tail view of a CDF starts.
const TAIL: f64 = 0.9;

impl Lines<'_> {
    fn points(&self) -> impl Iterator<Item = &(f64, f64)> {
        self.series
            .iter()
            .flat_map(|(_, p)| p.iter())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }

    fn entries(&self) -> Vec<(Key, String)> {
        self.series
            .iter()
            .enumerate()
            .map(|(i, (name, _))| {
                let c = color(i);
                (
                    if self.join { Key::Line(c) } else { Key::Dot(c) },
                    name.clone(),
                )
            })
            .collect()
    }
}

/// Renders lines to an SVG string.
pub fn lines(l: &Lines) -> String {
    if l.points().next().is_none() {
        return error_svg("no data: the points of this figure have no results yet");
    }
    let entries = l.entries();
    let height = TITLE_HEIGHT + super::legend_height(&entries) + PANEL_HEIGHT + 20;
    let mut svg = String::new();
    let drawn = (|| -> DrawResult {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let plot = head(&root, l.title, &entries)?;
        if l.cdf {
            let (left, right) = plot.split_horizontally(WIDTH / 2);
            let (x0, x1) = l
                .points()
                .filter(|p| p.0 > 0.0)
                .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
            let x = (x0 * 0.9).max(1e-3)..(x1 * 1.1).max(x0 * 1.2);
            let (full, tail) = ("cumulative fraction", "tail: cumulative fraction ≥ 0.9");
            cdf_panel(&left, l, x.clone().log_scale(), 0.0..1.02, full)?;
            cdf_panel(&right, l, x.log_scale(), TAIL..1.002, tail)?;
        } else {
            xy_panel(&root, &plot, l)?;
        }
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => error_svg(&e.to_string()),
    }
}

fn mesh_style<'a, 'b, X, Y>(
    chart: &'b mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
    desc_size: u32,
) -> plotters::chart::MeshStyle<'a, 'b, X, Y, SVGBackend<'a>>
where
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged + ValueFormatter<Y::ValueType>,
{
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.1))
        .label_style(("sans-serif", FONT))
        .axis_desc_style(("sans-serif", desc_size));
    mesh
}

fn cdf_panel<X>(area: &Area, l: &Lines, x: X, y: std::ops::Range<f64>, y_desc: &str) -> DrawResult
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin_top(6)
        .margin_right(20)
        .x_label_area_size(44)
        .y_label_area_size(Y_AXIS - 10)
        .build_cartesian_2d(x, y.clone())?;
    let (desc, desc_size) = super::fit(y_desc, FONT + 1, super::Y_DESC_ROOM);
    mesh_style(&mut chart, desc_size)
        .x_labels(8)
        .y_labels(6)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .x_desc(l.x_label)
        .y_desc(desc)
        .draw()?;
    for (i, (_, points)) in l.series.iter().enumerate() {
        // The tail view keeps the segment that enters it from below.
        let from = points.iter().rposition(|p| p.1 < y.start).unwrap_or(0);
        let pts = points[from..].iter().map(|&(x, f)| (x, f.max(y.start)));
        chart.draw_series(LineSeries::new(pts, color(i).stroke_width(2)))?;
    }
    Ok(())
}

/// One panel over the whole width: numeric or categorical x.
fn xy_panel(root: &Area, area: &Area, l: &Lines) -> DrawResult {
    let (mut x0, mut x1) = l
        .points()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let cats = !l.categories.is_empty();
    if cats {
        (x0, x1) = (-0.5, l.categories.len() as f64 - 0.5);
    }
    if x0 >= x1 {
        (x0, x1) = (x0.min(0.0), x0.max(0.0) + 1.0);
    }
    let (lo, hi) = l
        .points()
        .map(|p| p.1)
        .chain(l.baseline)
        .fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let pad = if hi > lo { (hi - lo) * 0.08 } else { 1.0 };
    let y = (if lo < 0.0 { lo - pad } else { 0.0 })..(hi + pad);
    let mut chart = ChartBuilder::on(area)
        .margin_top(6)
        .margin_right(24)
        .x_label_area_size(44)
        .y_label_area_size(Y_AXIS)
        .build_cartesian_2d(x0..x1, y.clone())?;
    let (desc, desc_size) = super::fit(l.y_label, FONT + 1, super::Y_DESC_ROOM);
    let mut mesh = mesh_style(&mut chart, desc_size);
    mesh.y_labels(6)
        .y_label_formatter(&tick)
        .x_label_formatter(&tick)
        .x_desc(l.x_label)
        .y_desc(desc);
    if cats {
        mesh.disable_x_mesh().x_labels(0);
    }
    mesh.draw()?;
    if cats {
        let style = ("sans-serif", FONT)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, c) in l.categories.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64, y.start));
            root.draw(&Text::new(c.clone(), (px, py + 6), style.clone()))?;
        }
    }
    let k = l.series.len() as f64;
    for (i, (_, points)) in l.series.iter().enumerate() {
        let c = color(i);
        if l.join {
            chart.draw_series(
                LineSeries::new(points.iter().copied(), c.stroke_width(2)).point_size(3),
            )?;
        } else {
            // Side by side within a category, so equal values do not hide each other.
            let dx = if cats {
                (i as f64 - (k - 1.0) / 2.0) * 0.06
            } else {
                0.0
            };
            chart.draw_series(
                points
                    .iter()
                    .map(|&(x, v)| Circle::new((x + dx, v), 5, c.filled())),
            )?;
        }
    }
    super::reference_lines(&mut chart, (x0, x1), l.baseline, y.start)
}

#[cfg(test)]
mod tests {
    use super::super::svg_width;
    use super::*;

    fn lines_of(series: &[(String, Vec<(f64, f64)>)], cdf: bool, join: bool) -> String {
        let cats: Vec<String> = if cdf {
            vec![]
        } else {
            vec!["slc".into(), "mlc".into()]
        };
        lines(&Lines {
            title: "t",
            x_label: "x",
            y_label: "y",
            categories: &cats,
            series,
            cdf,
            join,
            baseline: None,
        })
    }

    #[test]
    fn empty_figures_say_so() {
        assert!(lines_of(&[("A".into(), vec![])], true, true).contains("no data"));
    }

    #[test]
    fn a_cdf_has_a_tail_view_and_the_fixed_width() {
        let s = vec![(
            "FIFO".to_string(),
            vec![(10.0, 0.1), (100.0, 0.85), (500.0, 0.95), (1000.0, 1.0)],
        )];
        let svg = lines_of(&s, true, true);
        assert_eq!(svg_width(&svg), WIDTH);
        assert!(svg.contains("tail: cumulative fraction"), "{svg}");
        assert!(svg.contains("FIFO") && svg.contains("<polyline"), "{svg}");
    }

    #[test]
    fn categories_are_points_without_joining_lines() {
        let s = vec![("A".to_string(), vec![(0.0, 1.0), (1.0, 2.0)])];
        let points = lines_of(&s, false, false);
        let joined = lines_of(&s, false, true);
        let count = |svg: &str, what: &str| svg.matches(what).count();
        assert!(count(&points, "<circle") >= 2, "{points}");
        // Joining the two points adds one line to the plot and one to the legend key (axes
        // and grid are drawn alike).
        assert_eq!(count(&joined, "<polyline"), count(&points, "<polyline") + 2);
        assert!(points.contains("\nslc\n") && points.contains("\nmlc\n"));
    }
}
