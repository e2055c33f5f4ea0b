//! Experiment reports: a Markdown page and a self-contained HTML page (inline SVG figures, no
//! external references), with tables of every metric, the paper's values beside ours, and the
//! command, config hash and tool version behind each number.
//!
//! Past 500 lines, it stays whole: it is the one place that turns stored results into each
//! figure kind's values (groups, normalisation, the paper's values, means), and those rules
//! must agree figure for figure; drawing (`figures`) and page layout (`page`) live apart.

mod causes;
mod claims;
mod coverage;
mod decompose;
mod figures;
mod heatmap;
mod labels;
mod page;
mod readtime;

pub use causes::bare_numbers;
pub use claims::{verdict, Estimate, Verdict, NO_EFFECT_BAND};
pub use figures::{bars, lines, text_problems, Bars, Lines};
pub use labels::metric_label;

use crate::experiment::calibrate::Calibration;
use crate::experiment::{grid_label, ExperimentSpec, FigureKind, FigureSpec, Point, PointResult};
use serde_json::Value;
use std::collections::BTreeMap;

/// A table: header and rows of cells.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

/// One rendered figure with the data behind it.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File stem (`figures/<id>.svg`).
    pub id: String,
    /// Title.
    pub title: String,
    /// Caption.
    pub caption: String,
    /// The SVG document.
    pub svg: String,
    /// Values plotted (ours and the paper's).
    pub table: Table,
}

/// A built report.
#[derive(Debug, Clone)]
pub struct Report {
    /// Markdown page (figures referenced as `figures/<id>.svg`).
    pub markdown: String,
    /// Self-contained HTML page.
    pub html: String,
    /// Figures.
    pub figures: Vec<Figure>,
    /// Points without a current result.
    pub missing: Vec<String>,
}

pub use crate::metrics::metric;

/// Results indexed for figures: (workload, grid label, variant) → the runs' summaries by
/// replica (seed).
struct Data<'a> {
    spec: &'a ExperimentSpec,
    results: &'a [(Point, Option<PointResult>)],
    index: BTreeMap<(String, String, String), Vec<Option<&'a Value>>>,
}

fn group_label(p: &Point) -> String {
    if p.grid.is_empty() {
        p.workload.clone()
    } else {
        format!("{} {}", p.workload, grid_label(&p.grid))
    }
}

impl<'a> Data<'a> {
    fn new(spec: &'a ExperimentSpec, results: &'a [(Point, Option<PointResult>)]) -> Self {
        let mut index: BTreeMap<(String, String, String), Vec<Option<&Value>>> = BTreeMap::new();
        for (p, r) in results {
            let runs = index
                .entry((p.workload.clone(), grid_label(&p.grid), p.variant.clone()))
                .or_default();
            let k = p.replica as usize;
            if runs.len() <= k {
                runs.resize(k + 1, None);
            }
            runs[k] = r.as_ref().map(|r| &r.summary);
        }
        Data {
            spec,
            results,
            index,
        }
    }

    /// The summaries of a point's runs, by replica (`None`: no current result).
    fn runs(
        &self,
        workload: &str,
        grid: &BTreeMap<String, String>,
        variant: &str,
    ) -> &[Option<&'a Value>] {
        self.index
            .get(&(workload.to_string(), grid_label(grid), variant.to_string()))
            .map_or(&[], Vec::as_slice)
    }

