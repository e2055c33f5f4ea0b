//! The CLI's outputs: written whole through [`ssdlab::files::Output`], with the path in every
//! error, and checked against each other and the inputs.

use anyhow::{bail, Context, Result};
use ssdlab::files::{Output, Streamed};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Opens `path` for writing whole ([`Output::create`]); fails at once when it cannot be.
pub fn create(path: &Path) -> Result<Output> {
    Output::create(path).with_context(|| format!("cannot write {}", path.display()))
}

/// Finishes `out` ([`Output::commit`]).
pub fn commit(out: Output) -> Result<()> {
    let path = out.path().to_path_buf();
    out.commit()
        .with_context(|| format!("writing {}", path.display()))
}

/// Streams what `write` writes to `path` (buffered), whole or not at all; returns its result.
pub fn write_streamed<T>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<T>,
) -> Result<T> {
    let what = || format!("writing {}", path.display());
    let mut out = std::io::BufWriter::new(create(path)?);
    let value = write(&mut out).with_context(what)?;
    commit(
        out.into_inner()
            .map_err(|e| e.into_error())
            .with_context(what)?,
    )?;
    Ok(value)
}

/// Opens `path` as a streamed output, plain or gzip by its name ([`Streamed::create`]);
/// fails at once when it cannot be written.
pub fn streamed(path: &Path) -> Result<Streamed> {
    Streamed::create(path).with_context(|| format!("cannot write {}", path.display()))
}

/// Finishes a streamed output ([`Streamed::finish`]).
pub fn finish(out: Streamed) -> Result<()> {
    let path = out.path().to_path_buf();
    out.finish()
        .with_context(|| format!("writing {}", path.display()))
}

/// Writes `bytes` to `path` whole or not at all.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = create(path)?;
    out.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))?;
    commit(out)
}

/// The file a path names, for comparing paths: canonical when it exists, else its canonical
/// directory joined with its name.
fn identity(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (dir.canonicalize(), path.file_name()) {
        (Ok(d), Some(n)) => d.join(n),
        _ => path.to_path_buf(),
    }
}

/// Refuses an output named `-` (outputs are files, written whole and renamed into place, never
/// standard output) and an output that is also an input or another output (after
/// canonicalisation), naming both options. An input `-` (standard input) is not a file and is
/// left out.
pub fn check_distinct(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<()> {
    if let Some((option, _)) = outputs.iter().find(|(_, p)| p.as_os_str() == "-") {
        bail!(
            "{option} -: outputs go to files (written whole, then renamed into place), not to standard output; name a file, e.g. {option} target/run.out"
        );
    }
    let named: Vec<(&str, PathBuf, bool)> = inputs
        .iter()
        .map(|(o, p)| (*o, p, false))
        .chain(outputs.iter().map(|(o, p)| (*o, p, true)))
        .filter(|(_, p, _)| p.as_os_str() != "-")
        .map(|(o, p, out)| (o, identity(p), out))
        .collect();
    for (i, (a, pa, a_out)) in named.iter().enumerate() {
        for (b, pb, b_out) in &named[i + 1..] {
            if pa == pb && (*a_out || *b_out) {
                bail!(
                    "{a} and {b} name the same file ({}): an output would overwrite {}",
                    pa.display(),
                    if *a_out && *b_out {
                        "the other output"
                    } else {
                        "the input"
                    }
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_equal_to_an_input_or_each_other_are_refused() {
        let dir = std::env::temp_dir().join(format!("ssdlab-distinct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.json");
        std::fs::write(&path, "old").unwrap();
        let same = dir.join(".").join("out.json");
        let e = check_distinct(&[("--trace", &path)], &[("--json", &same)]).unwrap_err();
        assert!(e.to_string().contains("--trace and --json"), "{e}");
        let new = dir.join("new.csv");
        let e = check_distinct(&[], &[("--json", &new), ("--requests-out", &new)]).unwrap_err();
        assert!(e.to_string().contains("the other output"), "{e}");
        check_distinct(&[("--trace", Path::new("-"))], &[("--json", &path)]).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
