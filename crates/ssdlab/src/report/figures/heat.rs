//! Heat maps: a metric over two grid keys, one cell per pair of values, each cell coloured by
//! its value (blue above zero, red below, white at zero; grey without a value) and labelled
//! with it; cells marked as near a paper's value get a thick black frame.

use super::{error_svg, fit, head, tick, DrawResult, Key, FONT, TITLE_HEIGHT, WIDTH, Y_AXIS};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A heat map over categorical x and y.
pub struct Heat<'a> {
    /// Title.
    pub title: &'a str,
    /// X-axis label.
    pub x_label: &'a str,
    /// Y-axis label.
    pub y_label: &'a str,
    /// X tick labels, left to right.
    pub xs: &'a [String],
    /// Y tick labels, bottom to top.
    pub ys: &'a [String],
    /// Values, `cells[y][x]`.
    pub cells: &'a [Vec<Option<f64>>],
    /// Cells to frame, `marked[y][x]` (the paper's value falls there).
    pub marked: &'a [Vec<bool>],
    /// What a frame means (a legend entry), when any cell is marked.
    pub mark_label: &'a str,
}

/// Height of one cell row, px.
const ROW: u32 = 34;
/// Height of the x tick and axis label area, px.
const X_AXIS: u32 = 56;

/// The fill of a cell: blue for values above zero, red below, by the share of `scale` (the
/// largest magnitude in the map).
fn fill(v: Option<f64>, scale: f64) -> RGBColor {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return RGBColor(220, 220, 220);
    };
    let t = if scale > 0.0 {
        (v.abs() / scale).min(1.0)
    } else {
        0.0
    };
    let mix = |full: u8| (255.0 - t * (255.0 - f64::from(full))).round() as u8;
    if v >= 0.0 {
        RGBColor(mix(33), mix(102), mix(172))
    } else {
        RGBColor(mix(178), mix(24), mix(43))
    }
}

/// Renders a heat map to an SVG string.
pub fn heat(h: &Heat) -> String {
    let values: Vec<f64> = h
        .cells
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if values.is_empty() || h.xs.is_empty() || h.ys.is_empty() {
        return error_svg("no data: the points of this figure have no results yet");
    }
    let scale = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let any_mark = h.marked.iter().flatten().any(|m| *m);
    let entries: Vec<(Key, String)> = if any_mark {
        vec![(Key::Frame, h.mark_label.to_string())]
    } else {
        vec![]
    };
    let rows = h.ys.len() as u32;
    let height = TITLE_HEIGHT + super::legend_height(&entries) + rows * ROW + X_AXIS + 16;
    let mut svg = String::new();
    let drawn = (|| -> DrawResult {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let plot = head(&root, h.title, &entries)?;
        let left = Y_AXIS as i32 + 40;
        let right = WIDTH as i32 - 16;
        let cell_w = (right - left) / h.xs.len() as i32;
        let top = 6;
        let centre = Pos::new(HPos::Center, VPos::Center);
        for (yi, row) in h.cells.iter().enumerate() {
            // Row 0 is the lowest y value: drawn at the bottom.
            let y0 = top + (rows as i32 - 1 - yi as i32) * ROW as i32;
            for (xi, v) in row.iter().enumerate() {
                let x0 = left + xi as i32 * cell_w;
                let c = fill(*v, scale);
                plot.draw(&Rectangle::new(
                    [(x0, y0), (x0 + cell_w - 2, y0 + ROW as i32 - 2)],
                    c.filled(),
                ))?;
                if h.marked
                    .get(yi)
                    .and_then(|r| r.get(xi))
                    .copied()
                    .unwrap_or(false)
                {
                    plot.draw(&Rectangle::new(
                        [(x0 + 1, y0 + 1), (x0 + cell_w - 3, y0 + ROW as i32 - 3)],
                        BLACK.stroke_width(3),
                    ))?;
                }
                let dark = v.is_some_and(|v| scale > 0.0 && v.abs() / scale > 0.55);
                let text = v.map_or("–".to_string(), |v| tick(&((v * 100.0).round() / 100.0)));
                let (text, size) = fit(&text, FONT, cell_w.max(12) as u32 - 6);
                plot.draw(&Text::new(
                    text,
                    (x0 + cell_w / 2, y0 + ROW as i32 / 2),
                    ("sans-serif", size)
                        .into_font()
                        .color(if dark { &WHITE } else { &BLACK })
                        .pos(centre),
                ))?;
            }
            let (label, size) = fit(&h.ys[yi], FONT, Y_AXIS + 30);
            plot.draw(&Text::new(
                label,
                (left - 6, y0 + ROW as i32 / 2),
                ("sans-serif", size)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            ))?;
        }
        let bottom = top + rows as i32 * ROW as i32;
        for (xi, x) in h.xs.iter().enumerate() {
            let (label, size) = fit(x, FONT, cell_w.max(12) as u32 - 4);
            plot.draw(&Text::new(
                label,
                (left + xi as i32 * cell_w + cell_w / 2, bottom + 12),
                ("sans-serif", size).into_font().color(&BLACK).pos(centre),
            ))?;
        }
        let (x_label, size) = fit(h.x_label, FONT, (right - left) as u32);
        plot.draw(&Text::new(
            x_label,
            ((left + right) / 2, bottom + 38),
            ("sans-serif", size).into_font().color(&BLACK).pos(centre),
        ))?;
        let (y_label, size) = fit(&format!("↑ {}", h.y_label), FONT, Y_AXIS + 30);
        plot.draw(&Text::new(
            y_label,
            (4, bottom + 38),
            ("sans-serif", size)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => error_svg(&format!("figure could not be drawn: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heat_map_labels_every_cell_and_keeps_its_text_inside() {
        // The y-axis label is drawn with an arrow: "↑ time_scale".
        let xs: Vec<String> = ["0.176", "0.6", "0.729", "0.8"].map(String::from).to_vec();
        let ys: Vec<String> = ["0.01", "0.03", "0.1"].map(String::from).to_vec();
        let cells = vec![
            vec![Some(-3.2), Some(0.0), Some(12.5), None],
            vec![Some(1.0), Some(2.0), Some(3.0), Some(4.0)],
            vec![Some(21.8), Some(5.0), Some(-0.4), Some(7.0)],
        ];
        let mut marked = vec![vec![false; 4]; 3];
        marked[2][0] = true;
        let svg = heat(&Heat {
            title: "HotR's gain (%)",
            x_label: "write_ratio",
            y_label: "time_scale",
            xs: &xs,
            ys: &ys,
            cells: &cells,
            marked: &marked,
            mark_label: "within 10 % of the paper's 21.8",
        });
        for label in [
            "-3.2",
            "12.5",
            "21.8",
            "–",
            "0.729",
            "↑ time_scale",
            "write_ratio",
        ] {
            assert!(svg.contains(&format!(">\n{label}\n<")), "{label} missing");
        }
        assert!(svg.contains("paper"), "the frame's legend entry");
        let problems = super::super::text_problems(&svg);
        assert!(problems.is_empty(), "{problems:?}");
    }
}
