//! Format detection: the format whose parser accepts most of the first lines wins.

use super::formats::{parse_line, Format};
use super::TraceError;
use std::io::BufRead;
use std::path::Path;

const SAMPLE_LINES: usize = 64;

/// Most bytes detection reads looking for its sample lines (blank lines do not count towards
/// them): an endless stream of blank lines is given up on here.
const SAMPLE_BYTES: usize = 1 << 20;

/// Detects the format of `input` from its first lines; returns it and the bytes it read (the
/// caller replays them before the rest).
pub(super) fn detect(
    path: &Path,
    input: &mut (dyn BufRead + Send),
) -> Result<(Format, Vec<u8>), TraceError> {
    let mut lines = Vec::new();
    let mut sample = Vec::new();
    while lines.len() < SAMPLE_LINES && sample.len() < SAMPLE_BYTES {
        let start = sample.len();
        let n = std::io::Read::take(&mut *input, super::MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut sample)
            .map_err(super::io_error(path))?;
        // End of file, or an overlong line the reader will report with its line number.
        if n == 0 || n as u64 > super::MAX_LINE_BYTES {
            break;
        }
        let line = String::from_utf8_lossy(&sample[start..]).into_owned();
        if !line.trim().is_empty() {
            lines.push(line);
        }
    }
    let parsed = |f: Format| -> Vec<_> {
        lines
            .iter()
            .filter_map(|l| parse_line(f, f.default_unit(), l).ok().flatten())
            .collect()
    };
    // Both read five numeric columns: DiskSim sizes are sectors, FlashNet sizes are bytes, which
    // are always multiples of 512 (so the DiskSim reading would be multiples of 512 × 512).
    let five = parsed(Format::Disksim);
    let bytes_like = !five.is_empty() && five.iter().all(|r| r.size_bytes % (512 * 512) == 0);
    let score = |f: Format| {
        // blkparse output mixes events of many actions and a summary: count event-shaped lines.
        let n = if matches!(f, Format::Blktrace(_)) {
            lines
                .iter()
                .filter(|l| super::formats::is_blktrace_event(l))
                .count()
        } else {
            parsed(f).len()
        };
        match f {
            Format::Disksim if bytes_like => 0,
            Format::Flashnet if !bytes_like => 0,
            _ => n,
        }
    };
    let (best, n) = Format::ALL
        .into_iter()
        .map(|f| (f, score(f)))
        .fold((Format::Msr, 0), |acc, x| if x.1 > acc.1 { x } else { acc });
    if n == 0 || n * 2 < lines.len() {
        return Err(TraceError::UnknownFormat {
            path: path.to_path_buf(),
        });
    }
    Ok((best, sample))
}
