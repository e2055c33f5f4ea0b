//! `ssdlab run --summary-csv FILE`: one flat row per run, appended, so sweeps load into any tool.
//! An append is whole or nothing: the file with its new row is written beside it and renamed
//! onto it, so a failed or killed run leaves the rows that were there and no partial one.

use crate::output;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::Path;

/// The summary's scalar values under their dotted JSON paths (`read.mean_us`,
/// `flash.by_cause.gc.1`); latency CDFs are left out.
pub fn flatten(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

fn walk(v: &Value, key: String, out: &mut Vec<(String, String)>) {
    let join = |k: &str| {
        if key.is_empty() {
            k.to_string()
        } else {
            format!("{key}.{k}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                if k != "cdf" {
                    walk(v, join(k), out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                walk(v, join(&i.to_string()), out);
            }
        }
        Value::Null => out.push((key, String::new())),
        Value::String(s) => out.push((key, s.clone())),
        other => out.push((key, other.to_string())),
    }
}

/// Checks before a run that `path` can take a row: missing or a regular file (a device or a
/// pipe would be read without bound for its header and cannot be replaced whole), in a
/// directory that can be written.
pub fn check(path: &Path) -> Result<()> {
    regular(path)?;
    output::create(path).map(drop)
}

/// Refuses a `path` that exists and is not a regular file.
fn regular(path: &Path) -> Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        bail!(
            "--summary-csv {}: not a regular file (rows are appended to a CSV file, which is replaced whole)",
            path.display()
        );
    }
    Ok(())
}

/// Appends `summary` as one row to `path`: a new or empty file gets the header first; an
/// existing header must name every column of this run (a run with other sections, e.g. a
/// scheme's, goes to another file) and its columns this run lacks stay empty.
pub fn append(path: &Path, summary: &Value, extra: &[(&str, String)]) -> Result<()> {
    regular(path)?;
    let mut row: Vec<(String, String)> = extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    // A key given first (the run's `seed`) is not repeated from the summary.
    row.extend(
        flatten(summary)
            .into_iter()
            .filter(|(k, _)| !extra.iter().any(|(e, _)| e == k)),
    );
    // Only the header line is read, however many rows the file has.
    let header: Vec<String> = match std::fs::File::open(path) {
        Ok(f) => csv::Reader::from_reader(f)
            .headers()
            .with_context(|| format!("{}: reading its header", path.display()))?
            .iter()
            .map(str::to_string)
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut out = output::create(path)?;
    if let Ok(mut old) = std::fs::File::open(path) {
        std::io::copy(&mut old, &mut out).with_context(|| format!("copying {}", path.display()))?;
    }
    let mut w = csv::Writer::from_writer(out);
    let columns: Vec<String> = if header.is_empty() {
        let cols: Vec<String> = row.iter().map(|(k, _)| k.clone()).collect();
        w.write_record(&cols)?;
        cols
    } else {
        let missing: Vec<&str> = row
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| !header.iter().any(|h| h == k))
            .collect();
        if !missing.is_empty() {
            bail!(
                "{}: its header lacks {} column(s) of this run ({}…); write this run to another file",
                path.display(),
                missing.len(),
                missing[..missing.len().min(3)].join(", ")
            );
        }
        header
    };
    let record: Vec<&str> = columns
        .iter()
        .map(|c| {
            row.iter()
                .find(|(k, _)| k == c)
                .map_or("", |(_, v)| v.as_str())
        })
        .collect();
    w.write_record(&record)?;
    output::commit(
        w.into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("writing {}", path.display()))?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_names_scalars_by_path_and_drops_cdfs() {
        let v = serde_json::json!({"a": 1, "b": {"c": [2, 3], "cdf": [[0.5, 1.0]]}, "s": "x", "n": null});
        let f = flatten(&v);
        assert_eq!(
            f,
            vec![
                ("a".to_string(), "1".to_string()),
                ("b.c.0".to_string(), "2".to_string()),
                ("b.c.1".to_string(), "3".to_string()),
                ("n".to_string(), String::new()),
                ("s".to_string(), "x".to_string()),
            ]
        );
    }
}
