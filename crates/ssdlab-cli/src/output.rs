//! The CLI's outputs: written whole through [`ssdlab::files::Output`], with the path in every
//! error, and checked against each other and the inputs.

use anyhow::{bail, Context, Result};
use ssdlab::files::Output;
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

/// A file written as a stream (gzip when its name ends in `.gz`) to a temporary file that
/// replaces it only at [`Streamed::finish`].
pub struct Streamed {
    path: PathBuf,
    sink: Sink,
}

enum Sink {
    Plain(std::io::BufWriter<Output>),
    Gzip(flate2::write::GzEncoder<std::io::BufWriter<Output>>),
}

impl Streamed {
    /// Opens `path`'s temporary file now, so an unwritable path fails before a run.
    pub fn create(path: &Path) -> Result<Self> {
        let file = std::io::BufWriter::with_capacity(1 << 16, create(path)?);
        let gz = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
        Ok(Streamed {
            path: path.to_path_buf(),
            sink: if gz {
                Sink::Gzip(flate2::write::GzEncoder::new(
                    file,
                    flate2::Compression::fast(),
                ))
            } else {
                Sink::Plain(file)
            },
        })
    }

    /// Ends the stream (and the gzip member) and puts the file in place.
    pub fn finish(self) -> Result<()> {
        let what = || format!("writing {}", self.path.display());
        let file = match self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish().with_context(what)?,
        };
        commit(
            file.into_inner()
                .map_err(|e| e.into_error())
                .with_context(what)?,
        )
    }
}

impl Write for Streamed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.sink {
            Sink::Plain(w) => w.write(buf),
            Sink::Gzip(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.sink {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.flush(),
        }
    }
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
