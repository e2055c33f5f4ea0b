//! `run --requests-out FILE`: one CSV row per completed request, streamed (gzip when the name
//! ends in `.gz`) to a temporary file that replaces FILE only when the run completes.

use crate::output;
use anyhow::{Context, Result};
use ssdlab::files::Streamed;
use ssdlab::metrics::RequestRecord;
use std::path::{Path, PathBuf};

/// An open per-request CSV.
pub struct RequestsOut {
    path: PathBuf,
    csv: csv::Writer<Streamed>,
    rows: u64,
}

impl RequestsOut {
    /// Opens `path`'s temporary file before the run, so an unwritable path fails at once and
    /// an existing file stays as it is until the run completes.
    pub fn create(path: &Path) -> Result<Self> {
        Ok(RequestsOut {
            path: path.to_path_buf(),
            csv: csv::Writer::from_writer(output::streamed(path)?),
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
        output::finish(
            self.csv
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(what)?,
        )?;
        Ok(self.rows)
    }
}
