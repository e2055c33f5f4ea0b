//! The decomposition of a read-redirection scheme's gain: how far the baseline is from the
//! optimal system (D), how much of that the scheme wins back (A = G / D), what share of the
//! blocked read requests it redirects (coverage), and why it redirects no more — beside the
//! paper's values, so a reader sees which factor a miss comes from.

use super::claims::{with_interval, Estimate};
use super::{fmt, metric, Data, Table};
use crate::experiment::DecompositionSpec;
use serde_json::Value;

/// One run's values: B, O, S (latency), blocked (baseline, % of read requests), redirected
/// (scheme, % of read requests), and the scheme's blocked read pages by what became of them.
struct Run {
    d: f64,
    g: f64,
    blocked: f64,
    redirected: f64,
    /// Shares of the scheme's blocked read pages (%): redirected, no hot-list entry or
    /// content not staged, an entry without a copy yet, the copy's die busy too.
    fate: [f64; 4],
}

fn run(spec: &DecompositionSpec, b: &Value, o: &Value, s: &Value) -> Option<Run> {
    let (bm, om, sm) = (
        metric(b, &spec.metric)?,
        metric(o, &spec.metric)?,
        metric(s, &spec.metric)?,
    );
    if bm <= 0.0 {
        return None;
    }
    let pages = metric(s, "reads_blocked")?;
    let share = |k: &str| -> f64 {
        metric(s, k).map_or(0.0, |v| if pages > 0.0 { v / pages * 100.0 } else { 0.0 })
    };
    Some(Run {
        d: (bm - om) / bm * 100.0,
        g: (bm - sm) / bm * 100.0,
        blocked: metric(b, "read_requests_blocked_pct")?,
        redirected: metric(s, "read_requests_redirected_pct")?,
        fate: [
            share("staging.redirected"),
            share("staging.misses"),
            share("staging.hits_without_copy"),
            share("staging.copy_busy"),
        ],
    })
}

/// Run `k`'s summary.
fn at<'a>(runs: &[Option<&'a Value>], k: usize) -> Option<&'a Value> {
    runs.get(k).copied().flatten()
}

/// A / coverage as a ratio of two means (the papers' "x % of y %").
fn ratio(a: f64, b: f64) -> String {
    if b == 0.0 {
        "–".into()
    } else {
        format!("{:.2}", a / b)
    }
}

/// The decomposition table: per scheme, each workload and grid point (means over seeds), the
/// mean over them (with 95 % intervals over seeds for D and G), and the paper's values.
pub(super) fn table(d: &Data, spec: &DecompositionSpec) -> Option<(Table, Vec<String>)> {
    let baseline = d.spec.baseline.as_deref()?;
    let mut rows = Vec::new();
    let mut findings = Vec::new();
    let paper_grid = spec.grid.as_deref().unwrap_or("all");
    for scheme in &spec.schemes {
        for grid in d.grids() {
            let key = super::mean_key(&grid);
            let Some(mean) = grid_rows(d, spec, baseline, scheme, &grid, &mut rows) else {
                continue;
            };
            let Some(p) = spec.paper.get(scheme).filter(|_| key == paper_grid) else {
                continue;
            };
            rows.push(vec![
                scheme.clone(),
                "paper".into(),
                fmt(Some(p.d)),
                fmt(Some(p.gain)),
                ratio(p.gain, p.d),
                fmt(Some(p.blocked)),
                fmt(Some(p.redirected)),
                ratio(p.redirected, p.blocked),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
            ]);
            let ours_a = if mean[0] != 0.0 {
                mean[1] / mean[0]
            } else {
                0.0
            };
            let (paper_a, dr) = (p.gain / p.d, mean[0] / p.d);
            let ar = ours_a / paper_a;
            // The larger miss is the factor further from the paper's, as a ratio.
            let off = |x: f64| {
                if x > 0.0 {
                    x.max(1.0 / x)
                } else {
                    f64::INFINITY
                }
            };
            let (oa, od) = (off(ar), off(dr));
            let larger = if (oa / od - 1.0).abs() < 0.15 {
                "D and A miss about equally (within 15 % of each other, as ratios)"
            } else if oa > od {
                "A is the larger miss"
            } else {
                "D is the larger miss"
            };
            let at = if key == "all" {
                String::new()
            } else {
                format!(" at {key}")
            };
            findings.push(format!(
                "Decomposition, {scheme}{at}: ours ÷ paper is {dr:.2} for D ({:.1} % vs {:.1} %) and {ar:.2} for A ({ours_a:.2} vs {paper_a:.2}); {larger}.",
                mean[0], p.d
            ));
        }
    }
    (!rows.is_empty()).then(|| {
        (
            Table {
                header: [
                    "scheme",
                    "workload",
                    "D: baseline vs optimal (%)",
                    "G: gain (%)",
                    "A = G / D",
                    "blocked, baseline (% of read requests)",
                    "redirected (% of read requests)",
                    "coverage = redirected / blocked",
                    "blocked pages redirected (%)",
                    "… no entry / not staged (%)",
                    "… entry, no copy yet (%)",
                    "… copy's die busy (%)",
                ]
                .map(String::from)
                .to_vec(),
                rows,
            },
            findings,
        )
    })
}

