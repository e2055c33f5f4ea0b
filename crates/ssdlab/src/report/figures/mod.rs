//! SVG figures drawn with plotters' SVG backend (no system fonts needed): grouped bars split
//! into small multiples, CDFs with a tail view, percentile lines, parameter sweeps and heat
//! maps.
//!
//! Every figure is [`WIDTH`] px wide so a report page shows it whole; the legend sits in a row
//! under the title, never over the data; ticks print without spurious decimals.

mod bars;
mod bounds;
mod heat;
mod lines;
mod stacked;

pub use bars::{bars, Bars};
pub use bounds::text_problems;
pub use heat::{heat, Heat};
pub use lines::{lines, Lines};
pub use stacked::{stacked, Stacked};

use plotters::coord::Shift;
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

/// Width of every figure, px.
pub const WIDTH: u32 = 960;
/// Height of one panel's plot (axes included), px.
const PANEL_HEIGHT: u32 = 330;
/// Height of the title row, px.
const TITLE_HEIGHT: u32 = 34;
/// Font size of tick labels and legend entries (plotters renders a size `s` as about
/// 0.8 `s` px).
const FONT: u32 = 15;
/// Length a y-axis description may take along its panel, px: the panel less its margins and
/// x-axis label area.
const Y_DESC_ROOM: u32 = PANEL_HEIGHT - 60;
/// Width of the y-axis label area, px.
const Y_AXIS: u32 = 78;

/// Colour of the i-th series.
fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Approximate width of `s` in ems of a sans-serif font: per character, wide for capitals,
/// narrow for `i`, `l`, punctuation.
fn ems(s: &str) -> f64 {
    s.chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.25,
            'f' | 't' | 'r' | '-' | ' ' | '(' | ')' | '[' | ']' | '/' => 0.35,
            'm' | 'w' | 'M' | 'W' | '%' => 0.85,
            c if c.is_ascii_uppercase() => 0.68,
            _ => 0.56,
        })
        .sum()
}

/// Approximate width of `s` at font size `size`, px (plotters renders a size as 0.8 of it).
fn text_width(s: &str, size: u32) -> u32 {
    (ems(s) * f64::from(size) * 0.8).ceil() as u32
}

/// `text` at the largest font size from `size` down to 10 whose width fits `room` px; at 10,
/// words are dropped from the end (an ellipsis marks it) until it fits.
fn fit(text: &str, size: u32, room: u32) -> (String, u32) {
    if let Some(s) = (10..=size).rev().find(|&s| text_width(text, s) <= room) {
        return (text.to_string(), s);
    }
    let mut words: Vec<&str> = text.split(' ').collect();
    while words.len() > 1 {
        words.pop();
        let short = format!("{} …", words.join(" "));
        if text_width(&short, 10) <= room {
            return (short, 10);
        }
    }
    (text.to_string(), 10)
}

