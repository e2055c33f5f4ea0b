//! Heat-map figures: a metric (optionally divided by another variant's, e.g. A = G / D) over
//! two grid keys, one map per workload, variant and combination of the other grid keys, with
//! the cells near the paper's value framed and named.

use super::claims::{class, Verdict};
use super::figures::{heat, Heat};
use super::{fmt, Data, Figure, Table};
use crate::experiment::{grid_label, slug, FigureSpec};

/// Whether `c` is near the paper's `p`: the claims' ✓, its effect within 10 % of the paper's,
/// effects measured from `origin` (1 on a normalised figure, else 0).
fn near(c: f64, p: f64, origin: f64) -> bool {
    p != origin && class((c - origin) / (p - origin)) == Verdict::Match
}

/// The grid keys' values in the experiment's order, as points store them.
fn values(d: &Data, key: &str) -> Vec<String> {
    d.spec
        .grid
        .get(key)
        .map(|vs| vs.iter().map(ToString::to_string).collect())
        .unwrap_or_default()
}

/// The heat maps of figure `f`.
pub(super) fn figures(d: &Data, f: &FigureSpec) -> Vec<Figure> {
    let (Some(x), Some(y)) = (f.x.as_deref(), f.y.as_deref()) else {
        return vec![];
    };
    let (xs, ys) = (values(d, x), values(d, y));
    let short = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let bare = |v: &String| v.trim_matches('"').to_string();
    let mut out = Vec::new();
    let workloads = d
        .spec
        .workloads
        .iter()
        .map(|w| w.name.clone())
        .filter(|w| f.workload.as_ref().is_none_or(|fw| fw == w));
    // The divisor of `over`: the same figure with `over_metric` as its metric.
    let divisor = FigureSpec {
        metric: f.over_metric.clone().unwrap_or_else(|| f.metric.clone()),
        ..f.clone()
    };
    for w in workloads {
        for rest in d.spec.combos_without(&[x, y]) {
            for v in d.variants(f) {
                let cell = |xv: &String, yv: &String| {
                    let mut g = rest.clone();
                    g.insert(x.to_string(), xv.clone());
                    g.insert(y.to_string(), yv.clone());
                    let value = d.value(f, &w, &g, &v)?;
                    match &f.over {
                        Some(o) => {
                            let by = d.value(&divisor, &w, &g, o)?;
                            (by != 0.0).then(|| value / by)
                        }
                        None => Some(value),
                    }
                };
                let cells: Vec<Vec<Option<f64>>> = ys
                    .iter()
                    .map(|yv| xs.iter().map(|xv| cell(xv, yv)).collect())
                    .collect();
                let origin = if f.normalize && f.over.is_none() {
                    1.0
                } else {
                    0.0
                };
                let marked: Vec<Vec<bool>> = cells
                    .iter()
                    .map(|r| {
                        r.iter()
                            .map(|c| {
                                matches!((c, f.paper_value), (Some(c), Some(p)) if near(*c, p, origin))
                            })
                            .collect()
                    })
                    .collect();
                let mut title = format!("{} — {v}, {w}", f.title);
                if !rest.is_empty() {
                    title.push_str(&format!(" ({})", grid_label(&rest)));
                }
                let (xl, yl) = (
                    xs.iter().map(bare).collect::<Vec<_>>(),
                    ys.iter().map(bare).collect::<Vec<_>>(),
                );
                let mark_label = f
                    .paper_value
                    .map(|p| format!("effect within 10 % of the paper's {}", fmt(Some(p))))
                    .unwrap_or_default();
                let svg = heat(&Heat {
                    title: &title,
                    x_label: &short(x),
                    y_label: &short(y),
                    xs: &xl,
                    ys: &yl,
                    cells: &cells,
                    marked: &marked,
                    mark_label: &mark_label,
                });
                let mut header = vec![format!("{} \\ {}", short(y), short(x))];
                header.extend(xl.iter().cloned());
                let rows = ys
                    .iter()
                    .zip(&cells)
                    .zip(&marked)
                    .rev()
                    .map(|((yv, row), m)| {
                        std::iter::once(bare(yv))
                            .chain(row.iter().zip(m).map(|(c, m)| {
                                if *m {
                                    format!("**{}**", fmt(*c))
                                } else {
                                    fmt(*c)
                                }
                            }))
                            .collect()
                    })
                    .collect();
                let mut caption = f.caption.clone();
                if let Some(p) = f.paper_value {
                    caption.push_str(&paper_note(
                        p,
                        origin,
                        &cells,
                        &xl,
                        &yl,
                        &short(x),
                        &short(y),
                    ));
                }
                let mut id = format!("{}-{}-{}", f.id, w, v);
                if !rest.is_empty() {
                    id.push('-');
                    id.push_str(&grid_label(&rest).replace([' ', '='], "-"));
                }
                out.push(Figure {
                    id: slug(&id),
                    title,
                    caption,
                    svg,
                    table: Table { header, rows },
                });
            }
        }
    }
    out
}