    /// The first run's summary (latency curves show one run).
    fn summary(
        &self,
        workload: &str,
        grid: &BTreeMap<String, String>,
        variant: &str,
    ) -> Option<&'a Value> {
        self.runs(workload, grid, variant)
            .first()
            .copied()
            .flatten()
    }

    /// Distinct (workload, grid) groups in point order, optionally one workload only.
    fn groups(&self, workload: Option<&str>) -> Vec<(String, BTreeMap<String, String>, String)> {
        let mut out: Vec<(String, BTreeMap<String, String>, String)> = Vec::new();
        for (p, _) in self.results {
            if workload.is_some_and(|w| w != p.workload) {
                continue;
            }
            if !out.iter().any(|(w, g, _)| w == &p.workload && g == &p.grid) {
                out.push((p.workload.clone(), p.grid.clone(), group_label(p)));
            }
        }
        out
    }

    /// Figure `f`'s value for each run of a point (normalised run by run against the
    /// baseline's run of the same seed).
    fn values(
        &self,
        f: &FigureSpec,
        workload: &str,
        grid: &BTreeMap<String, String>,
        variant: &str,
    ) -> Vec<Option<f64>> {
        let baseline = f.baseline.as_deref().or(self.spec.baseline.as_deref());
        let base = baseline.map_or(&[][..], |b| self.runs(workload, grid, b));
        self.runs(workload, grid, variant)
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let v = metric((*s)?, &f.metric)?;
                if !f.normalize && !f.reduction {
                    return Some(v);
                }
                let b = metric(base.get(k).copied().flatten()?, &f.metric)?;
                if b == 0.0 {
                    None
                } else if f.reduction {
                    Some((b - v) / b * 100.0)
                } else {
                    Some(v / b)
                }
            })
            .collect()
    }

    /// Figure `f`'s value at a point: the mean over its runs.
    fn value(
        &self,
        f: &FigureSpec,
        workload: &str,
        grid: &BTreeMap<String, String>,
        variant: &str,
    ) -> Option<f64> {
        estimate(&self.values(f, workload, grid, variant)).map(|e| e.mean)
    }

    /// A compact label for figure axes: the workload and each grid value without the prefix
    /// of words all values of its key share (`pe-suspension-slc` → `slc`; numbers whole:
    /// `0.9` stays `0.9` beside `0.0`).
    fn short_label(&self, workload: &str, grid: &BTreeMap<String, String>) -> String {
        let mut label = workload.to_string();
        for (k, v) in grid {
            let values: Vec<String> = self
                .spec
                .grid
                .get(k)
                .map(|vs| vs.iter().map(|x| x.to_string()).collect())
                .unwrap_or_default();
            let common =
                values
                    .iter()
                    .skip(1)
                    .fold(values.first().map_or(0, String::len), |n, x| {
                        values[0]
                            .chars()
                            .zip(x.chars())
                            .take(n)
                            .take_while(|(a, b)| a == b)
                            .count()
                    });
            // Only whole words: up to the last `-` or `_` of the shared prefix.
            let common = values.first().map_or(0, |v| {
                v.chars()
                    .take(common)
                    .enumerate()
                    .filter(|(_, c)| matches!(c, '-' | '_'))
                    .last()
                    .map_or(0, |(i, _)| i + 1)
            });
            let short = if values.len() > 1 {
                v.chars().skip(common).collect::<String>()
            } else {
                v.clone()
            };
            label.push(' ');
            label.push_str(short.trim_matches('"'));
        }
        label
    }

    fn variants(&self, f: &FigureSpec) -> Vec<String> {
        self.spec
            .variants
            .iter()
            .map(|v| v.name.clone())
            .filter(|v| f.variants.is_empty() || f.variants.contains(v))
            .collect()
    }

    /// Distinct grid points in point order.
    fn grids(&self) -> Vec<BTreeMap<String, String>> {
        let mut out: Vec<BTreeMap<String, String>> = Vec::new();
        for (p, _) in self.results {
            if !out.contains(&p.grid) {
                out.push(p.grid.clone());
            }
        }
        out
    }
}

fn fmt(v: Option<f64>) -> String {
    match v {
        Some(v) if v.abs() >= 1000.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.3}"),
        None => "–".to_string(),
    }
}

/// The y-axis label of figure `f` of experiment `spec`: the metric in words with its unit, or
/// what it is compared with.
fn y_label(spec: &ExperimentSpec, f: &FigureSpec) -> String {
    let base = f
        .baseline
        .as_deref()
        .or(spec.baseline.as_deref())
        .unwrap_or("the baseline");
    if f.normalize {
        format!("{}, ÷ {base}", labels::metric_words(&f.metric))
    } else if f.reduction {
        format!("{}: % below {base}", labels::metric_words(&f.metric))
    } else {
        metric_label(&f.metric)
    }
}

/// A bars figure's values: its groups (workload, grid point, label), its variants, and per
/// group and variant the value of each run (seed).
type BarValues = (
    Vec<(String, BTreeMap<String, String>, String)>,
    Vec<String>,
    Vec<Vec<Vec<Option<f64>>>>,
);

