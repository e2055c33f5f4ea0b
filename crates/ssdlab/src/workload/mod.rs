//! Workloads: streaming trace readers and the seeded synthetic generator.

pub mod fit;
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
}

impl Request {
    /// Content fingerprint of page `k` of the request, if the trace gives contents.
    pub fn page_print(&self, k: u64) -> Option<u64> {
        self.content.map(|c| crate::dedup::page_fingerprint(c, k))
    }
}

/// Any source of requests (trace reader or generator).
pub type Requests<'a> = dyn Iterator<Item = Result<Request, trace::TraceError>> + 'a;
