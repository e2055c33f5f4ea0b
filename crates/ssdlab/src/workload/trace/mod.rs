//! Streaming trace readers. A trace is read one line at a time (plain or gzip), never loaded
//! whole; the format is detected from the first lines unless forced.

mod detect;
mod formats;
mod stats;

pub use formats::{BlkAction, Format, TimeUnit};
pub use stats::{stats, summarise, TraceStats};

use super::Request;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Chain, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use thiserror::Error;

/// A problem reading a trace, naming file and line.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file cannot be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Reading failed partway (a truncated or corrupt gzip stream, a failing device).
    #[error("{path}:{line}: cannot read this line: {source}")]
    ReadAt {
        /// The file.
        path: PathBuf,
        /// 1-based number of the line (or binary record) being read.
        line: u64,
        /// The cause.
        source: std::io::Error,
    },
    /// A line does not match the format.
    #[error("{path}:{line}: field `{field}`: expected {expected}, found `{found}`")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The field that failed.
        field: &'static str,
        /// What the format requires there.
        expected: String,
        /// What the line holds (truncated).
        found: String,
    },
    /// The file holds no data at all.
    #[error("{path}: the trace is empty (no requests to replay)")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The input was read to its end and every record was dropped.
    #[error("{path}: no request to replay: {why}")]
    NoRequests {
        /// The file.
        path: PathBuf,
        /// What became of the records.
        why: String,
    },
    /// No known format matches the first lines.
    #[error("{path}: cannot detect the trace format from its first lines (tried msr, spc, fiu, disksim, flashnet, blktrace, vscsi, vscsi-bin); use --format")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
    },
    /// A trace extension (`trace extend`) cannot go on.
    #[error("trace extend: {why}")]
    Extend {
        /// What stops it.
        why: String,
    },
    /// An address beyond the logical capacity with `ftl.out_of_range = "error"`.
    #[error("request {index}: bytes {offset}..{end} are beyond the logical capacity of {capacity} bytes (ftl.out_of_range = \"error\"; use \"wrap\" to fold them)")]
    OutOfRange {
        /// 0-based request index.
        index: u64,
        /// Start byte.
        offset: u64,
        /// End byte.
        end: u64,
        /// Logical capacity.
        capacity: u64,
    },
}

impl TraceCounts {
    /// `", N by --skip"` when requests were left out at the start, else nothing.
    pub fn skip_note(&self) -> String {
        match self.skipped_head {
            0 => String::new(),
            n => format!(", {n} by --skip"),
        }
    }
}

