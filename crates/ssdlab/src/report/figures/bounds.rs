//! Where the texts of a drawn SVG figure land: each `<text>` element's box estimated from its
//! position, anchor, rotation and font size with the same per-character widths the layout
//! uses, so a test can check that no label leaves the figure or runs into another one.

/// A text's estimated box, px: left, top, right, bottom.
#[derive(Clone, Copy, Debug)]
struct Box {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Box {
    /// Overlap of two boxes by more than `slack` px both ways.
    fn overlaps(&self, o: &Box, slack: f64) -> bool {
        self.x0 + slack < o.x1
            && o.x0 + slack < self.x1
            && self.y0 + slack < o.y1
            && o.y0 + slack < self.y1
    }
}

/// One `<text>` element: its content and estimated box.
struct Text {
    content: String,
    at: Box,
}

/// The value of attribute `name` in an element's attribute string.
fn attr<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let i = attrs.find(&key)? + key.len();
    attrs[i..].split('"').next()
}

fn number(attrs: &str, name: &str) -> Option<f64> {
    attr(attrs, name)?.parse().ok()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Every non-empty `<text>` of `svg` with its box.
fn texts(svg: &str) -> Vec<Text> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        rest = &rest[i + 5..];
        let Some(close) = rest.find('>') else { break };
        let attrs = format!(" {}", &rest[..close]);
        let Some(end) = rest.find("</text>") else {
            break;
        };
        let content = unescape(rest[close + 1..end].trim());
        rest = &rest[end..];
        let (Some(x), Some(y), Some(size)) = (
            number(&attrs, "x"),
            number(&attrs, "y"),
            number(&attrs, "font-size"),
        ) else {
            continue;
        };
        if content.is_empty() {
            continue;
        }
        let w = super::ems(&content) * size;
        // Along the text: from the anchor; across it: from the baseline shift plotters writes.
        let (a0, a1) = match attr(&attrs, "text-anchor") {
            Some("middle") => (-w / 2.0, w / 2.0),
            Some("end") => (-w, 0.0),
            _ => (0.0, w),
        };
        let (c0, c1) = match attr(&attrs, "dy") {
            Some("0.5ex") => (-size / 2.0, size / 2.0),
            Some("-0.5ex") => (-size, 0.0),
            _ => (0.0, size),
        };
        let at = if attr(&attrs, "transform").is_some_and(|t| t.starts_with("rotate(270")) {
            // Turned a quarter anticlockwise: along runs up, across runs right.
            Box {
                x0: x + c0,
                y0: y - a1,
                x1: x + c1,
                y1: y - a0,
            }
        } else {
            Box {
                x0: x + a0,
                y0: y + c0,
                x1: x + a1,
                y1: y + c1,
            }
        };
        out.push(Text { content, at });
    }
    out
}

/// The SVG's width and height attributes.
fn size(svg: &str) -> Option<(f64, f64)> {
    let head = &svg[svg.find("<svg")?..];
    let head = &head[..head.find('>')?];
    Some((number(head, "width")?, number(head, "height")?))
}

/// What is wrong with the texts of `svg`, one line each: a text whose estimated box leaves the
/// figure, or two texts whose boxes overlap by more than 2 px both ways. Empty when every label
/// fits. The widths are estimates (no font is loaded): a few px either way.
pub fn text_problems(svg: &str) -> Vec<String> {
    let Some((width, height)) = size(svg) else {
        return vec!["no width and height on <svg>".to_string()];
    };
    let texts = texts(svg);
    let mut problems = Vec::new();
    for t in &texts {
        let b = t.at;
        if b.x0 < -1.0 || b.y0 < -1.0 || b.x1 > width + 1.0 || b.y1 > height + 1.0 {
            problems.push(format!(
                "`{}` leaves the {width} x {height} figure (x {:.0}..{:.0}, y {:.0}..{:.0})",
                t.content, b.x0, b.x1, b.y0, b.y1
            ));
        }
    }
    for (i, a) in texts.iter().enumerate() {
        for b in &texts[i + 1..] {
            if a.at.overlaps(&b.at, 2.0) {
                problems.push(format!("`{}` runs into `{}`", a.content, b.content));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg(body: &str) -> String {
        format!(
            "<svg width=\"200\" height=\"100\" xmlns=\"http://www.w3.org/2000/svg\">{body}</svg>"
        )
    }

    #[test]
    fn a_label_inside_and_apart_is_fine() {
        let s = svg(
            r#"<text x="10" y="10" dy="0.76em" text-anchor="start" font-size="12">short</text><text x="10" y="40" dy="0.76em" text-anchor="start" font-size="12">other</text>"#,
        );
        assert!(text_problems(&s).is_empty(), "{:?}", text_problems(&s));
    }

    #[test]
    fn escaped_apostrophes_are_measured_as_apostrophes() {
        // plotters writes ' as &apos;: six characters in the file, one narrow glyph drawn.
        let s = svg(
            r#"<text x="10" y="10" dy="0.76em" text-anchor="start" font-size="12">it&apos;s &apos;a&apos; label</text>"#,
        );
        assert!(text_problems(&s).is_empty(), "{:?}", text_problems(&s));
        assert_eq!(texts(&s)[0].content, "it's 'a' label");
    }

    #[test]
    fn a_long_label_leaving_the_figure_is_found() {
        let s = svg(
            r#"<text x="150" y="10" dy="0.76em" text-anchor="start" font-size="12">a rather long label</text>"#,
        );
        assert_eq!(text_problems(&s).len(), 1);
    }

    #[test]
    fn a_rotated_label_longer_than_the_figure_is_high_is_found() {
        let s = svg(
            r#"<text x="0" y="50" dy="0.76em" text-anchor="middle" font-size="12" transform="rotate(270, 0, 50)">a vertical axis label of some length</text>"#,
        );
        let p = text_problems(&s);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("leaves"));
    }

    #[test]
    fn overlapping_labels_are_found() {
        let s = svg(
            r#"<text x="10" y="10" dy="0.76em" text-anchor="start" font-size="12">first label</text><text x="30" y="12" dy="0.76em" text-anchor="start" font-size="12">second</text>"#,
        );
        let p = text_problems(&s);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("runs into"));
    }
}
