//! SSDSim's pre-processing (`precondition.pre_process`): before the run, every page the
//! workload reads before writing it is programmed, untimed, at the level the level policy
//! picks for it. SSDSim (Hu et al., ICS 2011 / IEEE TC 2013) scans the trace first and writes
//! such pages so that no read finds its page unwritten; here the fill comes first and
//! pre-processing then writes those pages again, so their level is the policy's and not the
//! fill's.
//!
//! The policy classes a page by its references in the whole workload (the read share against
//! `voltage.hot_threshold`, as the device buffer classes an evicted page by its references
//! while cached): the pre-processing pass sees the whole trace, the buffer only a window.

use super::policy::Policies;
use super::SimError;
use crate::buffer::Evicted;
use crate::ftl::precondition::PreconditionError;
use crate::ftl::Ftl;
use crate::workload::{IoOp, Requests};
use rustc_hash::FxHashMap;

/// Distinct pages the pass keeps counts for (about 16 bytes each); a workload touching more is
/// refused rather than exhausting memory.
pub const MAX_PAGES: usize = 1 << 26;

/// A page read before any write of it, with its references in the whole workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PreRead {
    pub lpn: u32,
    pub reads: u32,
    pub writes: u32,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    /// 1 + order of its first read if that came before any write; 0 otherwise.
    first_read: u32,
    written: bool,
    reads: u32,
    writes: u32,
}

/// The pages `requests` reads before writing them, in the order of their first read; pages
/// are `page_bytes` long and folded onto `logical` pages, each flow's onto its own space
/// (`spaces`), as the run folds them.
///
/// # Errors
/// The workload's own errors, and [`SimError::PreProcess`] past [`MAX_PAGES`] distinct pages.
pub(super) fn scan(
    requests: &mut Requests,
    page_bytes: u64,
    logical: u64,
    spaces: &super::flows::Spaces,
) -> Result<Vec<PreRead>, SimError> {
    let mut pages: FxHashMap<u32, Counts> = FxHashMap::default();
    let mut order = 0u32;
    for r in requests {
        let r = r?;
        let first = r.offset_bytes / page_bytes;
        let end = r
            .offset_bytes
            .saturating_add(r.size_bytes)
            .div_ceil(page_bytes);
        let share = spaces.pages(r.flow, logical);
        // A request longer than its space touches each page once per pass over it; one pass
        // gives the same first-read order and classes as more.
        for page in first..end.min(first.saturating_add(share)) {
            let lpn = spaces.lpn(r.flow, page, logical);
            if pages.len() >= MAX_PAGES && !pages.contains_key(&lpn) {
                return Err(SimError::PreProcess(format!(
                    "the workload touches more than {MAX_PAGES} distinct pages; pre-process a shorter prefix or turn precondition.pre_process off"
                )));
            }
            let c = pages.entry(lpn).or_default();
            if r.op == IoOp::Read {
                c.reads = c.reads.saturating_add(1);
                if !c.written && c.first_read == 0 {
                    order += 1;
                    c.first_read = order;
                }
            } else {
                c.writes = c.writes.saturating_add(1);
                c.written = true;
            }
        }
    }
    let mut out: Vec<(u32, PreRead)> = pages
        .into_iter()
        .filter(|(_, c)| c.first_read > 0)
        .map(|(lpn, c)| {
            (
                c.first_read,
                PreRead {
                    lpn,
                    reads: c.reads,
                    writes: c.writes,
                },
            )
        })
        .collect();
    out.sort_unstable_by_key(|&(o, _)| o);
    Ok(out.into_iter().map(|(_, p)| p).collect())
}

/// Programs each pre-read page at its level (the level policy hears the page's class, as at
/// an eviction from the device buffer); returns the pages written.
///
/// # Errors
/// [`PreconditionError`] if a plane fills up with valid data.
pub(super) fn write(
    ftl: &mut Ftl,
    policies: &mut Policies,
    hot_threshold: f64,
    pre: &[PreRead],
) -> Result<u64, PreconditionError> {
    for p in pre {
        let class = Evicted {
            lpn: p.lpn,
            dirty: false,
            reads: p.reads,
            writes: p.writes,
            sectors: 0,
        }
        .hotness(hot_threshold);
        ftl.pre_write(p.lpn, policies.classified(p.lpn, class))?;
    }
    Ok(pre.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Request;

    fn req(op: IoOp, page: u64, pages: u64) -> Result<Request, crate::workload::trace::TraceError> {
        Ok(Request {
            time_ns: 0,
            offset_bytes: page * 4096,
            size_bytes: pages * 4096,
            op,
            device: 0,
            content: None,
            flow: 0,
        })
    }

    #[test]
    fn pages_read_before_written_in_first_read_order_with_whole_counts() {
        use IoOp::{Read as R, Write as W};
        // Page 5 is written first (not pre-read); 7 and 8 are read first; 12 wraps onto 2.
        let mut it = [
            req(W, 5, 1),
            req(R, 5, 1),
            req(R, 8, 1),
            req(R, 7, 2),
            req(W, 8, 1),
            req(R, 12, 1),
            req(R, 7, 1),
        ]
        .into_iter();
        let pre = scan(&mut it, 4096, 10, &super::super::flows::Spaces::Equal(1)).unwrap();
        let got: Vec<_> = pre.iter().map(|p| (p.lpn, p.reads, p.writes)).collect();
        assert_eq!(got, vec![(8, 2, 1), (7, 2, 0), (2, 1, 0)]);
    }
}
