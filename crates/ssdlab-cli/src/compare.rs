//! `ssdlab compare`: the headline metrics of run summaries side by side.

use anyhow::{Context, Result};
use serde_json::Value;
use std::path::PathBuf;

/// (label, JSON path) of each metric compared.
const METRICS: &[(&str, &str)] = &[
    ("requests", "requests"),
    ("all mean (us)", "all.mean_us"),
    ("all p99 (us)", "all.p99_us"),
    ("read mean (us)", "read.mean_us"),
    ("read p99 (us)", "read.p99_us"),
    ("read p99.9 (us)", "read.p99_9_us"),
    ("write mean (us)", "write.mean_us"),
    ("write p99 (us)", "write.p99_us"),
    ("reads blocked (%)", "reads_blocked_pct"),
    ("read requests blocked (%)", "read_requests_blocked_pct"),
    ("write amplification", "write_amplification"),
    ("GC jobs", "gc.count"),
    ("erases", "flash.erases"),
    ("idle (%)", "idle_pct"),
];

/// (label, JSON path within a flow's object) of each metric compared per I/O flow.
const FLOW_METRICS: &[(&str, &str)] = &[
    ("requests", "requests"),
    ("read mean (us)", "read.mean_us"),
    ("read p99 (us)", "read.p99_us"),
    ("write mean (us)", "write.mean_us"),
    ("write p99 (us)", "write.p99_us"),
    ("read requests blocked (%)", "read_requests_blocked_pct"),
    ("IOPS", "throughput.iops"),
];

/// A metric's value at a dotted path of `v`.
fn at(v: &Value, path: &str) -> Option<f64> {
    path.split('.')
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
}

/// The object of flow `name` in a summary's `flows`.
fn flow<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    v.get("flows")?
        .as_array()?
        .iter()
        .find(|f| f.get("name").and_then(Value::as_str) == Some(name))
}

/// A metric's value in a summary.
type Getter = Box<dyn Fn(&Value) -> Option<f64>>;

/// The compared rows: (label, key, the value in a summary).
type Row = (String, String, Getter);

/// The drive's metrics, then each flow of the first run (by name) with its own.
fn rows(first: &Value) -> Vec<Row> {
    let mut rows: Vec<Row> = METRICS
        .iter()
        .map(|&(label, path)| {
            let f: Getter = Box::new(move |v| at(v, path));
            (label.to_string(), path.to_string(), f)
        })
        .collect();
    for name in flow_names(first) {
        for &(label, path) in FLOW_METRICS {
            let n = name.clone();
            let f: Getter = Box::new(move |v| flow(v, &n).and_then(|f| at(f, path)));
            rows.push((
                format!("{name}: {label}"),
                format!("flows[{name}].{path}"),
                f,
            ));
        }
    }
    rows
}

