//! `ssdlab trace stats`: one streaming pass over a trace (or a synthetic stream): counts,
//! footprint and the interference-relevant [`Profile`].

use super::{TraceCounts, TraceError, TraceReader};
use crate::workload::profile::{Profile, Profiler};
use crate::workload::{IoOp, Request};
use rangemap::RangeSet;

/// Summary statistics of a trace (`ssdlab trace stats`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct TraceStats {
    /// Format used.
    pub format: String,
    /// Requests.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Percentage of reads.
    pub read_pct: f64,
    /// Mean request size, bytes.
    pub mean_size_bytes: f64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Distinct 4 KiB blocks touched (footprint), in bytes.
    pub footprint_bytes: u64,
    /// Lowest byte address.
    pub min_offset_bytes: u64,
    /// Highest end address.
    pub max_end_bytes: u64,
    /// Time from first to last arrival, s.
    pub duration_s: f64,
    /// Mean inter-arrival time, µs.
    pub mean_interarrival_us: f64,
    /// Reader counters.
    pub counts: TraceCounts,
    /// Burstiness, popularity, reuse, page types, sizes and sequentiality.
    pub profile: Profile,
}

/// Streams a whole trace once and summarises it. The footprint is counted exactly as a set of
/// disjoint runs of 4 KiB blocks (merged as requests touch them), so memory grows with the
/// number of separate runs touched, never with request sizes (a 1 GiB request is one run) or
/// the trace's length; the profile's page table grows with the distinct pages touched, up to
/// its stated cap.
///
/// # Errors
/// Any [`TraceError`] of the reader.
pub fn stats(mut reader: TraceReader) -> Result<TraceStats, TraceError> {
    let format = reader.format().name().to_string();
    let mut s = summarise(reader.by_ref(), format)?;
    s.counts = reader.counts.clone();
    Ok(s)
}

/// Summarises any request stream (`format` names it in the output); reader counters are left
/// empty.
///
/// # Errors
/// The stream's first error.
pub fn summarise<E>(
    requests: impl Iterator<Item = Result<Request, E>>,
    format: String,
) -> Result<TraceStats, E> {
    let mut s = TraceStats {
        format,
        min_offset_bytes: u64::MAX,
        ..Default::default()
    };
    let mut blocks = Footprint::default();
    let mut profiler = Profiler::default();
    let mut last = 0;
    for r in requests {
        let r = r?;
        s.requests += 1;
        let end = r.offset_bytes.saturating_add(r.size_bytes);
        match r.op {
            IoOp::Read => {
                s.reads += 1;
                s.read_bytes += r.size_bytes;
            }
            IoOp::Write => s.write_bytes += r.size_bytes,
        }
        s.min_offset_bytes = s.min_offset_bytes.min(r.offset_bytes);
        s.max_end_bytes = s.max_end_bytes.max(end);
        blocks.add(r.offset_bytes, end);
        profiler.add(&r);
        last = r.time_ns;
    }
    if s.requests > 0 {
        s.read_pct = 100.0 * s.reads as f64 / s.requests as f64;
        s.mean_size_bytes = (s.read_bytes + s.write_bytes) as f64 / s.requests as f64;
        s.duration_s = last as f64 / 1e9;
        if s.requests > 1 {
            s.mean_interarrival_us = last as f64 / 1e3 / (s.requests - 1) as f64;
        }
    } else {
        s.min_offset_bytes = 0;
    }
    s.footprint_bytes = blocks.bytes();
    s.profile = profiler.finish();
    Ok(s)
}

/// Distinct 4 KiB blocks touched, kept as disjoint runs.
#[derive(Debug, Default)]
struct Footprint(RangeSet<u64>);

impl Footprint {
    /// Bytes `[start, end)` were touched.
    fn add(&mut self, start: u64, end: u64) {
        let run = start / 4096..end.div_ceil(4096);
        if !run.is_empty() {
            self.0.insert(run);
        }
    }

    /// The footprint in bytes (whole blocks).
    fn bytes(&self) -> u64 {
        self.0.iter().map(|r| r.end - r.start).sum::<u64>() * 4096
    }
}

#[cfg(test)]
mod tests {
    use super::Footprint;
    use std::collections::BTreeSet;

    proptest::proptest! {
        #[test]
        fn footprint_counts_each_block_once(
            reqs in proptest::collection::vec((0u64..1 << 20, 1u64..40_000), 1..60)
        ) {
            let mut f = Footprint::default();
            let mut blocks = BTreeSet::new();
            for (offset, size) in reqs {
                f.add(offset, offset + size);
                blocks.extend(offset / 4096..(offset + size).div_ceil(4096));
            }
            proptest::prop_assert_eq!(f.bytes(), blocks.len() as u64 * 4096);
        }
    }

    #[test]
    fn a_huge_request_is_one_run() {
        let mut f = Footprint::default();
        for i in 0..1000u64 {
            f.add(i << 30, (i + 1) << 30);
        }
        assert_eq!(f.bytes(), 1000 << 30);
        assert_eq!(f.0.iter().count(), 1);
    }
}