/// A tick label: at most six significant digits, no trailing zeros (`50000`, `0.3`, `1.25`);
/// from a million up, three significant digits and a power of ten (`1.5e8`), so the label
/// stays narrower than the axis area.
fn tick(v: &f64) -> String {
    if *v == 0.0 || !v.is_finite() {
        return "0".to_string();
    }
    if v.abs() >= 1e6 {
        let s = format!("{v:.2e}");
        let (mantissa, exp) = s.split_once('e').expect("exponent form");
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        return format!("{mantissa}e{exp}");
    }
    let digits = (5 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.digits$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// A legend entry's key.
#[derive(Clone, Copy)]
enum Key {
    /// A filled square (bars).
    Swatch(RGBColor),
    /// A line with a dot (lines).
    Line(RGBColor),
    /// A dot alone (unjoined points).
    Dot(RGBColor),
    /// The paper's values: a black triangle.
    Paper,
    /// A framed cell (heat maps).
    Frame,
}

/// A legend entry's label starts this far right of its key's left edge, px (a swatch is 14 px
/// wide, a line key 18: the label sits 4–8 px after its own key).
const LABEL_OFFSET: u32 = 22;
/// Space after a label before the next entry's key, px: wider than the key-to-label space, so
/// a key reads as belonging to the label after it, not the one before.
const ENTRY_GAP: u32 = 22;

/// Width one legend entry takes, px.
fn entry_width(name: &str) -> u32 {
    LABEL_OFFSET + text_width(name, FONT) + ENTRY_GAP
}

/// Rows of legend entries that fit `width`, each entry (key, name).
fn legend_rows(entries: &[(Key, String)], width: u32) -> Vec<Vec<(Key, String)>> {
    let mut rows: Vec<Vec<(Key, String)>> = vec![vec![]];
    let mut used = 0;
    for e in entries {
        let w = entry_width(&e.1);
        let row = rows.last_mut().expect("one row at least");
        if used + w > width && !row.is_empty() {
            rows.push(vec![e.clone()]);
            used = w;
        } else {
            row.push(e.clone());
            used += w;
        }
    }
    rows
}

/// Height the legend of `entries` takes, px.
fn legend_height(entries: &[(Key, String)]) -> u32 {
    if entries.is_empty() {
        0
    } else {
        legend_rows(entries, WIDTH - Y_AXIS - 24).len() as u32 * 20 + 6
    }
}

/// Draws the title, then the legend under it; returns the area left for the plot.
fn head<'a>(
    root: &Area<'a>,
    title: &str,
    entries: &[(Key, String)],
) -> Result<Area<'a>, Box<dyn std::error::Error>> {
    let (top, rest) = root.split_vertically(TITLE_HEIGHT);
    let (title, size) = fit(title, 22, WIDTH - 24);
    top.draw(&Text::new(
        title,
        (12, 8),
        ("sans-serif", size).into_font().color(&BLACK),
    ))?;
    let (legend, rest) = rest.split_vertically(legend_height(entries));
    let style = ("sans-serif", FONT).into_font().color(&BLACK);
    for (r, row) in legend_rows(entries, WIDTH - Y_AXIS - 24).iter().enumerate() {
        let y = r as i32 * 20 + 10;
        let mut x = Y_AXIS as i32;
        for (key, name) in row {
            match *key {
                Key::Swatch(c) => {
                    legend.draw(&Rectangle::new([(x, y - 6), (x + 14, y + 6)], c.filled()))?;
                }
                Key::Line(c) => {
                    legend.draw(&PathElement::new(
                        vec![(x, y), (x + 18, y)],
                        c.stroke_width(2),
                    ))?;
                    legend.draw(&Circle::new((x + 9, y), 3, c.filled()))?;
                }
                Key::Dot(c) => legend.draw(&Circle::new((x + 9, y), 4, c.filled()))?,
                Key::Paper => legend.draw(&TriangleMarker::new((x + 8, y), 6, BLACK.filled()))?,
                Key::Frame => {
                    legend.draw(&Rectangle::new(
                        [(x, y - 6), (x + 14, y + 6)],
                        BLACK.stroke_width(3),
                    ))?;
                }
            }
            legend.draw(&Text::new(
                name.clone(),
                (x + LABEL_OFFSET as i32, y - 7),
                style.clone(),
            ))?;
            x += entry_width(name) as i32;
        }
    }
    Ok(rest)
}

/// A chart over numeric x and y.
type Chart<'a> = ChartContext<
    'a,
    SVGBackend<'a>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The reference lines across `x0..x1`: dashed at `baseline` when given, and a thin zero line
/// when the y axis starts below zero.
fn reference_lines(
    chart: &mut Chart,
    (x0, x1): (f64, f64),
    baseline: Option<f64>,
    y_start: f64,
) -> DrawResult {
    if let Some(b) = baseline {
        chart.draw_series(DashedLineSeries::new(
            vec![(x0, b), (x1, b)],
            6,
            4,
            BLACK.stroke_width(1),
        ))?;
    }
    if y_start < 0.0 {
        chart.draw_series(LineSeries::new(
            vec![(x0, 0.0), (x1, 0.0)],
            BLACK.mix(0.6).stroke_width(1),
        ))?;
    }
    Ok(())
}

/// A short error figure in place of one that could not be drawn.
fn error_svg(msg: &str) -> String {
    let msg: String = msg
        .chars()
        .filter(|c| !matches!(c, '<' | '>' | '&'))
        .collect();
    format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\"><text x=\"8\" y=\"24\">figure failed: {msg}</text></svg>")
}

/// The SVG's width attribute.
#[cfg(test)]
fn svg_width(svg: &str) -> u32 {
    let i = svg.find("width=\"").expect("a width") + 7;
    svg[i..].split('"').next().unwrap().parse().unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_have_no_spurious_decimals() {
        for (v, want) in [
            (50000.0, "50000"),
            (0.30000000000000004, "0.3"),
            (1.25, "1.25"),
            (-20.0, "-20"),
            (0.0, "0"),
            (5.5e-17, "0"),
            (1e-7, "0.0000001"),
            (0.95, "0.95"),
            (123456.7, "123457"),
            (200_000_000.0, "2e8"),
            (150_000_000.0, "1.5e8"),
            (-1_234_567.0, "-1.23e6"),
        ] {
            assert_eq!(tick(&v), want, "{v}");
        }
    }

    #[test]
    fn legends_wrap_into_rows_that_fit() {
        let entries: Vec<(Key, String)> = (0..12)
            .map(|i| (Key::Swatch(color(i)), format!("variant-number-{i}")))
            .collect();
        let rows = legend_rows(&entries, WIDTH - Y_AXIS - 24);
        assert!(rows.len() > 1);
        for row in &rows {
            let w: u32 = row.iter().map(|e| 30 + text_width(&e.1, FONT)).sum();
            assert!(w <= WIDTH - Y_AXIS - 24, "{w}");
        }
        assert_eq!(rows.iter().map(Vec::len).sum::<usize>(), 12);
    }
}
