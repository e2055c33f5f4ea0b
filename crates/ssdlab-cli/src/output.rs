//! Output files written whole or not at all, and checked against each other and the inputs.
//!
//! A regular file (or a new one) is written to a temporary file beside it and renamed onto it
//! only when complete, so a run that fails or is killed leaves the previous file as it was and
//! never a half-written one. A device or a pipe (`/dev/stdout`, a FIFO) cannot be renamed onto
//! and is written in place.

use anyhow::{bail, Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An output being written.
pub struct Output {
    path: PathBuf,
    file: File,
    /// The temporary file renamed onto `path` at [`Output::commit`] (`None`: written in place).
    tmp: Option<PathBuf>,
}

impl Output {
    /// Opens `path` for writing: a temporary file beside it, or the device or pipe itself.
    /// Fails at once when the place cannot be written.
    pub fn create(path: &Path) -> Result<Self> {
        let in_place = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if in_place {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            return Ok(Output {
                path: path.to_path_buf(),
                file,
                tmp: None,
            });
        }
        let Some(name) = path.file_name() else {
            bail!("cannot write {}: not a file name", path.display());
        };
        // A name no other writer uses: the process, then a per-process counter.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = path.with_file_name(format!(
            ".{}.{}-{n}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file =
            File::create(&tmp).with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Output {
            path: path.to_path_buf(),
            file,
            tmp: Some(tmp),
        })
    }

    /// The file this output ends up in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Finishes the output: flushed, and renamed onto its path.
    pub fn commit(mut self) -> Result<()> {
        let what = || format!("writing {}", self.path.display());
        self.file.flush().with_context(what)?;
        if let Some(tmp) = self.tmp.take() {
            if let Err(e) = std::fs::rename(&tmp, &self.path) {
                let _ = std::fs::remove_file(&tmp);
                return Err(e).with_context(what);
            }
        }
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Drop for Output {
    /// An output never committed leaves no temporary file behind.
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes `text` to `path` whole or not at all.
pub fn write_whole(path: &Path, text: &[u8]) -> Result<()> {
    let mut out = Output::create(path)?;
    out.write_all(text)
        .with_context(|| format!("writing {}", path.display()))?;
    out.commit()
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

/// Refuses an output that is also an input or another output (after canonicalisation), naming
/// both options. `-` (standard input) is not a file and is left out.
pub fn check_distinct(inputs: &[(&str, &Path)], outputs: &[(&str, &Path)]) -> Result<()> {
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
    fn an_output_not_committed_leaves_the_old_file_and_no_temporary() {
        let dir = std::env::temp_dir().join(format!("ssdlab-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.json");
        std::fs::write(&path, "old").unwrap();
        {
            let mut o = Output::create(&path).unwrap();
            o.write_all(b"half").unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        write_whole(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
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
