//! `run --requests-out FILE`: one CSV row per completed request, streamed (gzip when the name
//! ends in `.gz`) to a temporary file that replaces FILE only when the run completes.

use crate::output;
use anyhow::{Context, Result};
use flate2::write::GzEncoder;
use ssdlab::files::Output;
use ssdlab::metrics::RequestRecord;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The file, plain or gzip.
enum Sink {
    Plain(BufWriter<Output>),
    Gzip(GzEncoder<BufWriter<Output>>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(buf),
            Sink::Gzip(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Gzip(w) => w.flush(),
        }
    }
}

/// An open per-request CSV.
pub struct RequestsOut {
    path: PathBuf,
    csv: csv::Writer<Sink>,
    rows: u64,
}

impl RequestsOut {
    /// Opens `path`'s temporary file before the run, so an unwritable path fails at once and
    /// an existing file stays as it is until the run completes.
    pub fn create(path: &Path) -> Result<Self> {
        let file = BufWriter::with_capacity(1 << 16, output::create(path)?);
        let sink = if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
        {
            Sink::Gzip(GzEncoder::new(file, flate2::Compression::fast()))
        } else {
            Sink::Plain(file)
        };
        Ok(RequestsOut {
            path: path.to_path_buf(),
            csv: csv::Writer::from_writer(sink),
            rows: 0,
        })
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one row (the header comes with the first).
    pub fn write(&mut self, r: &RequestRecord) -> std::io::Result<()> {
        self.rows += 1;
        self.csv.serialize(r).map_err(std::io::Error::other)
    }

    /// Flushes and closes the file (ends the gzip stream); returns the rows written.
    pub fn finish(self) -> Result<u64> {
        let what = || format!("writing {}", self.path.display());
        let sink = self
            .csv
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(what)?;
        let file = match sink {
            Sink::Plain(w) => w,
            Sink::Gzip(w) => w.finish().with_context(what)?,
        };
        output::commit(
            file.into_inner()
                .map_err(|e| e.into_error())
                .with_context(what)?,
        )?;
        Ok(self.rows)
    }
}
