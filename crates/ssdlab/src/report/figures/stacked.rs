//! Horizontal stacked bars: one bar per row (a variant), split into parts (causes), with the
//! rows' labels at the left and the parts in the legend.

use super::{color, error_svg, head, tick, DrawResult, Key, FONT, TITLE_HEIGHT, WIDTH};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Stacked bars: `values[row][part]`, each part's share of its row drawn left to right.
pub struct Stacked<'a> {
    /// Title.
    pub title: &'a str,
    /// X-axis label (with unit).
    pub x_label: &'a str,
    /// Row labels.
    pub rows: &'a [String],
    /// Part names (legend), in stacking order.
    pub parts: &'a [String],
    /// Values (non-negative).
    pub values: &'a [Vec<f64>],
}

/// Height of one bar's row, px.
const ROW: u32 = 26;

/// Renders stacked bars to an SVG string.
pub fn stacked(s: &Stacked) -> String {
    let entries: Vec<(Key, String)> = s
        .parts
        .iter()
        .enumerate()
        .map(|(i, p)| (Key::Swatch(color(i)), p.clone()))
        .collect();
    let label_width = s
        .rows
        .iter()
        .map(|r| super::text_width(r, FONT))
        .max()
        .unwrap_or(0)
        .clamp(40, WIDTH / 3)
        + 14;
    let plot_height = s.rows.len().max(1) as u32 * ROW + 56;
    let height = TITLE_HEIGHT + super::legend_height(&entries) + plot_height;
    // A few rows far longer than the rest (more than 5x the 85th percentile of the totals)
    // would flatten every other bar: the axis then stops at 2.5x that percentile and the cut
    // rows carry their total.
    let mut totals: Vec<f64> = s.values.iter().map(|r| r.iter().sum::<f64>()).collect();
    let max = totals.iter().copied().fold(0.0f64, f64::max);
    totals.sort_by(f64::total_cmp);
    let q = totals
        .get(totals.len().saturating_sub(1) * 85 / 100)
        .copied()
        .unwrap_or(0.0);
    let cut = (totals.len() >= 5 && q > 0.0 && max > 5.0 * q).then_some(2.5 * q);
    let x_end = match cut {
        Some(c) => c,
        None if max > 0.0 => max * 1.06,
        None => 1.0,
    };
    let mut svg = String::new();
    let drawn = (|| -> DrawResult {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let plot = head(&root, s.title, &entries)?;
        let n = s.rows.len().max(1) as f64;
        let (desc, desc_size) = super::fit(s.x_label, FONT + 1, WIDTH - label_width - 40);
        let mut chart = ChartBuilder::on(&plot)
            .margin_top(6)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(label_width)
            .build_cartesian_2d(0.0..x_end, 0.0..n)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(6)
            .x_label_formatter(&tick)
            .x_desc(desc)
            .light_line_style(WHITE)
            .bold_line_style(BLACK.mix(0.1))
            .label_style(("sans-serif", FONT))
            .axis_desc_style(("sans-serif", desc_size))
            .draw()?;
        let label_style = ("sans-serif", FONT)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        for (r, name) in s.rows.iter().enumerate() {
            // Row 0 at the top.
            let y = n - r as f64 - 0.5;
            let (px, py) = chart.backend_coord(&(0.0, y));
            root.draw(&Text::new(name.clone(), (px - 6, py), label_style.clone()))?;
            let mut x = 0.0;
            let bars = s.values[r].iter().enumerate().map(|(p, v)| {
                let x0 = x;
                x += v.max(0.0);
                Rectangle::new(
                    [(x0.min(x_end), y - 0.35), (x.min(x_end), y + 0.35)],
                    color(p).filled(),
                )
            });
            chart.draw_series(bars.collect::<Vec<_>>())?;
            if x > x_end {
                let text = format!("{} →", tick(&x));
                let half = super::text_width(&text, FONT - 1) as i32;
                let (px, py) = chart.backend_coord(&(x_end, y));
                root.draw(&Rectangle::new(
                    [(px - half - 6, py - 9), (px - 2, py + 9)],
                    WHITE.filled(),
                ))?;
                root.draw(&Text::new(
                    text,
                    (px - 4, py),
                    ("sans-serif", FONT - 1)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Right, VPos::Center)),
                ))?;
            }
        }
        root.present()?;
        Ok(())
    })();
    match drawn {
        Ok(()) => svg,
        Err(e) => error_svg(&e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{svg_width, text_problems};
    use super::*;

    #[test]
    fn rows_stack_their_parts_and_keep_text_inside() {
        let rows = vec!["baseline".to_string(), "Greedy+separation".to_string()];
        let parts: Vec<String> = ["service", "behind reads", "behind GC"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let values = vec![vec![80.0, 20.0, 100.0], vec![80.0, 10.0, 0.0]];
        let svg = stacked(&Stacked {
            title: "where the time went",
            x_label: "mean read page (us)",
            rows: &rows,
            parts: &parts,
            values: &values,
        });
        assert_eq!(svg_width(&svg), WIDTH);
        assert!(text_problems(&svg).is_empty(), "{:?}", text_problems(&svg));
        for label in ["baseline", "Greedy+separation", "behind GC"] {
            assert!(svg.contains(label), "{label}");
        }
        // The GC part is drawn in its colour twice: its legend key and the first row's bar.
        let c = color(2);
        let hex = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        assert!(svg.matches(&hex).count() >= 2, "{hex}");
    }
}