/// Where the paper's value `p` falls in the map: the cells whose effect (from `origin`) is
/// within 10 % of its effect, or that none is and the nearest.
fn paper_note(
    p: f64,
    origin: f64,
    cells: &[Vec<Option<f64>>],
    xs: &[String],
    ys: &[String],
    x: &str,
    y: &str,
) -> String {
    let all = cells.iter().enumerate().flat_map(|(yi, r)| {
        r.iter()
            .enumerate()
            .filter_map(move |(xi, c)| c.map(|c| (c, xi, yi)))
    });
    let at = |xi: usize, yi: usize| format!("{x}={} {y}={}", xs[xi], ys[yi]);
    let near: Vec<String> = all
        .clone()
        .filter(|(c, ..)| near(*c, p, origin))
        .map(|(c, xi, yi)| format!("{} ({})", at(xi, yi), fmt(Some(c))))
        .collect();
    if !near.is_empty() {
        return format!(
            " The paper's {} falls (its effect within 10 %, framed, bold in the table) at {}.",
            fmt(Some(p)),
            near.join("; ")
        );
    }
    match all.min_by(|a, b| (a.0 - p).abs().total_cmp(&(b.0 - p).abs())) {
        Some((c, xi, yi)) => format!(
            " No cell's effect is within 10 % of the paper's {}; the nearest is {} at {}.",
            fmt(Some(p)),
            fmt(Some(c)),
            at(xi, yi)
        ),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ExperimentSpec;

    #[test]
    fn nearness_is_measured_on_effects() {
        // A normalised 1.08 is an 8 % effect: 1.02 is a quarter of it, not near.
        assert!(near(1.081, 1.08, 1.0));
        assert!(!near(1.02, 1.08, 1.0));
        // Measured from 0 (a reduction, a share), 1.02 is within 10 % of 1.08.
        assert!(near(1.02, 1.08, 0.0));
        assert!(!near(-21.8, 21.8, 0.0));
    }

    #[test]
    fn cells_come_from_the_runs_and_the_paper_value_is_placed() {
        let spec: ExperimentSpec = toml::from_str(
            r#"
name = "t"
title = "t"
preset = "tiny"
baseline = "base"
[[workload]]
name = "a"
synth = "requests=10,write_ratio=0.5"
[[variant]]
name = "base"
[[variant]]
name = "opt"
[[variant]]
name = "s"
[grid]
"synth.write_ratio" = [0.2, 0.8]
"host.time_scale" = [0.1, 1.0]
[[figure]]
id = "a"
title = "A"
kind = "heatmap"
x = "synth.write_ratio"
y = "host.time_scale"
metric = "all.mean_us"
reduction = true
over = "opt"
variants = ["s"]
paper_value = 0.5
"#,
        )
        .unwrap();
        // Baseline 100; the optimal system 50 everywhere (D 50 %); the scheme 75 at
        // write_ratio 0.2 and time scale 0.1 (G 25 %, A 0.5), 95 elsewhere (A 0.1).
        let results = super::super::test_results(&spec, |p| {
            let near = p.grid["synth.write_ratio"] == "0.2" && p.grid["host.time_scale"] == "0.1";
            let mean = match p.variant.as_str() {
                "base" => 100.0,
                "opt" => 50.0,
                _ if near => 75.0,
                _ => 95.0,
            };
            serde_json::json!({"all": {"mean_us": mean}})
        });
        let d = Data::new(&spec, &results);
        let figs = figures(&d, &spec.figures[0]);
        assert_eq!(figs.len(), 1);
        let t = &figs[0].table;
        assert_eq!(t.header, ["time_scale \\ write_ratio", "0.2", "0.8"]);
        // Rows from the top (largest y) down.
        assert_eq!(t.rows[0], ["1.0", "0.100", "0.100"]);
        assert_eq!(t.rows[1], ["0.1", "**0.500**", "0.100"]);
        assert!(
            figs[0].caption.contains("falls")
                && figs[0].caption.contains("write_ratio=0.2 time_scale=0.1"),
            "{}",
            figs[0].caption
        );
        assert!(figs[0].svg.contains("within 10 % of the paper"));
    }

    #[test]
    fn coverage_divides_one_variants_metric_by_anothers() {
        let spec: ExperimentSpec = toml::from_str(
            r#"
name = "t"
title = "t"
preset = "tiny"
baseline = "base"
[[workload]]
name = "a"
synth = "requests=10,write_ratio=0.5"
[[variant]]
name = "base"
[[variant]]
name = "s"
[grid]
"synth.write_ratio" = [0.2, 0.8]
"host.time_scale" = [1.0]
[[figure]]
id = "coverage"
title = "coverage"
kind = "heatmap"
x = "synth.write_ratio"
y = "host.time_scale"
metric = "read_requests_redirected_pct"
over = "base"
over_metric = "read_requests_blocked_pct"
variants = ["s"]
"#,
        )
        .unwrap();
        // The scheme redirects 10 % of reads; the baseline blocks 40 % (write ratio 0.2) or
        // 20 % (0.8): coverage 0.25 and 0.5.
        let results = super::super::test_results(&spec, |p| {
            let blocked = if p.grid["synth.write_ratio"] == "0.2" {
                40.0
            } else {
                20.0
            };
            serde_json::json!({
                "read_requests_redirected_pct": 10.0,
                "read_requests_blocked_pct": blocked,
            })
        });
        let d = Data::new(&spec, &results);
        let figs = figures(&d, &spec.figures[0]);
        assert_eq!(figs[0].table.rows[0], ["1.0", "0.250", "0.500"]);
        assert!(super::super::unknown_metrics(&spec, &results).is_empty());
        // A divisor's metric no result has is named, as a figure's own metric is.
        let mut typo = spec.clone();
        typo.figures[0].over_metric = Some("read_requests_blocked_pc".into());
        let unknown = super::super::unknown_metrics(&typo, &results);
        assert!(
            unknown.len() == 1 && unknown[0].contains("`read_requests_blocked_pc`"),
            "{unknown:?}"
        );
    }
}
