//! Workloads: streaming trace readers and the seeded synthetic generator.

pub mod extend;
pub mod fit;
pub mod flows;
pub mod profile;
pub mod synth;
pub mod trace;

/// Direction of a host request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    /// Read.
    Read,
    /// Write.
    Write,
}

/// One host request as read from a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Arrival time, ns from the first request of the workload.
    pub time_ns: u64,
    /// Start address in bytes.
    pub offset_bytes: u64,
    /// Length in bytes (> 0).
    pub size_bytes: u64,
    /// Read or write.
    pub op: IoOp,
    /// Device / disk number / ASU from the trace (0 if the format has none).
    pub device: u32,
    /// Content fingerprint of the data (FIU IODedup MD5), kept for the dedup layer.
    pub content: Option<u128>,
    /// The I/O flow (tenant) the request belongs to: its index in the run's flows, 0 when the
    /// run has one ([`flows`]).
    pub flow: u16,
}

impl Request {
    /// Content fingerprint of page `k` of the request, if the trace gives contents.
    pub fn page_print(&self, k: u64) -> Option<u64> {
        self.content.map(|c| crate::dedup::page_fingerprint(c, k))
    }
}

/// Any source of requests (trace reader or generator).
pub type Requests<'a> = dyn Iterator<Item = Result<Request, trace::TraceError>> + 'a;

/// Writes a stream as MSR Cambridge CSV (hostname `synth`, disk 0, response 0; times from
/// 2007-02-22 like the MSR traces); returns the requests written.
///
/// # Errors
/// I/O errors of `out`, or the stream's own first error.
pub fn write_msr_csv<E: std::fmt::Display>(
    requests: impl Iterator<Item = Result<Request, E>>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<u64> {
    let base: u64 = 128_166_372_000_000_000;
    let mut n = 0;
    for r in requests {
        let r = r.map_err(|e| std::io::Error::other(e.to_string()))?;
        let op = if r.op == IoOp::Read { "Read" } else { "Write" };
        writeln!(
            out,
            "{},synth,0,{op},{},{},0",
            base + r.time_ns / 100,
            r.offset_bytes,
            r.size_bytes
        )?;
        n += 1;
    }
    Ok(n)
}

/// `total` split over `weights` in proportion, rounded so the parts sum to `total` (largest
/// remainders first).
pub(crate) fn apportion(weights: &[f64], total: u64) -> Vec<u64> {
    let sum: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights.iter().map(|w| w / sum * total as f64).collect();
    let mut counts: Vec<u64> = exact.iter().map(|x| x.floor() as u64).collect();
    let mut short = total.saturating_sub(counts.iter().sum());
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| {
        (exact[b] - exact[b].floor())
            .total_cmp(&(exact[a] - exact[a].floor()))
            .then(a.cmp(&b))
    });
    for i in order {
        if short == 0 {
            break;
        }
        if weights[i] > 0.0 {
            counts[i] += 1;
            short -= 1;
        }
    }
    counts
}

#[cfg(test)]
mod apportion_tests {
    use super::apportion;

    #[test]
    fn apportioned_counts_sum_and_follow_the_weights() {
        assert_eq!(apportion(&[1.0, 0.0, 3.0], 10), [3, 0, 7]);
        assert_eq!(apportion(&[1.0, 1.0, 1.0], 10).iter().sum::<u64>(), 10);
        assert_eq!(apportion(&[0.0, 2.0], 5), [0, 5]);
    }
}