/// Options of a trace reader.
#[derive(Debug, Clone, Default)]
pub struct TraceOptions {
    /// Format (`None` = detect).
    pub format: Option<Format>,
    /// Force the unit of DiskSim-style timestamps.
    pub time_unit: Option<TimeUnit>,
    /// Stop after this many requests.
    pub limit: Option<u64>,
    /// Leave out the first N requests (after the device filter); times then count from the
    /// first request kept.
    pub skip: u64,
    /// Keep only requests of this device / disk / ASU.
    pub device: Option<u32>,
    /// Skip malformed lines (counted) instead of stopping.
    pub lenient: bool,
    /// blkparse events that become requests (default D).
    pub blk_action: Option<BlkAction>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What the reader saw, for reports.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TraceCounts {
    /// Lines read.
    pub lines: u64,
    /// Requests produced.
    pub requests: u64,
    /// Malformed lines skipped (`--lenient`).
    pub skipped_malformed: u64,
    /// Non-record lines skipped (blank, comments, headers, tar framing).
    pub skipped_framing: u64,
    /// Zero-length requests skipped.
    pub skipped_zero_size: u64,
    /// Requests of other devices dropped by the device filter.
    pub filtered_device: u64,
    /// Requests left out at the start (`skip`; absent from JSON when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_head: u64,
    /// Timestamps earlier than the previous one, clamped to it.
    pub clamped_timestamps: u64,
    /// The longest gap between consecutive arrivals: (gap ns, 1-based line of the later
    /// record). Not serialized (results stay as they were); the CLI warns when it dwarfs the
    /// rest of the trace.
    #[serde(skip)]
    pub longest_gap: (u64, u64),
    /// Time from the first to the last arrival, ns (not serialized).
    #[serde(skip)]
    pub span_ns: u64,
}

impl TraceCounts {
    /// A warning if one gap between arrivals is implausible: over an hour, and over 1,000 times
    /// the mean gap of the other requests (one corrupt timestamp stretches a replay to years).
    pub fn gap_warning(&self) -> Option<String> {
        let (gap, line) = self.longest_gap;
        let others = self.requests.checked_sub(2).filter(|&n| n > 0)?;
        let mean_others = (self.span_ns - gap) as f64 / others as f64;
        (gap > 3_600_000_000_000 && gap as f64 > 1e3 * mean_others).then(|| {
            format!(
                "line {line}: arrives {:.3e} s after the previous request; a corrupt timestamp? (the replay's simulated time includes the gap)",
                gap as f64 / 1e9
            )
        })
    }
}

/// Longest accepted line: a hostile or binary file cannot make the reader buffer it whole.
pub const MAX_LINE_BYTES: u64 = 64 * 1024;

/// Largest accepted request (1 GiB): bigger sizes are corrupt records, and splitting one into
/// pages would take memory in proportion.
pub const MAX_REQUEST_BYTES: u64 = 1 << 30;

/// A streaming reader over one trace file.
pub struct TraceReader {
    path: PathBuf,
    input: Box<dyn BufRead + Send>,
    format: Format,
    unit: TimeUnit,
    opts: TraceOptions,
    buf: Vec<u8>,
    first_ns: Option<u128>,
    last_ns: u64,
    /// Counters so far.
    pub counts: TraceCounts,
    done: bool,
    /// Bytes taken from the source so far (compressed bytes for gzip), for progress.
    consumed: Arc<AtomicU64>,
}

/// A byte source that counts what is read from it.
struct Counting {
    inner: Box<dyn Read + Send>,
    n: Arc<AtomicU64>,
}

impl Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Maps an I/O error on `path` to a [`TraceError::Io`].
fn io_error(path: &Path) -> impl Fn(std::io::Error) -> TraceError + Copy + '_ {
    |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Opens the trace once (`-`: standard input). Nothing is read twice, so pipes, FIFOs and
/// stdin give the same requests as the file they carry.
fn open(path: &Path) -> Result<Box<dyn Read + Send>, TraceError> {
    Ok(if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(File::open(path).map_err(io_error(path))?)
    })
}

/// Bytes peeked from a reader, and the reader with them put back in front.
type Peeked<R> = (Vec<u8>, Chain<Cursor<Vec<u8>>, R>);

/// The first `n` bytes of `r` (fewer only at its end), however its reads are chunked (a pipe
/// may deliver one byte at a time), and `r` with them put back in front (buffered like `r`
/// when `r` is).
fn peek<R: Read>(mut r: R, n: usize) -> std::io::Result<Peeked<R>> {
    let mut head = Vec::with_capacity(n);
    r.by_ref().take(n as u64).read_to_end(&mut head)?;
    Ok((head.clone(), Cursor::new(head).chain(r)))
}

/// Buffers `raw`, decompressing gzip (detected by its magic bytes, peeked and put back).
fn decompress(
    path: &Path,
    raw: Box<dyn Read + Send>,
) -> Result<Box<dyn BufRead + Send>, TraceError> {
    let (head, raw) = peek(raw, 2).map_err(io_error(path))?;
    Ok(if head == [0x1f, 0x8b] {
        Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(raw)))
    } else {
        Box::new(BufReader::with_capacity(1 << 16, raw))
    })
}

impl TraceReader {
    /// Opens a trace, detecting its format from the first lines unless `opts.format` is set.
    ///
    /// # Errors
    /// [`TraceError::Io`] if unreadable, [`TraceError::Empty`] for an empty file,
    /// [`TraceError::UnknownFormat`] if nothing matches.
    pub fn open(path: &Path, opts: TraceOptions) -> Result<Self, TraceError> {
        Self::from_reader(path, open(path)?, opts)
    }