fn bar_values(d: &Data, f: &FigureSpec) -> BarValues {
    let groups = d.groups(f.workload.as_deref());
    let variants = d.variants(f);
    let values = groups
        .iter()
        .map(|(w, g, _)| variants.iter().map(|v| d.values(f, w, g, v)).collect())
        .collect();
    (groups, variants, values)
}

/// The estimate over a point's runs.
fn estimate(runs: &[Option<f64>]) -> Option<Estimate> {
    Estimate::of(&runs.iter().flatten().copied().collect::<Vec<_>>())
}

/// The value rows of the groups at grid point `grid`.
fn rows_at<'a>(
    groups: &[(String, BTreeMap<String, String>, String)],
    values: &'a [Vec<Vec<Option<f64>>>],
    grid: &BTreeMap<String, String>,
) -> Vec<&'a Vec<Vec<Option<f64>>>> {
    groups
        .iter()
        .zip(values)
        .filter(|((_, g, _), _)| g == grid)
        .map(|(_, r)| r)
        .collect()
}

/// The label of a grid point's mean in `paper_mean` (`all` without a grid).
fn mean_key(grid: &BTreeMap<String, String>) -> String {
    if grid.is_empty() {
        "all".to_string()
    } else {
        grid_label(grid)
    }
}

fn bars_figure(d: &Data, f: &FigureSpec) -> Figure {
    let (groups, variants, runs) = bar_values(d, f);
    let mut estimates: Vec<Vec<Option<Estimate>>> = runs
        .iter()
        .map(|row| row.iter().map(|r| estimate(r)).collect())
        .collect();
    // The paper's value for a workload at one grid point (`"fin1 preset=…"`), else for the
    // workload at every grid point.
    let mut paper: Vec<Vec<Option<f64>>> = groups
        .iter()
        .map(|(w, g, _)| {
            let at = format!("{w} {}", grid_label(g));
            let row = f.paper.get(&at).or_else(|| f.paper.get(w));
            variants
                .iter()
                .map(|v| row.and_then(|m| m.get(v)).copied())
                .collect()
        })
        .collect();
    let mut labels: Vec<String> = groups.iter().map(|g| g.2.clone()).collect();
    let mut axis: Vec<String> = groups.iter().map(|(w, g, _)| d.short_label(w, g)).collect();
    if !f.paper_mean.is_empty() {
        // One "mean" group per grid point: the mean over workloads (each run's mean, then
        // over runs), beside the paper's mean; none unless every workload has a value.
        for grid in d.grids() {
            let key = mean_key(&grid);
            let here = rows_at(&groups, &runs, &grid);
            estimates.push(
                (0..variants.len())
                    .map(|s| {
                        let (per_run, per_workload) = claims::claim_runs(&here, s);
                        (per_workload.len() == here.len())
                            .then(|| Estimate::of(&per_run))
                            .flatten()
                    })
                    .collect(),
            );
            paper.push(
                variants
                    .iter()
                    .map(|v| f.paper_mean.get(&key).and_then(|m| m.get(v)).copied())
                    .collect(),
            );
            labels.push(if grid.is_empty() {
                "mean".to_string()
            } else {
                format!("mean {key}")
            });
            axis.push(d.short_label("mean", &grid));
        }
    }
    let values: Vec<Vec<Option<f64>>> = estimates
        .iter()
        .map(|row| row.iter().map(|e| e.map(|e| e.mean)).collect())
        .collect();
    let errors: Vec<Vec<Option<(f64, f64)>>> = estimates
        .iter()
        .map(|row| row.iter().map(|e| e.and_then(|e| e.interval())).collect())
        .collect();
    let svg = bars(&Bars {
        title: &f.title,
        y_label: &y_label(d.spec, f),
        groups: &axis,
        series: &variants,
        values: &values,
        paper: &paper,
        errors: &errors,
        baseline: f.normalize.then_some(1.0),
    });
    let mut header = vec!["workload".to_string()];
    for v in &variants {
        header.push(v.clone());
        if paper
            .iter()
            .any(|row| row[variants.iter().position(|x| x == v).unwrap_or(0)].is_some())
        {
            header.push(format!("{v} (paper)"));
        }
    }
    let rows = labels
        .iter()
        .enumerate()
        .map(|(g, label)| {
            let mut row = vec![label.clone()];
            for (s, v) in variants.iter().enumerate() {
                row.push(estimates[g][s].map_or("–".into(), |e| e.shown()));
                if header.contains(&format!("{v} (paper)")) {
                    row.push(fmt(paper[g][s]));
                }
            }
            row
        })
        .collect();
    Figure {
        id: f.id.clone(),
        title: f.title.clone(),
        caption: f.caption.clone(),
        svg,
        table: Table { header, rows },
    }
}

