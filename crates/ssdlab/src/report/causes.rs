//! Causes with computed numbers. A cause in `experiment.toml` writes every number it cites from
//! the results as a template, evaluated over the stored results when the report is drawn, so
//! the text cannot drift from the runs behind it:
//!
//! `{KIND METRIC VARIANT[/BASE] [@WORKLOAD,…] [key=value …] [mean|min|max|sum|range]}`
//!
//! - KIND: `value` (the metric), `pct` (a metric that is already a percentage), `share` (a
//!   fraction shown as a percentage, e.g. `write.count/all.count`), `ratio`
//!   (VARIANT ÷ BASE), `change` ((VARIANT ÷ BASE − 1), signed %), `below` ((BASE − VARIANT) ÷
//!   BASE, %).
//! - METRIC: a dotted summary path, or a sum of paths, optionally divided by another sum
//!   (`read_wait_us.user_program+read_wait_us.erase/read.mean_us`).
//! - `@a,b` keeps those workloads; `key=value` keeps the grid points whose label has that pair
//!   (`preset=pe-suspension-slc`). Every other (workload, grid point) is taken.
//! - Each (workload, grid point) gives the mean over its runs (seeds, each run against the
//!   base's run of the same seed); the aggregate (default `mean`) is over those.
//!
//! A number outside a template is refused ([`bare_numbers`]) unless it is in backticks (a
//! configuration value, an input).

use super::{fmt, grid_label, metric, Data};

/// A computed number's kind.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Value,
    Pct,
    Share,
    Ratio,
    Change,
    Below,
}

/// `text` with every `{…}` template replaced by its value over the results.
///
/// # Errors
/// A template that does not parse or selects no value.
pub(super) fn render(d: &Data, text: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("`{}`: an unclosed `{{`", &rest[open..]))?
            + open;
        let template = &rest[open + 1..close];
        out.push_str(&evaluate(d, template).map_err(|e| format!("`{{{template}}}`: {e}"))?);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A metric expression's value in one summary: sums of paths, one divided by the other.
fn expression(summary: &serde_json::Value, expr: &str) -> Option<f64> {
    let sum = |part: &str| -> Option<f64> {
        part.split('+')
            .map(|p| metric(summary, p.trim()))
            .sum::<Option<f64>>()
    };
    match expr.split_once('/') {
        Some((num, den)) => {
            let den = sum(den)?;
            (den != 0.0).then_some(sum(num)? / den)
        }
        None => sum(expr),
    }
}