    /// Reads a trace from any byte source (plain or gzip); `name` stands for it in messages.
    ///
    /// # Errors
    /// As [`TraceReader::open`].
    pub fn from_reader(
        name: &Path,
        raw: Box<dyn Read + Send>,
        opts: TraceOptions,
    ) -> Result<Self, TraceError> {
        let path = name;
        let consumed = Arc::new(AtomicU64::new(0));
        let raw = Box::new(Counting {
            inner: raw,
            n: Arc::clone(&consumed),
        });
        let mut input = decompress(path, raw)?;
        let format = match opts.format {
            Some(f) => f,
            None => {
                // A whole binary vSCSI record, however the source chunks its reads.
                let (head, rest) =
                    peek(input, formats::VSCSI_RECORD_BYTES).map_err(io_error(path))?;
                input = Box::new(rest);
                if head.is_empty() {
                    return Err(TraceError::Empty {
                        path: path.to_path_buf(),
                    });
                }
                if formats::looks_like_vscsi_bin(&head) {
                    Format::VscsiBin
                } else {
                    // Detection reads the first lines; they are put back in front of the rest.
                    let (format, sample) = detect::detect(path, &mut input)?;
                    input = Box::new(Cursor::new(sample).chain(input));
                    format
                }
            }
        };
        let format = match (format, opts.blk_action) {
            (Format::Blktrace(_), Some(a)) => Format::Blktrace(a),
            (f, _) => f,
        };
        Ok(TraceReader {
            path: path.to_path_buf(),
            input,
            unit: opts.time_unit.unwrap_or(format.default_unit()),
            format,
            opts,
            buf: Vec::with_capacity(256),
            first_ns: None,
            last_ns: 0,
            counts: TraceCounts::default(),
            done: false,
            consumed,
        })
    }

    /// The format in use.
    pub fn format(&self) -> Format {
        self.format
    }