const PERCENTILES: [(&str, &str); 6] = [
    ("95", "p95_us"),
    ("97", "p97_us"),
    ("98", "p98_us"),
    ("99", "p99_us"),
    ("99.5", "p99_5_us"),
    ("99.9", "p99_9_us"),
];

fn latency_figures(d: &Data, f: &FigureSpec) -> Vec<Figure> {
    let variants = d.variants(f);
    let mut out = Vec::new();
    for (w, g, label) in d.groups(f.workload.as_deref()) {
        let series: Vec<(String, Vec<(f64, f64)>)> = variants
            .iter()
            .filter_map(|v| {
                let class = d.summary(&w, &g, v)?.get(&f.metric)?;
                let pts = if f.kind == FigureKind::Cdf {
                    let cdf: Vec<(f64, f64)> = class
                        .get("cdf")?
                        .as_array()?
                        .iter()
                        .filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?)))
                        .collect();
                    // Start the curve at zero at the fastest response, as a CDF plot should.
                    cdf.first()
                        .map(|&(x, _)| (x, 0.0))
                        .into_iter()
                        .chain(cdf)
                        .collect()
                } else {
                    PERCENTILES
                        .iter()
                        .enumerate()
                        .filter_map(|(i, (_, key))| Some((i as f64, class.get(*key)?.as_f64()?)))
                        .collect()
                };
                Some((v.clone(), pts))
            })
            .collect();
        let cats: Vec<String> = if f.kind == FigureKind::Cdf {
            vec![]
        } else {
            PERCENTILES.iter().map(|p| format!("p{}", p.0)).collect()
        };
        let title = format!("{} — {label}", f.title);
        let (x_label, y_label) = if f.kind == FigureKind::Cdf {
            ("response time (µs, log scale)", "cumulative fraction")
        } else {
            ("percentile", "response time (µs)")
        };
        let svg = lines(&Lines {
            title: &title,
            x_label,
            y_label,
            categories: &cats,
            series: &series,
            cdf: f.kind == FigureKind::Cdf,
            join: true,
            baseline: None,
        });
        let table = if f.kind == FigureKind::Cdf {
            Table {
                header: vec![
                    "variant".into(),
                    "p50 (us)".into(),
                    "p99 (us)".into(),
                    "max (us)".into(),
                ],
                rows: variants
                    .iter()
                    .map(|v| {
                        let s = d.summary(&w, &g, v);
                        let m =
                            |k: &str| fmt(s.and_then(|s| metric(s, &format!("{}.{k}", f.metric))));
                        vec![v.clone(), m("p50_us"), m("p99_us"), m("max_us")]
                    })
                    .collect(),
            }
        } else {
            let mut header = vec!["variant".to_string()];
            header.extend(PERCENTILES.iter().map(|p| format!("p{} (us)", p.0)));
            Table {
                header,
                rows: series
                    .iter()
                    .map(|(v, pts)| {
                        std::iter::once(v.clone())
                            .chain(pts.iter().map(|p| fmt(Some(p.1))))
                            .collect()
                    })
                    .collect(),
            }
        };
        let id = format!(
            "{}-{}",
            f.id,
            label.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        );
        out.push(Figure {
            id,
            title,
            caption: f.caption.clone(),
            svg,
            table,
        });
    }
    out
}

