//! `ssdlab run --summary-csv FILE`: one flat row per run, appended, so sweeps load into any tool.
//! An append is whole or nothing: the file with its new row is written beside it and renamed
//! onto it, so a failed or killed run leaves the rows that were there and no partial one.

use crate::output;
use anyhow::{bail, Context, Result};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::path::Path;

/// The scalar values of a JSON document under their dotted paths (`read.mean_us`,
/// `flash.by_cause.gc.1`), in the document's own order — the summary's field order, as
/// `serde_json` writes a struct; latency CDFs are left out.
pub fn flatten(json: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut de = serde_json::Deserializer::from_str(json);
    Flat {
        key: String::new(),
        out: &mut out,
    }
    .deserialize(&mut de)
    .context("flattening the summary")?;
    de.end().context("flattening the summary")?;
    Ok(out)
}

/// Walks a JSON value in document order, appending (dotted path, text) per scalar.
struct Flat<'a> {
    key: String,
    out: &'a mut Vec<(String, String)>,
}

impl Flat<'_> {
    fn join(&self, k: &str) -> String {
        if self.key.is_empty() {
            k.to_string()
        } else {
            format!("{}.{k}", self.key)
        }
    }

    fn push(self, text: String) {
        self.out.push((self.key, text));
    }
}

impl<'de> DeserializeSeed<'de> for Flat<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Flat<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            if k == "cdf" {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let key = self.join(&k);
            map.next_value_seed(Flat {
                key,
                out: &mut *self.out,
            })?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let key = self.join(&i.to_string());
            let seed = Flat {
                key,
                out: &mut *self.out,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.push(String::new());
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.push(v.to_string());
        Ok(())
    }

    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        // As serde_json prints a float (`3.0`, not `3`).
        self.push(Value::from(v).to_string());
        Ok(())
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
pub fn append(path: &Path, summary_json: &str, extra: &[(&str, String)]) -> Result<()> {
    regular(path)?;
    let mut row: Vec<(String, String)> = extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    // A key given first (the run's `seed`) is not repeated from the summary.
    row.extend(
        flatten(summary_json)?
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
    fn flatten_names_scalars_by_path_in_document_order_and_drops_cdfs() {
        let json = r#"{"s": "x", "b": {"c": [2, 3.0], "cdf": [[0.5, 1.0]]}, "a": 1, "n": null, "t": true}"#;
        let f = flatten(json).unwrap();
        let want = [
            ("s", "x"),
            ("b.c.0", "2"),
            ("b.c.1", "3.0"),
            ("a", "1"),
            ("n", ""),
            ("t", "true"),
        ];
        assert_eq!(
            f,
            want.map(|(k, v)| (k.to_string(), v.to_string())).to_vec()
        );
    }
}
