//! Grouped bars, split into panels (small multiples on one shared y scale) when there are more
//! groups than fit one readable row.

use super::{
    color, error_svg, head, tick, Area, DrawResult, Key, FONT, PANEL_HEIGHT, TITLE_HEIGHT, WIDTH,
    Y_AXIS,
};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Grouped bars: `values[group][series]`; `paper[group][series]` drawn as black triangles;
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
    /// 95 % confidence intervals `(low, high)` over seeds, drawn as whiskers on the bars
    /// (`errors[group][series]`; empty: none).
    pub errors: &'a [Vec<Option<(f64, f64)>>],
}

/// Width of the plotting area of a panel, px.
const PLOT_WIDTH: u32 = WIDTH - Y_AXIS - 28;

impl Bars<'_> {
    /// Groups per panel: as many as fit with every bar at least 9 px wide and every group
    /// label readable, spread evenly over the panels.
    fn per_panel(&self) -> usize {
        let n = self.groups.len().max(1);
        let label = self
            .groups
            .iter()
            .map(|g| super::text_width(g, FONT - 1))
            .max()
            .unwrap_or(0);
        let group = (9 * (self.series.len() as u32 + 1)).max(label + 10);
        let fit = (PLOT_WIDTH / group).max(1) as usize;
        let panels = n.div_ceil(fit);
        n.div_ceil(panels)
    }

    fn entries(&self) -> Vec<(Key, String)> {
        let mut e: Vec<(Key, String)> = self
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| (Key::Swatch(color(i)), s.clone()))
            .collect();
        if self.paper.iter().flatten().any(Option::is_some) {
            e.push((Key::Paper, "paper".to_string()));
        }
        e
    }

    /// The y range every panel shares: zero, the data, the paper's values and the baseline,
    /// with a little room. A few outliers far above the rest (more than 5× the 85th
    /// percentile) would flatten every other bar: the axis then stops at 2.5× that
    /// percentile and the cut bars carry their value.
    fn y_range(&self) -> std::ops::Range<f64> {
        let mut all: Vec<f64> = self
            .values
            .iter()
            .chain(self.paper)
            .flatten()
            .filter_map(|v| *v)
            .chain(
                self.errors
                    .iter()
                    .flatten()
                    .flatten()
                    .flat_map(|&(lo, hi)| [lo, hi]),
            )
            .filter(|v| v.is_finite())
            .chain(self.baseline)
            .collect();
        let (lo, mut hi) = all
            .iter()
            .fold((0.0f64, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
        all.sort_by(f64::total_cmp);
        if all.len() >= 5 {
            let q = all[(all.len() - 1) * 85 / 100];
            if q > 0.0 && hi > 5.0 * q {
                hi = 2.5 * q;
            }
        }
        if hi - lo <= 0.0 {
            return 0.0..1.0;
        }
        let pad = (hi - lo) * 0.06;
        (if lo < 0.0 { lo - pad } else { 0.0 })..(if hi > 0.0 { hi + pad } else { 0.0 })
    }
}

/// `v` to three significant digits (`8.53`, `10217`), for the value on a cut bar.
fn three_digits(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    }
}