fn sweep_figures(d: &Data, f: &FigureSpec) -> Vec<Figure> {
    let Some(x) = f.x.as_deref() else {
        return vec![];
    };
    let xs: Vec<String> = d
        .spec
        .grid
        .get(x)
        .map(|vals| vals.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default();
    let workloads: Vec<String> = d
        .spec
        .workloads
        .iter()
        .map(|w| w.name.clone())
        .filter(|w| f.workload.as_ref().is_none_or(|fw| fw == w))
        .collect();
    let variants = d.variants(f);
    let mut out = Vec::new();
    for w in workloads {
        // Other grid keys stay at their first value.
        let base: BTreeMap<String, String> = d
            .spec
            .grid
            .iter()
            .filter(|(k, _)| k.as_str() != x)
            .map(|(k, v)| (k.clone(), v[0].to_string()))
            .collect();
        let at = |xv: &String| {
            let mut g = base.clone();
            g.insert(x.to_string(), xv.clone());
            g
        };
        let series: Vec<(String, Vec<(f64, f64)>)> = variants
            .iter()
            .map(|v| {
                (
                    v.clone(),
                    xs.iter()
                        .enumerate()
                        .filter_map(|(i, xv)| Some((i as f64, d.value(f, &w, &at(xv), v)?)))
                        .collect(),
                )
            })
            .collect();
        let cats: Vec<String> = xs.iter().map(|s| s.trim_matches('"').to_string()).collect();
        let title = format!("{} — {w}", f.title);
        let svg = lines(&Lines {
            title: &title,
            x_label: x,
            y_label: &y_label(d.spec, f),
            categories: &cats,
            series: &series,
            join: xs
                .iter()
                .all(|x| x.trim_matches('"').parse::<f64>().is_ok()),
            cdf: false,
            baseline: f.normalize.then_some(1.0),
        });
        let mut header = vec!["variant".to_string()];
        header.extend(cats.iter().cloned());
        let rows = variants
            .iter()
            .map(|v| {
                std::iter::once(v.clone())
                    .chain(xs.iter().map(|xv| fmt(d.value(f, &w, &at(xv), v))))
                    .collect()
            })
            .collect();
        out.push(Figure {
            id: format!("{}-{}", f.id, w),
            title,
            caption: f.caption.clone(),
            svg,
            table: Table { header, rows },
        });
    }
    out
}

/// The metric columns of the full results tables.
pub const METRICS: [(&str, &str); 15] = [
    ("read mean (us)", "read.mean_us"),
    ("read p99 (us)", "read.p99_us"),
    ("write mean (us)", "write.mean_us"),
    ("write p99 (us)", "write.p99_us"),
    ("all mean (us)", "all.mean_us"),
    ("all p99.9 (us)", "all.p99_9_us"),
    ("reads blocked %", "reads_blocked_pct"),
    ("WA", "write_amplification"),
    ("flash reads", "flash.reads"),
    ("flash programs", "flash.programs"),
    ("erases", "flash.erases"),
    ("GC jobs", "gc.count"),
    ("GC time (ms)", "gc.time_ms"),
    ("idle %", "idle_pct"),
    ("wall (s)", "sim.wall_s"),
];

fn results_table(d: &Data) -> Table {
    let mut header = vec!["point".to_string()];
    header.extend(METRICS.iter().map(|m| m.0.to_string()));
    let rows = d
        .results
        .iter()
        .map(|(p, r)| {
            let mut row = vec![format!("{} / {}", group_label(p), p.variant)];
            row.extend(
                METRICS
                    .iter()
                    .map(|(_, path)| fmt(r.as_ref().and_then(|r| metric(&r.summary, path)))),
            );
            row
        })
        .collect();
    Table { header, rows }
}

/// The calibrated workload parameter of every workload and grid point: the value found on
/// the baseline (marked when it is a bound of the search's `range`, where the target may only
/// be reached at an extreme of the workload), the target and what it reached — read from the
/// stored result of the baseline point run with that value, not from the calibration file.
fn calibration_table(d: &Data, c: &Calibration, spec: &crate::experiment::CalibrateSpec) -> Table {
    let range = spec.range;
    let reached = |e: &crate::experiment::calibrate::Entry| {
        d.results
            .iter()
            .filter_map(|(p, r)| r.as_ref().map(|r| (p, r)))
            .find(|(p, _)| {
                p.variant == e.variant && p.workload == e.workload && grid_label(&p.grid) == e.grid
            })
            .and_then(|(_, r)| crate::metrics::metric(&r.summary, &e.metric))
    };
    Table {
        header: [
            "workload",
            "grid point",
            "key",
            "value found",
            "metric",
            "target",
            "reached",
            "within tolerance",
            "baseline runs",
        ]
        .map(String::from)
        .to_vec(),
        rows: c
            .entries
            .values()
            .map(|e| {
                let reached = reached(e);
                vec![
                    e.workload.clone(),
                    e.grid.clone(),
                    e.key.clone(),
                    if range.contains(&e.value) {
                        format!("{:.6} (range bound)", e.value)
                    } else {
                        format!("{:.6}", e.value)
                    },
                    e.metric.clone(),
                    fmt(Some(e.target)),
                    reached.map_or("no result".into(), |m| fmt(Some(m))),
                    match reached {
                        Some(m) if (m - e.target).abs() <= spec.tolerance => "✓",
                        Some(_) => "✗",
                        None => "-",
                    }
                    .into(),
                    format!("{} ({})", e.probes.len(), e.variant),
                ]
            })
            .collect(),
    }
}

fn provenance_table(d: &Data) -> Table {
    Table {
        header: vec![
            "point".into(),
            "config hash".into(),
            "point hash".into(),
            "tool".into(),
            "command".into(),
        ],
        rows: d
            .results
            .iter()
            .map(|(p, r)| match r {
                Some(r) => vec![
                    p.id.clone(),
                    r.config_hash.clone(),
                    r.point_hash.clone(),
                    r.tool.clone(),
                    r.command.clone(),
                ],
                None => vec![
                    p.id.clone(),
                    "–".into(),
                    "–".into(),
                    "missing".into(),
                    p.command(),
                ],
            })
            .collect(),
    }
}

/// A note naming the workloads whose requests reach beyond the drive's logical space and are
/// folded onto it (`wrapped_pct` of the summaries), if any do.
fn folding_note(d: &Data) -> Option<String> {
    let mut by_workload: BTreeMap<&str, (usize, f64)> = BTreeMap::new();
    for (p, r) in d.results {
        let pct = r
            .as_ref()
            .and_then(|r| metric(&r.summary, "wrapped_pct"))
            .unwrap_or(0.0);
        if pct > 0.0 {
            let e = by_workload.entry(&p.workload).or_insert((0, 0.0));
            e.0 += 1;
            e.1 = e.1.max(pct);
        }
    }
    if by_workload.is_empty() {
        return None;
    }
    let list: Vec<String> = by_workload
        .iter()
        .map(|(w, (n, pct))| format!("{w} ({n} points, up to {pct:.1} % of requests)"))
        .collect();
    Some(format!(
        "Address folding: these workloads reach beyond the drive's logical space, and the \
         requests that do are folded onto it (`ftl.out_of_range = \"wrap\"`; the summaries' \
         `wrapped_requests` and `wrapped_pct`): {}. Folded requests alias other addresses, \
         so such a point does not replay the trace's footprint as it was.",
        list.join("; ")
    ))
}

/// Figures whose metric (or heat-map divisor's `over_metric`) none of the stored results has (bars, sweeps and heat maps; which keys a summary
/// has depends on the schemes run, so the check is against the results): one message each,
/// with the keys of the results that end like the metric. Empty while there are no results.
pub fn unknown_metrics(
    spec: &ExperimentSpec,
    results: &[(Point, Option<PointResult>)],
) -> Vec<String> {
    let stored: Vec<&Value> = results
        .iter()
        .filter_map(|(_, r)| r.as_ref().map(|r| &r.summary))
        .collect();
    let Some(first) = stored.first() else {
        return Vec::new();
    };
    let mut keys = Vec::new();
    numeric_paths(first, String::new(), &mut keys);
    spec.figures
        .iter()
        .filter(|f| {
            matches!(
                f.kind,
                FigureKind::Bars | FigureKind::Sweep | FigureKind::Heatmap
            )
        })
        .flat_map(|f| {
            std::iter::once(&f.metric)
                .chain(&f.over_metric)
                .map(move |m| (f, m))
        })
        .filter(|(_, m)| stored.iter().all(|s| metric(s, m).is_none()))
        .map(|(f, m)| {
            let last = m.rsplit('.').next().unwrap_or(m);
            let near: Vec<&str> = keys
                .iter()
                .filter(|k| k.ends_with(last))
                .take(5)
                .map(String::as_str)
                .collect();
            format!(
                "figure `{}`: metric `{m}` is a number in none of the {} results{}",
                f.id,
                stored.len(),
                if near.is_empty() {
                    " (see a result's summary, e.g. `read.mean_us`)".to_string()
                } else {
                    format!(" (did you mean {}?)", near.join(", "))
                }
            )
        })
        .collect()
}

/// The dotted paths of the numbers in a summary.
fn numeric_paths(v: &Value, key: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let path = if key.is_empty() {
                    k.clone()
                } else {
                    format!("{key}.{k}")
                };
                numeric_paths(v, path, out);
            }
        }
        Value::Number(_) => out.push(key),
        _ => {}
    }
}