fn evaluate(d: &Data, template: &str) -> Result<String, String> {
    let tokens: Vec<&str> = template.split_whitespace().collect();
    let [kind, expr, variants, filters @ ..] = tokens.as_slice() else {
        return Err("expected `KIND METRIC VARIANT[/BASE] …`".into());
    };
    let kind = match *kind {
        "value" => Kind::Value,
        "pct" => Kind::Pct,
        "share" => Kind::Share,
        "ratio" => Kind::Ratio,
        "change" => Kind::Change,
        "below" => Kind::Below,
        k => {
            return Err(format!(
                "kind `{k}`: one of value, pct, share, ratio, change, below"
            ))
        }
    };
    let (variant, base) = match variants.split_once('/') {
        Some((v, b)) => (v, Some(b)),
        None => (*variants, None),
    };
    if base.is_some() != matches!(kind, Kind::Ratio | Kind::Change | Kind::Below) {
        return Err(
            "ratio, change and below take VARIANT/BASE; value, pct and share one variant".into(),
        );
    }
    for v in std::iter::once(variant).chain(base) {
        if !d.spec.variants.iter().any(|x| x.name == v) {
            return Err(format!("`{v}` is not one of the variants"));
        }
    }
    let mut workloads: Option<Vec<&str>> = None;
    let mut pairs: Vec<&str> = Vec::new();
    let mut aggregate = "mean";
    for f in filters {
        if let Some(list) = f.strip_prefix('@') {
            let list: Vec<&str> = list.split(',').collect();
            if let Some(w) = list
                .iter()
                .find(|w| !d.spec.workloads.iter().any(|x| &x.name == *w))
            {
                return Err(format!("`{w}` is not one of the workloads"));
            }
            workloads = Some(list);
        } else if f.contains('=') {
            pairs.push(f);
        } else if ["mean", "min", "max", "sum", "range"].contains(f) {
            aggregate = f;
        } else {
            return Err(format!(
                "`{f}`: expected @workloads, key=value or one of mean, min, max, sum, range"
            ));
        }
    }
    let mut cells = Vec::new();
    for (w, g, _) in d.groups(None) {
        let label = grid_label(&g);
        let pieces: Vec<&str> = label.split(' ').collect();
        if workloads.as_ref().is_some_and(|l| !l.contains(&w.as_str()))
            || !pairs.iter().all(|p| pieces.contains(p))
        {
            continue;
        }
        let runs = d.runs(&w, &g, variant);
        let base_runs = base.map_or(&[][..], |b| d.runs(&w, &g, b));
        let values: Vec<f64> = runs
            .iter()
            .enumerate()
            .filter_map(|(k, s)| {
                let v = expression((*s)?, expr)?;
                let Some(_) = base else {
                    return Some(if kind == Kind::Share { v * 100.0 } else { v });
                };
                let b = expression(base_runs.get(k).copied().flatten()?, expr)?;
                (b != 0.0).then(|| match kind {
                    Kind::Ratio => v / b,
                    Kind::Change => (v / b - 1.0) * 100.0,
                    _ => (b - v) / b * 100.0,
                })
            })
            .collect();
        if let Some(e) = super::Estimate::of(&values) {
            cells.push(e.mean);
        }
    }
    if cells.is_empty() {
        return Err(format!(
            "no result has `{expr}` for `{variants}` at the points selected"
        ));
    }
    let (lo, hi) = cells
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let one = |v: f64| number(kind, v);
    let unit = match kind {
        Kind::Pct | Kind::Share | Kind::Change | Kind::Below => " %",
        _ => "",
    };
    Ok(match aggregate {
        "min" => format!("{}{unit}", one(lo)),
        "max" => format!("{}{unit}", one(hi)),
        "sum" => format!("{}{unit}", one(cells.iter().sum())),
        "range" => format!("{}–{}{unit}", one(lo), one(hi)),
        _ => format!(
            "{}{unit}",
            one(cells.iter().sum::<f64>() / cells.len() as f64)
        ),
    })
}

/// One number of a kind, without its unit.
fn number(kind: Kind, v: f64) -> String {
    match kind {
        // From a thousand up, whole and grouped, as integral values are (`4,920 against 6,737`).
        Kind::Value if v.fract() == 0.0 || v.abs() >= 1000.0 => grouped(v),
        Kind::Value => fmt(Some(v)),
        Kind::Ratio => format!("{v:.3}"),
        Kind::Change => {
            let text = format!("{:.1}", v.abs());
            if text.trim_start_matches(['0', '.']).is_empty() {
                text
            } else if v < 0.0 {
                format!("−{text}")
            } else {
                format!("+{text}")
            }
        }
        Kind::Pct | Kind::Share | Kind::Below => format!("{v:.1}"),
    }
}

/// An integer with thousands separators (`385,421`).
fn grouped(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("−{out}")
    } else {
        out
    }
}