    /// A counter of the bytes taken from the source so far (compressed bytes for gzip), which
    /// stays readable while the reader is lent to a simulation.
    pub fn consumed(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.consumed)
    }

    /// Reads the next text line into `buf`; `None` at the end of the file.
    fn next_line(&mut self) -> Result<Option<std::borrow::Cow<'_, str>>, TraceError> {
        self.buf.clear();
        let n = Read::take(&mut self.input, MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| self.read_error(source))?;
        if n == 0 {
            self.done = true;
            return Ok(None);
        }
        self.counts.lines += 1;
        let line_no = self.counts.lines;
        if n as u64 > MAX_LINE_BYTES {
            return Err(TraceError::Parse {
                path: self.path.clone(),
                line: line_no,
                field: "line",
                expected: format!(
                    "a line of at most {MAX_LINE_BYTES} bytes (is this a binary file?)"
                ),
                found: formats::printable(&String::from_utf8_lossy(&self.buf[..40])),
            });
        }
        Ok(Some(String::from_utf8_lossy(&self.buf)))
    }

    /// Reads the next binary vSCSI record; `None` at the end of the file.
    fn next_vscsi_record(&mut self) -> Result<Option<formats::LineResult>, TraceError> {
        let mut rec = [0u8; formats::VSCSI_RECORD_BYTES];
        let mut got = 0;
        while got < rec.len() {
            let n = match self.input.read(&mut rec[got..]) {
                Ok(n) => n,
                Err(source) => return Err(self.read_error(source)),
            };
            if n == 0 {
                break;
            }
            got += n;
        }
        if got == 0 {
            self.done = true;
            return Ok(None);
        }
        self.counts.lines += 1;
        if got < rec.len() {
            return Err(TraceError::Parse {
                path: self.path.clone(),
                line: self.counts.lines,
                field: "record",
                expected: format!("a whole {}-byte record", rec.len()),
                found: format!("{got} trailing bytes"),
            });
        }
        Ok(Some(formats::vscsi_record(&rec, self.unit)))
    }

    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if self.done || self.opts.limit.is_some_and(|l| self.counts.requests >= l) {
                return Ok(None);
            }
            let parsed = if self.format == Format::VscsiBin {
                match self.next_vscsi_record()? {
                    Some(r) => r,
                    None => return self.end(),
                }
            } else {
                let (format, unit) = (self.format, self.unit);
                match self.next_line()? {
                    Some(line) => formats::parse_line(format, unit, &line),
                    None => return self.end(),
                }
            };
            let line_no = self.counts.lines;
            let rec = match parsed {
                Ok(Some(r)) => r,
                Ok(None) => {
                    self.counts.skipped_framing += 1;
                    continue;
                }
                Err(_) if self.opts.lenient => {
                    self.counts.skipped_malformed += 1;
                    continue;
                }
                Err(e) => return Err(e.at(&self.path, line_no)),
            };
            if self.opts.device.is_some_and(|d| d != rec.device) {
                self.counts.filtered_device += 1;
                continue;
            }
            if rec.size_bytes == 0 {
                self.counts.skipped_zero_size += 1;
                continue;
            }
            if rec.size_bytes > MAX_REQUEST_BYTES {
                let expected = format!("a request size of at most {MAX_REQUEST_BYTES} bytes");
                self.refuse(line_no, "size", expected, rec.size_bytes.to_string())?;
                continue;
            }
            if rec.offset_bytes.checked_add(rec.size_bytes).is_none() {
                let expected = "an offset whose request ends below 2^64 bytes".to_string();
                self.refuse(line_no, "offset", expected, rec.offset_bytes.to_string())?;
                continue;
            }
            if self.counts.skipped_head < self.opts.skip {
                self.counts.skipped_head += 1;
                continue;
            }
            let first = *self.first_ns.get_or_insert(rec.time_ns);
            // Before the first record's time or the previous one's: clamped (and counted).
            let since = rec.time_ns.checked_sub(first);
            let mut t = since.unwrap_or(0).min(u128::from(u64::MAX)) as u64;
            if since.is_none() || t < self.last_ns {
                self.counts.clamped_timestamps += 1;
                t = t.max(self.last_ns);
            }
            let gap = t - self.last_ns;
            if gap > self.counts.longest_gap.0 {
                self.counts.longest_gap = (gap, line_no);
            }
            self.counts.span_ns = t;
            self.last_ns = t;
            self.counts.requests += 1;
            return Ok(Some(Request {
                time_ns: t,
                offset_bytes: rec.offset_bytes,
                size_bytes: rec.size_bytes,
                op: rec.op,
                device: rec.device,
                content: rec.content,
                flow: 0,
            }));
        }
    }
}

impl TraceReader {
    /// A read of the next line (or record) failed.
    fn read_error(&self, source: std::io::Error) -> TraceError {
        TraceError::ReadAt {
            path: self.path.clone(),
            line: self.counts.lines + 1,
            source,
        }
    }

    /// A record the reader cannot use: skipped and counted with `lenient`, else the error.
    fn refuse(
        &mut self,
        line: u64,
        field: &'static str,
        expected: String,
        found: String,
    ) -> Result<(), TraceError> {
        if self.opts.lenient {
            self.counts.skipped_malformed += 1;
            return Ok(());
        }
        Err(TraceError::Parse {
            path: self.path.clone(),
            line,
            field,
            expected,
            found,
        })
    }

    /// The end of the input: an error naming what became of the records when none of them
    /// was a request to replay.
    fn end(&mut self) -> Result<Option<Request>, TraceError> {
        self.done = true;
        if self.counts.requests > 0 {
            return Ok(None);
        }
        let c = &self.counts;
        let mut parts = vec![format!("{} line(s) read", c.lines)];
        for (n, what) in [
            (c.filtered_device, "of other devices than --device"),
            (c.skipped_head, "left out by --skip"),
            (c.skipped_zero_size, "of size 0"),
            (c.skipped_malformed, "malformed (skipped by --lenient)"),
            (c.skipped_framing, "not records (blank, comments, headers)"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        Err(TraceError::NoRequests {
            path: self.path.clone(),
            why: parts.join(", "),
        })
    }
}

impl Iterator for TraceReader {
    type Item = Result<Request, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        match self.next_request() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