/// Builds the report of an experiment from its results. `command` is the command that
/// regenerates the results (shown in the report).
///
/// # Errors
/// A cause whose numbers cannot be computed from the results (a template naming a metric,
/// variant, workload or grid point the results do not have).
pub fn build(
    spec: &ExperimentSpec,
    results: &[(Point, Option<PointResult>)],
    calibration: &Calibration,
    command: &str,
) -> Result<Report, String> {
    let d = Data::new(spec, results);
    let mut figs = Vec::new();
    for f in &spec.figures {
        let first = figs.len();
        match f.kind {
            FigureKind::Bars => figs.push(bars_figure(&d, f)),
            FigureKind::Cdf | FigureKind::Percentiles => figs.extend(latency_figures(&d, f)),
            FigureKind::Sweep => figs.extend(sweep_figures(&d, f)),
            FigureKind::Heatmap => figs.extend(heatmap::figures(&d, f)),
        }
        // Causes of a figure without the paper's means (so without a claims row to carry
        // them) go under its caption, computed like every cause.
        if f.paper_mean.is_empty() && !f.cause.is_empty() {
            let mut text = String::new();
            for (v, c) in &f.cause {
                let c = causes::render(&d, c)
                    .map_err(|e| format!("figure `{}`, cause of `{v}`: {e}", f.id))?;
                text.push_str(&format!("\n\n{v}: {c}."));
            }
            if let Some(fig) = figs.get_mut(first) {
                fig.caption.push_str(&text);
            }
        }
    }
    figs.extend(readtime::figure(&d));
    figs.extend(coverage::figure(&d));
    let missing: Vec<String> = results
        .iter()
        .filter(|(_, r)| r.is_none())
        .map(|(p, _)| p.id.clone())
        .collect();
    let mut tables = Vec::new();
    if let Some(c) = &spec.calibrate {
        tables.push((
            "Calibration (baseline only)",
            calibration_table(&d, calibration, c),
        ));
    }
    if let Some(claims) = claims::claims_table(&d)? {
        tables.push((
            "Claims: the paper's means beside ours (✓ within 10 % of the paper's effect, ~ half to twice it, ✗ otherwise; uncertain when the verdict changes inside our 95 % interval over seeds; calibrated / input: equal by construction, not a reproduction)",
            claims,
        ));
    }
    let mut notes: Vec<String> = Vec::new();
    if let Some(t) = spec
        .decomposition
        .as_ref()
        .and_then(|dc| decompose::table(&d, dc))
    {
        tables.push((
            "Decomposition: D (the baseline's distance from the optimal system), A (the share of it the scheme wins back) and coverage (redirected ÷ blocked read requests), with the blocked read pages the scheme did not redirect by cause",
            t.0,
        ));
        notes.extend(t.1);
    }
    tables.push(("All metrics", results_table(&d)));
    tables.push(("Provenance", provenance_table(&d)));
    notes.extend(folding_note(&d));
    let markdown = page::markdown(spec, &figs, &tables, &missing, &notes, command);
    let html = page::html(spec, &figs, &tables, &missing, &notes, command);
    Ok(Report {
        markdown,
        html,
        figures: figs,
        missing,
    })
}

/// Results for hand-built report tests: every point of `spec` with the summary `summary` gives
/// it (sealed fields empty).
#[cfg(test)]
fn test_results(
    spec: &ExperimentSpec,
    summary: impl Fn(&Point) -> Value,
) -> Vec<(Point, Option<PointResult>)> {
    let cal = Calibration::default();
    spec.points_with(std::path::Path::new("/x"), &cal)
        .into_iter()
        .map(|p| {
            let r = PointResult {
                point: p.clone(),
                point_hash: String::new(),
                config_hash: String::new(),
                tool: String::new(),
                command: String::new(),
                summary: summary(&p),
                content_hash: String::new(),
            };
            (p, Some(r))
        })
        .collect()
}