/// The rows of one scheme at one grid point (each workload, then their mean); returns the
/// mean's columns.
fn grid_rows(
    d: &Data,
    spec: &DecompositionSpec,
    baseline: &str,
    scheme: &str,
    grid: &std::collections::BTreeMap<String, String>,
    rows: &mut Vec<Vec<String>>,
) -> Option<[f64; 8]> {
    // Per run index, the runs of every workload (for the mean row's interval).
    let mut per_run: Vec<Vec<Run>> = Vec::new();
    let mut cells: Vec<[f64; 8]> = Vec::new();
    for (w, g, label) in d.groups(None).into_iter().filter(|(_, g, _)| g == grid) {
        let (bs, os, ss) = (
            d.runs(&w, &g, baseline),
            d.runs(&w, &g, &spec.optimal),
            d.runs(&w, &g, scheme),
        );
        let runs: Vec<(usize, Run)> = (0..ss.len())
            .filter_map(|k| Some((k, run(spec, at(bs, k)?, at(os, k)?, at(ss, k)?)?)))
            .collect();
        if runs.is_empty() {
            continue;
        }
        let n = runs.len() as f64;
        let mean = |f: &dyn Fn(&Run) -> f64| runs.iter().map(|(_, r)| f(r)).sum::<f64>() / n;
        let cell = [
            mean(&|r| r.d),
            mean(&|r| r.g),
            mean(&|r| r.blocked),
            mean(&|r| r.redirected),
            mean(&|r| r.fate[0]),
            mean(&|r| r.fate[1]),
            mean(&|r| r.fate[2]),
            mean(&|r| r.fate[3]),
        ];
        rows.push(row(scheme, &label, &cell, None, None));
        cells.push(cell);
        for (k, r) in runs {
            if per_run.len() <= k {
                per_run.resize_with(k + 1, Vec::new);
            }
            per_run[k].push(r);
        }
    }
    if cells.is_empty() {
        return None;
    }
    let n = cells.len() as f64;
    let mean: [f64; 8] = std::array::from_fn(|i| cells.iter().map(|c| c[i]).sum::<f64>() / n);
    // Intervals over seeds of the mean over workloads (runs that cover every workload).
    let over_runs = |f: &dyn Fn(&Run) -> f64| {
        let vals: Vec<f64> = per_run
            .iter()
            .filter(|rs| rs.len() == cells.len())
            .map(|rs| rs.iter().map(f).sum::<f64>() / rs.len() as f64)
            .collect();
        Estimate::of(&vals)
    };
    let label = if grid.is_empty() {
        format!("mean of {} workloads", cells.len())
    } else {
        format!(
            "mean of {} workloads, {}",
            cells.len(),
            super::grid_label(grid)
        )
    };
    rows.push(row(
        scheme,
        &label,
        &mean,
        over_runs(&|r| r.d),
        over_runs(&|r| r.g),
    ));
    Some(mean)
}

fn row(
    scheme: &str,
    label: &str,
    c: &[f64; 8],
    d_ci: Option<Estimate>,
    g_ci: Option<Estimate>,
) -> Vec<String> {
    vec![
        scheme.to_string(),
        label.to_string(),
        with_interval(c[0], d_ci),
        with_interval(c[1], g_ci),
        ratio(c[1], c[0]),
        fmt(Some(c[2])),
        fmt(Some(c[3])),
        ratio(c[3], c[2]),
        fmt(Some(c[4])),
        fmt(Some(c[5])),
        fmt(Some(c[6])),
        fmt(Some(c[7])),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::ExperimentSpec;

    #[test]
    fn d_a_and_coverage_come_from_the_runs() {
        let spec: ExperimentSpec = toml::from_str(
            r#"
name = "t"
title = "t"
preset = "tiny"
baseline = "base"
[[workload]]
name = "a"
synth = "requests=10"
[[variant]]
name = "base"
[[variant]]
name = "opt"
[[variant]]
name = "s"
[decomposition]
optimal = "opt"
schemes = ["s"]
[decomposition.paper]
s = { d = 40.0, gain = 20.0, blocked = 30.0, redirected = 15.0 }
"#,
        )
        .unwrap();
        // B 100, O 80 (D 20 %), S 95 (G 5 %): A 0.25; 40 % blocked, 10 % redirected.
        let results = super::super::test_results(&spec, |p| {
            let mean = match p.variant.as_str() {
                "base" => 100.0,
                "opt" => 80.0,
                _ => 95.0,
            };
            serde_json::json!({
                "all": {"mean_us": mean},
                "read_requests_blocked_pct": 40.0,
                "read_requests_redirected_pct": 10.0,
                "reads_blocked": 50.0,
                "staging": {"redirected": 10.0, "misses": 30.0, "hits_without_copy": 5.0, "copy_busy": 5.0},
            })
        });
        let d = Data::new(&spec, &results);
        let (t, notes) = table(&d, spec.decomposition.as_ref().unwrap()).unwrap();
        let mean = t.rows.iter().find(|r| r[1].starts_with("mean")).unwrap();
        assert_eq!(
            mean[2..].to_vec(),
            ["20.0", "5.000", "0.25", "40.0", "10.0", "0.25", "20.0", "60.0", "10.0", "10.0"]
        );
        let paper = t.rows.iter().find(|r| r[1] == "paper").unwrap();
        assert_eq!((paper[4].as_str(), paper[7].as_str()), ("0.50", "0.50"));
        // D 0.50 of the paper's, A 0.50: equal misses.
        assert!(
            notes[0].contains("0.50 for D") && notes[0].contains("miss about equally"),
            "{notes:?}"
        );
    }
}