/// The names of a summary's flows, in order.
fn flow_names(v: &Value) -> Vec<String> {
    v.get("flows")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(|f| f.get("name").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs summaries were written by `ssdlab run --json` (or are results of an experiment point,
/// whose `summary` is used).
pub fn compare(files: &[PathBuf], json: bool) -> Result<String> {
    if files.len() < 2 {
        anyhow::bail!("compare needs at least two summaries (ssdlab run --json FILE)");
    }
    let mut points: Vec<Option<Value>> = Vec::new();
    let runs: Vec<Value> = files
        .iter()
        .map(|f| {
            let text =
                ssdlab::files::read_text(f).with_context(|| format!("reading {}", f.display()))?;
            let v: Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a JSON summary", f.display()))?;
            // An experiment result holds the summary under `summary`, its point beside it.
            points.push(v.get("point").cloned());
            let v = v.get("summary").cloned().unwrap_or(v);
            if v.get("all").is_none() {
                anyhow::bail!("{}: not a run summary (no `all` latencies)", f.display());
            }
            Ok(v)
        })
        .collect::<Result<_>>()?;
    let get = at;
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    // What each run is: its scheme, and for an experiment point its workload, variant, preset.
    let labels: Vec<String> = runs
        .iter()
        .zip(&points)
        .map(|(r, p)| {
            let mut l = format!(
                "scheme {}",
                text(r.get("scheme")).unwrap_or_else(|| "?".into())
            );
            if let Some(p) = p {
                for key in ["workload", "variant", "preset"] {
                    if let Some(v) = text(p.get(key)) {
                        l += &format!(", {key} {v}");
                    }
                }
            }
            l + &format!(
                ", {} requests",
                get(r, "requests").map_or("?".to_string(), fmt)
            )
        })
        .collect();
    let mut warnings = Vec::new();
    let requests: Vec<Option<f64>> = runs.iter().map(|r| get(r, "requests")).collect();
    if requests.iter().any(|n| *n != requests[0]) {
        warnings.push(format!(
            "the runs replay different numbers of requests ({}): their differences mix workload and scheme",
            requests
                .iter()
                .map(|n| n.map_or("?".to_string(), fmt))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let workloads: Vec<Option<String>> = points
        .iter()
        .map(|p| text(p.as_ref().and_then(|p| p.get("workload"))))
        .collect();
    if workloads.iter().all(Option::is_some) && workloads.iter().any(|w| *w != workloads[0]) {
        warnings.push(format!(
            "the runs are points of different workloads ({})",
            workloads
                .iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let flows: Vec<Vec<String>> = runs.iter().map(flow_names).collect();
    if flows.iter().any(|f| *f != flows[0]) {
        warnings.push(format!(
            "the runs have different I/O flows ({}): a flow missing from a run shows as -",
            flows
                .iter()
                .map(|f| if f.is_empty() {
                    "one".to_string()
                } else {
                    f.join("+")
                })
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let rows = rows(&runs[0]);
    if json {
        let rows: Vec<Value> = rows
            .iter()
            .map(|(label, path, get)| {
                let values: Vec<Option<f64>> = runs.iter().map(get).collect();
                let base = values[0];
                let diffs: Vec<Option<f64>> = values
                    .iter()
                    .map(|v| pct(base, *v))
                    .collect();
                serde_json::json!({ "metric": label, "key": path, "values": values, "pct_vs_first": diffs })
            })
            .collect();
        return Ok(serde_json::to_string_pretty(&serde_json::json!({
            "runs": names,
            "labels": labels,
            "warnings": warnings,
            "metrics": rows
        }))? + "\n");
    }
    let mut out = String::new();
    for (i, (n, l)) in names.iter().zip(&labels).enumerate() {
        out += &format!("[{}] {n}: {l}\n", i + 1);
    }
    for w in &warnings {
        out += &format!("warning: {w}\n");
    }
    let width = rows
        .iter()
        .map(|r| r.0.len() + 1)
        .max()
        .unwrap_or(0)
        .max(22);
    out += &format!("{:<width$}", "metric");
    for i in 0..runs.len() {
        out += &format!("{:>14}", format!("[{}]", i + 1));
        if i > 0 {
            out += &format!("{:>10}", "vs [1]");
        }
    }
    out += "\n";
    for (label, _, get) in &rows {
        out += &format!("{label:<width$}");
        let base = get(&runs[0]);
        for (i, r) in runs.iter().enumerate() {
            let v = get(r);
            out += &format!("{:>14}", v.map_or("-".to_string(), fmt));
            if i > 0 {
                let d = pct(base, v).map_or("-".to_string(), |d| format!("{d:+.1} %"));
                out += &format!("{d:>10}");
            }
        }
        out += "\n";
    }
    Ok(out)
}

/// `v` against `base`, %.
fn pct(base: Option<f64>, v: Option<f64>) -> Option<f64> {
    match (base, v) {
        (Some(b), Some(v)) if b != 0.0 => Some((v - b) / b * 100.0),
        _ => None,
    }
}

fn fmt(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}
