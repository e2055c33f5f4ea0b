//! The tool's own files. Text inputs (config files, experiment and job files, run summaries)
//! are read with a size cap, so a device such as `/dev/zero` or a file far larger than any
//! such input is refused by name instead of filling memory. Outputs (results, summaries,
//! request records, reports) are written whole or not at all: a regular file (or a new one)
//! is written to a temporary file beside it and renamed onto it only when complete, so a run
//! that fails or is killed leaves the previous file as it was and never a half-written one; a
//! device or a pipe (`/dev/stdout`, a FIFO) cannot be renamed onto and is written in place.
//!
//! Temporary files are named `.<name>.<pid>-<n>.tmp`. The ones a process has open are listed
//! so that a signal handler can remove them ([`remove_temporaries`]: the CLI does on SIGINT and
//! SIGTERM), and the first output a process writes into a directory removes those a process no
//! longer running left there (killed with SIGKILL, say).

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary files of outputs being written by this process.
static OPEN: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Directories this process has swept of stale temporary files.
static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);

/// Removes the temporary files of every output this process is writing (for a signal
/// handler: the outputs keep their previous content). Returns how many it removed.
pub fn remove_temporaries() -> usize {
    let open = OPEN
        .lock()
        .map(|mut o| std::mem::take(&mut *o))
        .unwrap_or_default();
    open.iter()
        .filter(|t| std::fs::remove_file(t).is_ok())
        .count()
}

fn forget(tmp: &Path) {
    if let Ok(mut o) = OPEN.lock() {
        o.retain(|t| t != tmp);
    }
}

/// The process id in a temporary file's name `.<name>.<pid>-<n>.tmp`, if it is one.
fn temporary_pid(file_name: &str) -> Option<u32> {
    let stem = file_name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (rest, n) = stem.rsplit_once('-')?;
    n.parse::<u64>().ok()?;
    let (_, pid) = rest.rsplit_once('.')?;
    pid.parse().ok()
}

/// Whether process `pid` is running (`/proc` where there is one; elsewhere assumed so).
fn running(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || pid == std::process::id() || proc.join(pid.to_string()).exists()
}

/// Once per directory and process: removes the temporary files that processes no longer
/// running left in `dir`.
fn sweep(dir: &Path) {
    let Ok(mut swept) = SWEPT.lock() else { return };
    if !swept
        .get_or_insert_with(HashSet::new)
        .insert(dir.to_path_buf())
    {
        return;
    }
    drop(swept);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if let Some(pid) = temporary_pid(&name.to_string_lossy()) {
            if !running(pid) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

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
            Some(t) => {
                let dir = t.parent().filter(|d| !d.as_os_str().is_empty());
                sweep(dir.unwrap_or(Path::new(".")));
                if let Ok(mut o) = OPEN.lock() {
                    o.push(t.clone());
                }
                File::create(t).inspect_err(|_| forget(t))?
            }
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
            Some(tmp) => {
                let r = std::fs::rename(&tmp, &self.path).inspect_err(|_| {
                    let _ = std::fs::remove_file(&tmp);
                });
                forget(&tmp);
                r
            }
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
            let _ = std::fs::remove_file(&tmp);
            forget(&tmp);
        }
    }
}

/// An output written as a stream, gzip when its name ends in `.gz`, to a temporary file that
/// replaces it only at [`Streamed::finish`] (as [`Output`]).
pub struct Streamed {
    sink: Sink,
}

enum Sink {
    Plain(std::io::BufWriter<Output>),
    Gzip(flate2::write::GzEncoder<std::io::BufWriter<Output>>),
}

impl Streamed {
    /// Opens `path` ([`Output::create`]).
    ///
    /// # Errors
    /// As [`Output::create`].
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let file = std::io::BufWriter::with_capacity(1 << 16, Output::create(path)?);
        let gz = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
        Ok(Streamed {
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

    /// The file this output ends up in.
    pub fn path(&self) -> &Path {
        match &self.sink {
            Sink::Plain(w) => w.get_ref().path(),
            Sink::Gzip(w) => w.get_ref().get_ref().path(),
        }
    }

    /// Ends the stream (and the gzip member) and puts the file in place.
    ///
    /// # Errors
    /// I/O errors of the last writes, the flush or the rename.
    pub fn finish(self) -> std::io::Result<()> {
        let file = match self.sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish()?,
        };
        file.into_inner().map_err(|e| e.into_error())?.commit()
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
    fn temporaries_of_dead_processes_are_swept_and_live_ones_listed() {
        let dir = std::env::temp_dir().join(format!("ssdlab-sweep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // pid 0 is never a process of ours; u32::MAX - 1 is beyond any pid limit.
        let stale = dir.join(format!(".out.json.{}-3.tmp", u32::MAX - 1));
        let mine = dir.join(format!(".keep.json.{}-0.tmp", std::process::id()));
        std::fs::write(&stale, "x").unwrap();
        std::fs::write(&mine, "x").unwrap();
        assert_eq!(temporary_pid(".out.json.123-4.tmp"), Some(123));
        assert_eq!(temporary_pid("out.json"), None);
        let mut o = Output::create(&dir.join("out.json")).unwrap();
        o.write_all(b"half").unwrap();
        assert!(!stale.exists() && mine.exists());
        // Listed for a signal handler while it is written (the CLI's test sends the signal).
        let tmp = o.tmp.clone().unwrap();
        assert!(OPEN.lock().unwrap().contains(&tmp));
        o.commit().unwrap();
        assert!(!OPEN.lock().unwrap().contains(&tmp));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_without_end_is_refused_at_the_cap() {
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
    }
}