/// Renders grouped bars to an SVG string.
pub fn bars(b: &Bars) -> String {
    let entries = b.entries();
    let per = b.per_panel();
    let panels = b.groups.len().max(1).div_ceil(per);
    let height = TITLE_HEIGHT + super::legend_height(&entries) + panels as u32 * PANEL_HEIGHT;
    let mut svg = String::new();
    let drawn = (|| -> DrawResult {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let plot = head(&root, b.title, &entries)?;
        let y = b.y_range();
        for (p, area) in plot.split_evenly((panels, 1)).iter().enumerate() {
            let first = p * per;
            let last = (first + per).min(b.groups.len());
            draw_panel(&root, area, b, first..last, per, y.clone())?;
        }
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => error_svg(&e.to_string()),
    }
}

fn draw_panel(
    root: &Area,
    area: &Area,
    b: &Bars,
    groups: std::ops::Range<usize>,
    slots: usize,
    y: std::ops::Range<f64>,
) -> DrawResult {
    let (desc, desc_size) = super::fit(b.y_label, FONT + 1, super::Y_DESC_ROOM);
    let mut chart = ChartBuilder::on(area)
        .margin_top(6)
        .margin_right(20)
        .x_label_area_size(28)
        .y_label_area_size(Y_AXIS)
        .build_cartesian_2d(0.0..slots as f64, y.clone())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(6)
        .y_label_formatter(&tick)
        .y_desc(desc)
        .light_line_style(WHITE)
        .bold_line_style(BLACK.mix(0.1))
        .label_style(("sans-serif", FONT))
        .axis_desc_style(("sans-serif", desc_size))
        .draw()?;
    let label_style = ("sans-serif", FONT - 1)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (slot, g) in groups.clone().enumerate() {
        let (px, py) = chart.backend_coord(&(slot as f64 + 0.5, y.start));
        root.draw(&Text::new(
            b.groups[g].clone(),
            (px, py + 6),
            label_style.clone(),
        ))?;
    }
    let k = b.series.len().max(1) as f64;
    let width = 0.8 / k;
    let x_of = |slot: usize, s: usize| slot as f64 + 0.1 + s as f64 * width;
    for s in 0..b.series.len() {
        let c = color(s);
        let rects = groups.clone().enumerate().filter_map(|(slot, g)| {
            let v = b.values[g].get(s).copied().flatten()?;
            let x0 = x_of(slot, s);
            Some(Rectangle::new(
                [(x0, 0.0), (x0 + width * 0.9, v.min(y.end))],
                c.filled(),
            ))
        });
        chart.draw_series(rects)?;
    }
    // Bars cut by the axis: their value above the cut, on a white ground.
    let cut_style = ("sans-serif", FONT - 1)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (slot, g) in groups.clone().enumerate() {
        // Labels of several cut bars in one group step down so they do not overlap.
        let mut py = 0;
        for s in 0..b.series.len() {
            let Some(v) = b.values[g].get(s).copied().flatten().filter(|v| *v > y.end) else {
                continue;
            };
            let (px, top) = chart.backend_coord(&(x_of(slot, s) + width * 0.45, y.end));
            py = if py == 0 { top } else { py + 16 };
            let text = format!("{} ↑", three_digits(v));
            let half = super::text_width(&text, FONT - 1) as i32 / 2 + 2;
            root.draw(&Rectangle::new(
                [(px - half, py + 2), (px + half, py + 17)],
                WHITE.filled(),
            ))?;
            root.draw(&Text::new(text, (px, py + 3), cut_style.clone()))?;
        }
    }
    // Confidence intervals over seeds: a whisker with caps on each bar that has one.
    let whiskers = groups.clone().enumerate().flat_map(|(slot, g)| {
        b.errors
            .get(g)
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(move |(s, e)| {
                let (lo, hi) = (*e)?;
                let x = x_of(slot, s) + width * 0.45;
                let cap = width * 0.2;
                let (lo, hi) = (lo.max(y.start), hi.min(y.end));
                Some([
                    PathElement::new(vec![(x, lo), (x, hi)], BLACK.stroke_width(1)),
                    PathElement::new(vec![(x - cap, lo), (x + cap, lo)], BLACK.stroke_width(1)),
                    PathElement::new(vec![(x - cap, hi), (x + cap, hi)], BLACK.stroke_width(1)),
                ])
            })
            .flatten()
    });
    chart.draw_series(whiskers)?;
    let marks = groups.clone().enumerate().flat_map(|(slot, g)| {
        b.paper[g].iter().enumerate().filter_map(move |(s, v)| {
            v.map(|v| TriangleMarker::new((x_of(slot, s) + width * 0.45, v), 6, BLACK.filled()))
        })
    });
    chart.draw_series(marks)?;
    super::reference_lines(&mut chart, (0.0, slots as f64), b.baseline, y.start)
}

#[cfg(test)]
mod tests {
    use super::super::svg_width;
    use super::*;

    fn names(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    /// A figure titled "t" of `values` and `paper` over `groups` × `series`.
    fn figure<'a>(
        groups: &'a [String],
        series: &'a [String],
        values: &'a [Vec<Option<f64>>],
        paper: &'a [Vec<Option<f64>>],
        baseline: Option<f64>,
    ) -> Bars<'a> {
        Bars {
            title: "t",
            y_label: "y",
            groups,
            series,
            values,
            paper,
            errors: &[],
            baseline,
        }
    }

    #[test]
    fn many_groups_become_panels_of_the_fixed_width() {
        let (groups, series) = (names("workload ", 28), names("v", 6));
        let values = vec![vec![Some(1.0); 6]; 28];
        let paper = vec![vec![None; 6]; 28];
        let b = figure(&groups, &series, &values, &paper, Some(1.0));
        let per = b.per_panel();
        assert!(per < 28 && 28usize.div_ceil(per) >= 2, "{per}");
        let svg = bars(&b);
        assert_eq!(svg_width(&svg), WIDTH);
        for g in &groups {
            assert!(svg.contains(g.as_str()), "{g}");
        }
        // A few groups fit one panel.
        let b = Bars {
            groups: &groups[..4],
            values: &values[..4],
            paper: &paper[..4],
            ..b
        };
        assert_eq!(b.per_panel(), 4);
    }

    #[test]
    fn negative_values_extend_the_axis_below_zero() {
        let (groups, series) = (names("w", 2), names("v", 2));
        let values = vec![vec![Some(-20.0), Some(40.0)], vec![Some(5.0), None]];
        let paper = vec![vec![None, Some(50.0)], vec![None, None]];
        let b = figure(&groups, &series, &values, &paper, None);
        let y = b.y_range();
        assert!(y.start < -20.0 && y.end > 50.0 && y.end < 60.0, "{y:?}");
        let svg = bars(&b);
        assert!(svg.contains("paper") && svg.contains("-20"), "{svg}");
    }

    #[test]
    fn intervals_are_drawn_as_whiskers_and_widen_the_axis() {
        let (groups, series) = (names("w", 2), names("v", 2));
        let values = vec![vec![Some(1.0), Some(2.0)], vec![Some(1.5), None]];
        let paper = vec![vec![None, None]; 2];
        let plain = figure(&groups, &series, &values, &paper, None);
        let errors = vec![vec![Some((0.8, 1.2)), Some((1.5, 3.0))], vec![None, None]];
        let with = Bars {
            errors: &errors,
            ..figure(&groups, &series, &values, &paper, None)
        };
        assert!(with.y_range().end > 3.0 && plain.y_range().end < 3.0);
        // Vertical strokes inside the plot (the y axis is at its left edge): one per whisker.
        let verticals = |svg: &str| {
            svg.lines()
                .filter_map(|l| l.split("points=\"").nth(1)?.split('"').next())
                .filter(|p| {
                    let xs: Vec<&str> = p
                        .split_whitespace()
                        .map(|xy| xy.split(',').next().unwrap())
                        .collect();
                    xs.len() == 2 && xs[0] == xs[1] && xs[0].parse::<u32>().unwrap() > 100
                })
                .count()
        };
        assert_eq!(verticals(&bars(&with)), 2);
        assert_eq!(verticals(&bars(&plain)), 0);
    }

    #[test]
    fn a_far_outlier_is_cut_and_labelled_instead_of_flattening_the_rest() {
        let (groups, series) = (names("w", 4), names("v", 2));
        let mut values = vec![vec![Some(1.0), Some(0.8)]; 4];
        values[2][1] = Some(10235.0);
        let paper = vec![vec![None, None]; 4];
        let b = figure(&groups, &series, &values, &paper, Some(1.0));
        let y = b.y_range();
        assert!(y.end > 2.5 && y.end < 3.0, "{y:?}");
        assert!(bars(&b).contains("10235 ↑"));
        assert_eq!(
            (three_digits(8.53319), three_digits(10216.7)),
            ("8.53".into(), "10217".into())
        );
    }
}
