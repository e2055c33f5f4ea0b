//! The tool's own files. Text inputs (config files, experiment and job files, run summaries)
//! are read with a size cap, so a device such as `/dev/zero` or a file far larger than any
//! such input is refused by name instead of filling memory. Outputs (results, summaries,
//! request records, reports) are written whole or not at all: a regular file (or a new one)
//! is written to a temporary file beside it and renamed onto it only when complete, so a run
//! that fails or is killed leaves the previous file as it was and never a half-written one; a
//! device or a pipe (`/dev/stdout`, a FIFO) cannot be renamed onto and is written in place.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Largest text input read, bytes (64 MiB; the largest committed result is 24 KB).
pub const MAX_TEXT_BYTES: u64 = 64 << 20;

/// Reads `path` as UTF-8 text of at most [`MAX_TEXT_BYTES`].
///
/// # Errors
/// I/O errors, invalid UTF-8, and `InvalidData` past the cap.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_TEXT_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_TEXT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {} MiB, more than any config, experiment, job or summary file",
                MAX_TEXT_BYTES >> 20
            ),
        ));
    }
    Ok(text)
}

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
    ///
    /// # Errors
    /// I/O errors opening the file, and a path without a file name.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let in_place = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        let tmp = if in_place {
            None
        } else {
            let name = path.file_name().ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name")
            })?;
            // A name no other writer uses: the process, then a per-process counter.
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Some(path.with_file_name(format!(
                ".{}.{}-{n}.tmp",
                name.to_string_lossy(),
                std::process::id()
            )))
        };
        let file = match &tmp {
            Some(t) => File::create(t)?,
            None => std::fs::OpenOptions::new().write(true).open(path)?,
        };
        Ok(Output {
            path: path.to_path_buf(),
            file,
            tmp,
        })
    }

    /// The file this output ends up in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Finishes the output: flushed, and renamed onto its path.
    ///
    /// # Errors
    /// I/O errors of the flush or the rename (the temporary file is then removed).
    pub fn commit(mut self) -> std::io::Result<()> {
        self.file.flush()?;
        match self.tmp.take() {
            Some(tmp) => std::fs::rename(&tmp, &self.path).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            }),
            None => Ok(()),
        }
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

/// Writes `bytes` to `path` whole or not at all.
///
/// # Errors
/// As [`Output::create`], its writes and [`Output::commit`].
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut out = Output::create(path)?;
    out.write_all(bytes)?;
    out.commit()
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
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_without_end_is_refused_at_the_cap() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
    }
}