/// Numbers in `text` that look like results but are typed, not computed: outside `{…}` and
/// backticks, a number with a decimal point or thousands separators, or followed by `%` or `×`.
/// Names with digits (`hm_0`, `fin1`, `Fig. 4`) are not results.
pub fn bare_numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut braces, mut ticks) = (0usize, false);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' => braces += 1,
            '}' => braces = braces.saturating_sub(1),
            '`' => ticks = !ticks,
            _ => {}
        }
        let starts = c.is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'));
        if !starts || braces > 0 || ticks {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len()
            && (chars[j].is_ascii_digit()
                || ((chars[j] == '.' || chars[j] == ',')
                    && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
        {
            j += 1;
        }
        let number: String = chars[i..j].iter().collect();
        let mut k = j;
        while k < chars.len() && chars[k] == ' ' {
            k += 1;
        }
        let unit = chars.get(k).is_some_and(|c| *c == '%' || *c == '×');
        // `Fig. 4.2`-like section numbers are not results; a decimal is, unless it is a name.
        let glued = chars.get(j).is_some_and(|c| c.is_alphabetic() || *c == '_');
        if !glued && (number.contains('.') || number.contains(',') || unit) {
            out.push(if unit {
                format!("{number} {}", chars[k])
            } else {
                number
            });
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{ExperimentSpec, Point, PointResult};

    /// Two workloads × two seeds of `base` and `s`, read latency given per run.
    fn results(spec: &ExperimentSpec) -> Vec<(Point, Option<PointResult>)> {
        super::super::test_results(spec, |p| {
            let mean = match (p.workload.as_str(), p.variant.as_str(), p.replica) {
                ("a", "base", _) => 100.0,
                ("a", "s", 0) => 80.0,
                ("a", "s", _) => 90.0,
                ("b", "base", _) => 200.0,
                _ => 220.0,
            };
            serde_json::json!({"read": {"mean_us": mean, "count": 1000}})
        })
    }

    #[test]
    fn templates_compute_from_every_run() {
        let spec: ExperimentSpec = toml::from_str(
            r#"
name = "t"
title = "t"
preset = "tiny"
seeds = 2
baseline = "base"
[[workload]]
name = "a"
synth = "requests=10"
[[workload]]
name = "b"
synth = "requests=10"
[[variant]]
name = "base"
[[variant]]
name = "s"
"#,
        )
        .unwrap();
        let r = results(&spec);
        let d = Data::new(&spec, &r);
        // a: runs 0.8 and 0.9 of the base, mean −15 %; b: +10 %.
        let text = "{change read.mean_us s/base @a} and {change read.mean_us s/base @b}, {change read.mean_us s/base range}; {value read.mean_us s @a}, {below read.mean_us s/base @a}, {ratio read.mean_us s/base}, {value read.count base sum}";
        assert_eq!(
            render(&d, text).unwrap(),
            "−15.0 % and +10.0 %, −15.0–+10.0 %; 85, 15.0 %, 0.975, 2,000"
        );
        for (bad, says) in [
            ("{change read.mean_us s}", "VARIANT/BASE"),
            ("{value read.mean_us t}", "not one of the variants"),
            ("{value read.mean_us s @c}", "not one of the workloads"),
            ("{value write.mean_us s}", "no result has"),
            ("{mean read.mean_us s}", "kind `mean`"),
            ("{value read.mean_us s", "unclosed"),
        ] {
            let e = render(&d, bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn typed_results_are_found_and_names_are_not() {
        assert_eq!(
            bare_numbers("385,421 copies skipped; +42 % erases; 1.05 on hm_0 and fin1 (Fig. 4)"),
            ["385,421", "42 %", "1.05"]
        );
        assert!(
            bare_numbers("{change write.mean_us RPS/FIFO} on `zipf=0.9` (F1, Table 2)").is_empty()
        );
        assert_eq!(bare_numbers("11–56 %"), ["56 %"]);
        assert_eq!(bare_numbers("up to 2×"), ["2 ×"]);
    }

    #[test]
    fn numbers_are_written_by_kind() {
        assert_eq!(number(Kind::Value, 385421.0), "385,421");
        assert_eq!(number(Kind::Value, 6737.4), "6,737");
        assert_eq!(number(Kind::Value, 91.94), "91.9");
        assert_eq!(number(Kind::Change, 34.54), "+34.5");
        assert_eq!(number(Kind::Change, -3.21), "−3.2");
        assert_eq!(number(Kind::Change, 0.01), "0.0");
        assert_eq!(number(Kind::Ratio, 1.04963), "1.050");
        assert_eq!(number(Kind::Below, 22.25), "22.2");
    }
}
